extension OptionTable {
    /// What pinfetch prints, and the invocations that print instead of fetching.
    static let output: [OptionSpec] = [
        OptionSpec("--json", help: ["one JSON object per file on stdout"]) { arguments, _ in
            arguments.json = true
        },
        OptionSpec(
            "--quiet",
            short: "-q",
            help: ["no progress, no retry lines, nothing on success; errors and warnings", "still go to stderr"]
        ) { arguments, _ in
            arguments.quiet = true
        },
        OptionSpec(
            "--verbose",
            short: "-v",
            help: ["each request, the answers' deciding fields and each decision"]
        ) { arguments, _ in
            arguments.verbose = true
        },
        OptionSpec(
            "--dry-run",
            help: [
                "say what would be fetched (names, pins, mirrors, already complete,",
                "cached, a copy of an entry pinned the same, resumable) without fetching",
            ]
        ) { arguments, _ in
            arguments.dryRun = true
        },
        OptionSpec("--help", short: "-h", help: ["this text"]) { arguments, _ in
            arguments.action = .help
        },
        OptionSpec("--version", short: "-V", help: ["the version"]) { arguments, _ in
            arguments.action = .version
        },
    ]
}
