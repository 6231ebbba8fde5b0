import PinFetch

extension OptionTable {
    /// Retries, time and size bounds, and what each request carries: headers, credentials,
    /// certificates, proxies.
    static let network: [OptionSpec] = [
        OptionSpec(
            "--retries",
            .value(placeholder: "N"),
            help: ["attempts after the first (default 5); 0 = fail fast"]
        ) { arguments, option throws(ArgumentError) in
            arguments.options.retries = try option.wholeNumber(in: 0...1000, expected: "a whole number from 0 to 1000")
        },
        OptionSpec(
            "--retry-delay",
            .value(placeholder: "SECONDS"),
            help: ["base of the exponential back-off (default 1; 0 allowed)"]
        ) { arguments, option throws(ArgumentError) in
            arguments.options.retryDelay = try option.seconds()
        },
        OptionSpec(
            "--connect-timeout",
            .value(placeholder: "S"),
            help: ["seconds to connect (default 30)"]
        ) { arguments, option throws(ArgumentError) in
            arguments.options.connectTimeout = try option.seconds(positive: true)
        },
        OptionSpec(
            "--stall-timeout",
            .value(placeholder: "S"),
            help: ["seconds without a new byte before retrying (default 60)"]
        ) { arguments, option throws(ArgumentError) in
            arguments.options.stallTimeout = try option.seconds(positive: true)
        },
        OptionSpec(
            "--lock-timeout",
            .value(placeholder: "S"),
            help: ["seconds to wait for another pinfetch on the same file (default: forever)"]
        ) { arguments, option throws(ArgumentError) in
            arguments.options.lockTimeout = try option.seconds()
        },
        OptionSpec(
            "--max-filesize",
            .value(placeholder: "BYTES"),
            help: ["refuse a file larger than this (K, M, G: KiB, MiB, GiB); exit 7"]
        ) { arguments, option throws(ArgumentError) in
            arguments.options.maximumFileSize = try option.size()
        },
        OptionSpec(
            "--header",
            short: "-H",
            .value(placeholder: "'Name: value'"),
            repeatable: true,
            help: [
                "extra request header (repeatable; Authorization, Cookie and",
                "Proxy-Authorization are dropped when a redirect leaves the origin)",
            ],
            moreHelp: [OptionSpec.HelpRow(column: "-H @FILE", lines: ["one header per line of FILE"])]
        ) { arguments, option throws(ArgumentError) in
            let value = option.value
            arguments.options.headers +=
                try value.hasPrefix("@") ? Arguments.headers(fromFile: value) : [Arguments.header(value)]
        },
        OptionSpec(
            "--user",
            short: "-u",
            .value(placeholder: "USER:PASSWORD"),
            help: ["Basic credentials for each mirror's origin (never prompts)"]
        ) { arguments, option throws(ArgumentError) in
            arguments.options.credentials = try Arguments.credentials(option.value)
        },
        OptionSpec("--netrc", help: ["credentials from $HOME/.netrc for the host contacted"]) { arguments, _ in
            arguments.options.netrcFile = Arguments.homeNetrc
        },
        OptionSpec(
            "--netrc-file",
            .value(placeholder: "FILE"),
            help: ["credentials from FILE for the host contacted"]
        ) { arguments, option throws(ArgumentError) in
            arguments.options.netrcFile = try Arguments.readableFile(option.value, for: option.spelling)
        },
        OptionSpec(
            "--credential-helper",
            .value(placeholder: "[HOST=]PATH"),
            repeatable: true,
            help: [
                "program giving the header fields for HOST's requests (Bazel's",
                "protocol: PATH get; HOST may be *.DOMAIN; without HOST, any host)",
            ]
        ) { arguments, option throws(ArgumentError) in
            let helper: CredentialHelper
            do throws(PinFetchError) { helper = try CredentialHelper(parsing: option.value) } catch {
                throw .malformed(error.message)
            }
            guard helper.isRunnable else {
                throw .refused(option: option.spelling, reason: "'\(helper.path)' is no program that can be run")
            }
            arguments.options.credentialHelpers.append(helper)
        },
        OptionSpec(
            "--credential-helper-timeout",
            .value(placeholder: "S"),
            help: ["seconds a credential helper may run (default 10; exit 6)"]
        ) { arguments, option throws(ArgumentError) in
            arguments.options.credentialHelperTimeout = try option.seconds(positive: true)
        },
        OptionSpec(
            "--cacert",
            .value(placeholder: "FILE"),
            help: [
                "also trust the PEM certificates in FILE for HTTPS (besides",
                "CURL_CA_BUNDLE / SSL_CERT_FILE / SSL_CERT_DIR or the system's)",
            ]
        ) { arguments, option throws(ArgumentError) in
            arguments.options.caFile = try Arguments.certificateFile(option.value, for: option.spelling)
        },
        OptionSpec(
            "--cert",
            .value(placeholder: "FILE"),
            help: ["client certificate (PEM, may hold the key)"]
        ) { arguments, option throws(ArgumentError) in
            arguments.options.clientCertificateFile = try Arguments.unencryptedPEM(
                option.value,
                for: option.spelling,
                holding: .certificate
            )
        },
        OptionSpec(
            "--key",
            .value(placeholder: "FILE"),
            help: ["its private key (PEM)"]
        ) { arguments, option throws(ArgumentError) in
            arguments.options.clientKeyFile = try Arguments.unencryptedPEM(
                option.value,
                for: option.spelling,
                holding: .privateKey
            )
        },
        OptionSpec(
            "--proxy",
            short: "-x",
            .value(placeholder: "URL"),
            help: ["proxy for every request ('' for none; default: *_proxy variables)"]
        ) { arguments, option throws(ArgumentError) in
            arguments.options.proxy = try Arguments.proxy(option.value)
        },
        OptionSpec(
            "--noproxy",
            .value(placeholder: "LIST"),
            help: ["hosts reached without the proxy (comma-separated, * for all)"]
        ) { arguments, option throws(ArgumentError) in
            arguments.options.noProxy = try Arguments.hostList(option.value, for: option.spelling)
        },
        OptionSpec(
            "--max-time",
            short: "-m",
            .value(placeholder: "S"),
            help: ["seconds for each file's whole fetch, retries included (exit 4)"]
        ) { arguments, option throws(ArgumentError) in
            arguments.options.maximumTime = try option.seconds(positive: true)
        },
        OptionSpec(
            "--limit-rate",
            .value(placeholder: "RATE"),
            help: ["bytes per second for each transfer (K, M, G)"]
        ) { arguments, option throws(ArgumentError) in
            arguments.options.maximumReceiveRate = try option.size()
        },
        OptionSpec(
            "--allow-insecure-redirect",
            help: ["follow a redirect from https to http"]
        ) { arguments, _ in
            arguments.options.allowInsecureRedirect = true
        },
    ]
}
