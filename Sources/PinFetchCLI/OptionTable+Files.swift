import PinFetch

extension OptionTable {
    /// Where files go, how many there are, and how they are fetched at once.
    static let files: [OptionSpec] = [
        OptionSpec(
            "--output",
            short: "-o",
            .value(placeholder: "PATH"),
            help: ["destination (default: last segment of the URL path)"]
        ) { arguments, option throws(ArgumentError) in
            guard arguments.output == nil else { throw .conflict(.secondOutput(option.spelling)) }
            let path = try option.nonEmpty(needs: "a path")
            // curl's and wget's idiom for standard output: a name of this process's descriptor,
            // which a rename would replace (as root, /dev/stdout itself).
            arguments.output = ["/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"].contains(path) ? "-" : path
        },
        OptionSpec(
            "--directory-prefix",
            short: "-P",
            .value(placeholder: "DIR"),
            help: ["put outputs under DIR (a relative -o too)"]
        ) { arguments, option throws(ArgumentError) in
            guard arguments.directory == nil else { throw .conflict(.secondDirectory(option.spelling)) }
            arguments.directory = try option.nonEmpty(needs: "a directory")
        },
        OptionSpec(
            "--input-file",
            short: "-i",
            .value(placeholder: "FILE"),
            help: ["many files: lines of 'URL [URL ...] [checksum] [output]'"]
        ) { arguments, option in
            arguments.inputFile = option.value
        },
        OptionSpec(
            "--base-url",
            .value(placeholder: "URL"),
            repeatable: true,
            help: [
                "with -i: FILE is a checksum file; each entry is fetched from URL/name",
                "and saved as name under -P (its directories kept); repeat it",
                "for mirrors of the directory, in order of preference",
            ]
        ) { arguments, option in
            arguments.baseURLs.append(option.value)
        },
        OptionSpec(
            "--shard",
            .value(placeholder: "K/N"),
            help: ["with -i: only entries whose index mod N is K"]
        ) { arguments, option throws(ArgumentError) in
            if option.value == "auto" {
                arguments.shardAutomatic = true
            } else {
                arguments.shard = try option.read(parseShard)
            }
        },
        OptionSpec(
            "--shard-count",
            .value(placeholder: "N"),
            help: ["K from JOB_COMPLETION_INDEX (a Kubernetes Indexed Job)"],
            helpColumn: "--shard auto --shard-count N"
        ) { arguments, option throws(ArgumentError) in
            arguments.shardCount = try option.wholeNumber(in: 1...Int.max, expected: "a whole number of at least 1")
        },
        OptionSpec(
            "--include",
            .value(placeholder: "GLOB"),
            repeatable: true,
            help: [
                "with -i: only entries whose name (as listed: linux/amd64/tool) matches",
                "a GLOB given (* also matches /)",
            ]
        ) { arguments, option throws(ArgumentError) in
            arguments.includes.append(try option.nonEmpty(needs: "a pattern"))
        },
        OptionSpec(
            "--exclude",
            .value(placeholder: "GLOB"),
            repeatable: true,
            help: ["with -i: no entry whose name matches GLOB (after --include)"]
        ) { arguments, option throws(ArgumentError) in
            arguments.excludes.append(try option.nonEmpty(needs: "a pattern"))
        },
        OptionSpec(
            "--jobs",
            short: "-j",
            .value(placeholder: "N"),
            help: ["downloads at once (default 1)"]
        ) { arguments, option throws(ArgumentError) in
            arguments.jobs = try option.wholeNumber(in: 1...64, expected: "a whole number from 1 to 64")
        },
        OptionSpec(
            "--max-connections-per-host",
            .value(placeholder: "N"),
            help: [
                "downloads (so connections) to one host at once, for",
                "all downloads together (default 8); over HTTP/2 one connection",
                "carries them all, and each --segments connection counts",
            ]
        ) { arguments, option throws(ArgumentError) in
            arguments.options.maximumConnectionsPerHost = try option.wholeNumber(
                in: 1...64,
                expected: "a whole number from 1 to 64"
            )
        },
        OptionSpec(
            "--segments",
            .value(placeholder: "N|auto"),
            help: [
                "fetch one large file over up to N connections (1-16, default 1;",
                "auto: up to 8, for 64 MiB or more), added while the rate",
                "rises, in pieces of 8 MiB hashed in order; needs a pin or the",
                "server's digest (Repr-Digest, x-amz-checksum-sha256,",
                "x-goog-hash), a strong validator and Accept-Ranges: bytes,",
                "else one stream",
            ]
        ) { arguments, option throws(ArgumentError) in
            if option.value == "auto" {
                (arguments.options.segments, arguments.options.segmentsAutomatic) = (8, true)
                return
            }
            let count = try option.wholeNumber(in: 1...16, expected: "'auto' or a whole number from 1 to 16")
            (arguments.options.segments, arguments.options.segmentsAutomatic) = (count, false)
        },
        OptionSpec(
            "--segment-size",
            .value(placeholder: "SIZE"),
            help: ["bytes per piece with --segments (64K to 1G, default 8M)"]
        ) { arguments, option throws(ArgumentError) in
            let size = try option.size()
            guard (64 << 10...1 << 30).contains(size) else {
                throw .badValue(option: option.spelling, expected: "a size from 64K to 1G", given: option.value)
            }
            arguments.options.segmentPieceSize = size
        },
        OptionSpec("--fail-fast", help: ["start no new file after the first failure"]) { arguments, _ in
            arguments.failFast = true
        },
    ]
}
