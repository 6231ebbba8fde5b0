import PinFetch

extension OptionTable {
    /// Checksum files, the mirrors that serve files by digest, and the keys a checksum file
    /// must be signed by.
    static let checksumFiles: [OptionSpec] = [
        OptionSpec(
            "--checksum-file",
            .value(placeholder: "F|URL"),
            help: [
                "SHA256SUMS / SHA512SUMS (GNU, BSD, bare, PGP clear-signed, UTF-16);",
                "entry by the URL's path (longest suffix), else the output name",
            ]
        ) { arguments, option throws(ArgumentError) in
            if let first = arguments.pinOption { throw .conflict(.checksumFileAfterPin(first: first)) }
            arguments.pinOption = option.spelling
            arguments.checksumFile = option.value
        },
        OptionSpec(
            "--hashed-mirror",
            .value(placeholder: "TEMPLATE"),
            repeatable: true,
            help: [
                "asked first for a pinned file: {algo} and {hex} are its",
                "digest (https://tarballs.example.org/{algo}/{hex}); repeatable",
            ]
        ) { arguments, option throws(ArgumentError) in
            arguments.hashedMirrors.append(
                try option.read { template throws(PinFetchError) in try HashedMirror(template) }
            )
        },
        OptionSpec(
            "--signature",
            .value(placeholder: "F|URL"),
            help: [
                "the checksum file's detached signature (minisign, signify,",
                "OpenPGP); needs --trusted-key",
            ]
        ) { arguments, option throws(ArgumentError) in
            guard arguments.signature == nil else { throw .conflict(.secondSignature) }
            arguments.signature = option.value
        },
        OptionSpec(
            "--trusted-key",
            .value(placeholder: "FILE"),
            repeatable: true,
            help: [
                "a minisign/signify or OpenPGP public key the checksum file",
                "must be signed by (repeatable); else exit 9, nothing fetched",
            ]
        ) { arguments, option in
            arguments.trustedKeys.append(option.value)
        },
    ]

    /// The digest a single file is pinned to.
    static let pins: [OptionSpec] = [
        OptionSpec(
            "--sha256",
            .value(placeholder: "HEX"),
            help: ["pin a SHA-256 (64 hex digits, any case; sha256:HEX too)"]
        ) { arguments, option throws(ArgumentError) in
            try arguments.notePin(option)
            arguments.pin = try option.read { hex throws(PinFetchError) in try Pin(sha256Hex: hex) }
        },
        OptionSpec(
            "--checksum",
            .value(placeholder: "SPEC"),
            help: [
                "sha256:HEX | sha384:HEX | sha512:HEX | SRI metadata",
                "(sha384-BASE64 ...: any value of its strongest algorithm) | aria2's",
                "sha-256=HEX | md5:HEX, sha1:HEX (with a warning: they catch",
                "corruption, not tampering; no cache or hashed mirror for them)",
            ]
        ) { arguments, option throws(ArgumentError) in
            try arguments.notePin(option)
            arguments.pin = try option.read { spec throws(PinFetchError) in try Pin(parsing: spec) }
        },
    ]
}

extension Arguments {
    /// Notes that `option` gives the pin (`--sha256`, `--checksum`).
    /// - Throws: ``ArgumentError/Conflict/secondPin(_:after:)`` when one was given already.
    fileprivate mutating func notePin(_ option: OptionUse) throws(ArgumentError) {
        if let first = self.pinOption { throw .conflict(.secondPin(option.spelling, after: first)) }
        self.pinOption = option.spelling
    }
}
