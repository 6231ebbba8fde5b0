import PinFetch

extension OptionTable {
    /// curl's and wget's spellings of what pinfetch does, so their users' commands run: those
    /// that name what pinfetch always does are accepted and do nothing more; those that mean an
    /// option of pinfetch's set it. Where pinfetch deliberately differs the option is refused
    /// with the reason (`-k`), and ``ForeignOption`` hints at the rest.
    ///
    /// The ones that change nothing (their long spellings) are listed in ``alwaysDone``.
    static let familiar: [OptionSpec] = [
        OptionSpec(
            "--remote-name",
            short: "-O",
            help: ["name the file after the URL (curl's -O: what pinfetch does without -o)"]
        ) { arguments, _ in
            arguments.remoteName = true
        },
        OptionSpec("--location", short: "-L", help: ["follow redirects (curl's -L: always done)"]) { _, _ in },
        OptionSpec("--fail", short: "-f", help: ["an HTTP error is a failure (curl's -f: always so)"]) { _, _ in },
        OptionSpec("--show-error", short: "-S", help: ["errors go to stderr (curl's -S: always so)"]) { _, _ in },
        OptionSpec("--silent", short: "-s", help: ["the same as -q (curl's -s)"]) { arguments, _ in
            arguments.quiet = true
        },
        OptionSpec("--continue", short: "-c", help: ["resume a partial (wget's -c: always done)"]) { _, _ in },
        OptionSpec(
            "--continue-at",
            short: "-C",
            .value(placeholder: "-"),
            help: ["curl's -C -: resume (always done); an offset is refused"]
        ) { _, option throws(ArgumentError) in
            guard option.value == "-" else {
                throw .refused(
                    option: option.spelling,
                    reason: "pinfetch resumes where its checkpoint proves the bytes, not at an offset: "
                        + "give -C - or nothing"
                )
            }
        },
        OptionSpec("--create-dirs", help: ["make the output's directories (curl's: always done)"]) { _, _ in },
        OptionSpec(
            "--output-dir",
            .value(placeholder: "DIR"),
            help: ["the same as -P DIR (curl's)"]
        ) { arguments, option throws(ArgumentError) in
            try Self.same("--directory-prefix", &arguments, option)
        },
        OptionSpec(
            "--retry",
            .value(placeholder: "N"),
            help: ["the same as --retries N (curl's)"]
        ) { arguments, option throws(ArgumentError) in
            try Self.same("--retries", &arguments, option)
        },
        OptionSpec(
            "--tries",
            short: "-t",
            .value(placeholder: "N"),
            help: ["attempts in all, the first included (wget's; 0 or inf: 1001)"]
        ) { arguments, option throws(ArgumentError) in
            if option.value == "0" || option.value.lowercased() == "inf" {
                arguments.options.retries = 1000  // wget's "unlimited", to pinfetch's bound
            } else {
                let tries = try option.wholeNumber(in: 1...1001, expected: "a whole number from 1 to 1001, 0 or inf")
                arguments.options.retries = tries - 1
            }
        },
        OptionSpec(
            "--user-agent",
            short: "-A",
            .value(placeholder: "AGENT"),
            help: ["the User-Agent header"]
        ) { arguments, option throws(ArgumentError) in
            let agent = try option.nonEmpty(needs: "a user agent")
            // The last one given wins, as with curl.
            arguments.options.headers.removeAll { $0.lowercased().hasPrefix("user-agent:") }
            arguments.options.headers.append(try Arguments.header("User-Agent: " + agent, for: option.spelling))
        },
        OptionSpec(
            "--proxy-user",
            short: "-U",
            .value(placeholder: "USER:PASSWORD"),
            help: ["credentials for the proxy (curl's -U)"]
        ) { arguments, option throws(ArgumentError) in
            // wget's -U AGENT: a user agent (`Mozilla/5.0 (X11; rv:109.0)`) may hold a colon too,
            // but no user name holds a space, a slash or a parenthesis.
            let user = option.value.prefix { $0 != ":" }
            guard option.value.contains(":"), !user.contains(where: { " /(".contains($0) }) else {
                throw .refused(
                    option: option.spelling,
                    reason: "takes USER:PASSWORD for the proxy (curl's -U); wget's -U AGENT is -A AGENT here"
                )
            }
            arguments.options.proxyCredentials = try Arguments.credentials(option.value, for: option.spelling)
        },
        OptionSpec(
            "--no-clobber",
            short: "-nc",
            help: ["leave a file already at the destination as it is (wget's -nc); a", "pinned one that differs fails"]
        ) { arguments, _ in
            arguments.options.noClobber = true
        },
        OptionSpec(
            "--remote-header-name",
            short: "-J",
            help: ["the same as --content-disposition (curl's -J)"]
        ) { arguments, option throws(ArgumentError) in
            try Self.same("--content-disposition", &arguments, option)
        },
        OptionSpec(
            "--max-redirs",
            .value(placeholder: "N"),
            help: ["follow at most N redirects (curl's; wget's --max-redirect; default 10)"]
        ) { arguments, option throws(ArgumentError) in
            arguments.options.maximumRedirects = try option.wholeNumber(
                in: 0...100,
                expected: "a whole number from 0 to 100"
            )
        },
        OptionSpec("--max-redirect", .value(placeholder: "N"), help: ["the same as --max-redirs N (wget's)"]) {
            arguments,
            option throws(ArgumentError) in
            try Self.same("--max-redirs", &arguments, option)
        },
        OptionSpec(
            "--retry-connrefused",
            help: ["retry a refused connection (curl's and wget's: always done)"]
        ) { _, _ in },
        OptionSpec("--no-progress-meter", help: ["the same as -q (curl's)"]) { arguments, _ in
            arguments.quiet = true
        },
        OptionSpec(
            "--insecure",
            short: "-k",
            help: ["refused: certificate verification cannot be turned off (use --cacert)"]
        ) { _, option throws(ArgumentError) in
            throw .refused(
                option: option.spelling,
                reason: option.spelling == "-k" ? ForeignOption.shortK : ForeignOption.insecure
            )
        },
    ]

    /// Applies pinfetch's own option `long` to `option`'s value: a spelling that means the
    /// same takes its value as that option does, bounds and messages included.
    private static func same(_ long: String, _ arguments: inout Arguments, _ option: OptionUse) throws(ArgumentError) {
        try Self.option(spelled: long)!.apply(&arguments, option)
    }

    /// The long spellings of ``familiar``'s options that name what pinfetch always does, so
    /// giving them changes nothing (`-C -`, the only value `--continue-at` takes, included).
    static let alwaysDone: Set<String> = [
        "--location", "--fail", "--show-error", "--continue", "--continue-at", "--create-dirs", "--retry-connrefused",
    ]

    /// Options that are always refused, with the reason (`-k`): not offered by the shell
    /// completions.
    static let alwaysRefused: Set<String> = ["--insecure"]

    /// curl's options that only its users give (`-fsSL`). curl without `-O` or `-o` writes the
    /// body to standard output, so these without either, `-P`, `-i` or `--content-disposition`
    /// are refused rather than taken to save a file that a `| sh` after them would never see.
    static let curlStandardOutput: Set<String> = [
        "--fail", "--silent", "--show-error", "--location", "--no-progress-meter",
    ]
}
