import PinFetch

extension OptionTable {
    /// How the saved file is named and dated, and the caches asked before the mirrors.
    static let savingAndCaches: [OptionSpec] = [
        OptionSpec(
            "--content-disposition",
            help: ["name the file as the server's Content-Disposition says"]
        ) { arguments, _ in
            arguments.contentDisposition = true
        },
        OptionSpec(
            "--cache-dir",
            .value(placeholder: "DIR"),
            help: [
                "keep copies of pinned files by digest; reuse them without a",
                "request (also PINFETCH_CACHE_DIR; default: no cache)",
            ]
        ) { arguments, option throws(ArgumentError) in
            arguments.cacheDirectory = try option.nonEmpty(needs: "a directory")
        },
        OptionSpec(
            "--reverify",
            help: [
                "read a complete destination again even when its record",
                "(xattr user.pinfetch) says what it holds; refetch unpinned ones",
            ]
        ) { arguments, _ in
            arguments.options.reverify = true
        },
        OptionSpec(
            "--no-cache",
            help: ["no cache, whatever --cache-dir or PINFETCH_CACHE_DIR say"]
        ) { arguments, _ in
            arguments.noCache = true
        },
        OptionSpec(
            "--remote-cache",
            .value(placeholder: "URL"),
            help: [
                "a Bazel-style remote cache: a pinned SHA-256 file is asked for at",
                "URL/cas/HEX first, verified (also PINFETCH_REMOTE_CACHE); or",
                "s3://BUCKET/PREFIX (bazel-remote's layout)",
            ]
        ) { arguments, option throws(ArgumentError) in
            arguments.options.remoteCache = try Arguments.remoteCache(option.value, from: option.spelling)
        },
        OptionSpec(
            "--remote-cache-header",
            .value(placeholder: "'Name: value'"),
            repeatable: true,
            help: ["for the remote cache only (-H never goes there)"]
        ) { arguments, option throws(ArgumentError) in
            arguments.options.remoteCacheHeaders.append(try Arguments.remoteCacheHeader(option.value))
        },
        OptionSpec(
            "--remote-cache-timeout",
            .value(placeholder: "S"),
            help: ["connect and stall bound for the remote cache (default 5)"]
        ) { arguments, option throws(ArgumentError) in
            arguments.options.remoteCacheTimeout = try option.seconds(positive: true)
        },
        OptionSpec(
            "--remote-cache-upload",
            help: ["PUT each file verified after a download into the remote cache"]
        ) { arguments, _ in
            arguments.options.remoteCacheUpload = true
        },
        OptionSpec(
            "--no-remote-cache",
            help: ["no remote cache, whatever --remote-cache or PINFETCH_REMOTE_CACHE say"]
        ) { arguments, _ in
            arguments.noRemoteCache = true
        },
        OptionSpec(
            "--remote-time",
            short: "-R",
            help: ["set the file's mtime from Last-Modified (default with --base-url)"]
        ) { arguments, _ in
            arguments.remoteTime = true
        },
        OptionSpec("--no-remote-time", help: ["keep the time of the download"]) { arguments, _ in
            arguments.remoteTime = false
        },
    ]
}
