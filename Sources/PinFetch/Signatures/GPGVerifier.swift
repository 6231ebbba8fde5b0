import FoundationEssentials
@preconcurrency import Glibc

/// Checks an OpenPGP signature with Debian's `gpgv` (what apt uses), run as a child process
/// (`posix_spawn`) in a private temporary directory (mode 0700) that is its home and holds a
/// keyring of the trusted keys only, never the user's. The verdict is read from
/// `gpgv`'s machine-readable status lines (`--status-fd`, GnuPG's `doc/DETAILS`): a `VALIDSIG`
/// whose primary key fingerprint is a trusted key's; never from its exit status alone. For a
/// clear-signed file the text used afterwards is the one `gpgv` verified (`--output`), so
/// lines outside the signed part cannot slip in.
struct GPGVerifier {
    /// The trusted keys' packets (a binary keyring).
    let keyring: [UInt8]

    /// What a verified signature gives: who signed, and the signed bytes.
    struct Verified {
        let signer: String
        let content: [UInt8]
    }

    /// Checks a detached signature (binary `.sig` or armoured `.asc`) of `data`.
    /// - Throws: ``PinFetchError/Code/digestMismatch`` when no trusted key's signature
    ///   verifies; ``PinFetchError/Code/generic`` when `gpgv` cannot run.
    func verify(detached signature: [UInt8], of data: [UInt8]) throws(PinFetchError) -> Verified {
        try self.run(files: ["signature": signature, "data": data], arguments: ["signature", "data"], signed: data)
    }

    /// Checks a clear-signed file and returns the text it signs.
    /// - Throws: as ``verify(detached:of:)``.
    func verify(clearSigned: [UInt8]) throws(PinFetchError) -> Verified {
        try self.run(
            files: ["clearsigned": clearSigned],
            arguments: ["--output", "signed", "clearsigned"],
            signed: nil
        )
    }

    /// Writes `files` in a private directory, runs `gpgv` there, and judges its status lines.
    /// - Parameter signed: The signed bytes, or `nil` to take what `gpgv` wrote to `signed`.
    private func run(
        files: [String: [UInt8]],
        arguments: [String],
        signed: [UInt8]?
    ) throws(PinFetchError) -> Verified {
        guard let gpgv = Self.executable() else {
            throw PinFetchError(.generic, "gpgv is needed to check an OpenPGP signature (Debian: apt-get install gpgv)")
        }
        let fingerprints = try Self.primaryFingerprints(self.keyring)
        let directory = try TemporaryDirectory.make(prefix: "pinfetch-gpgv-")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for (name, bytes) in files.merging(["trusted.gpg": self.keyring], uniquingKeysWith: { a, _ in a }) {
            guard FileManager.default.createFile(atPath: directory + "/" + name, contents: Data(bytes)) else {
                throw PinFetchError(.fileIO, "cannot write \(directory)/\(name)")
            }
        }
        let status = try Self.spawn(
            gpgv,
            ["gpgv", "--homedir", directory, "--keyring", directory + "/trusted.gpg", "--status-fd", "3"]
                + arguments.map { $0.hasPrefix("--") ? $0 : directory + "/" + $0 },
            in: directory
        )
        let verdict = Self.verdict(status, trusted: fingerprints)
        switch verdict {
        case .valid(let fingerprint):
            if let signed { return Verified(signer: "OpenPGP key \(fingerprint)", content: signed) }
            guard let data = FileManager.default.contents(atPath: directory + "/signed") else {
                throw PinFetchError(.digestMismatch, "gpgv verified the signature but wrote no signed text")
            }
            return Verified(signer: "OpenPGP key \(fingerprint)", content: Array(data))
        case .invalid(let reason):
            throw PinFetchError(.digestMismatch, reason)
        }
    }

    enum Verdict: Equatable {
        case valid(String)
        case invalid(String)
    }

    /// The verdict of `gpgv`'s status lines (`[GNUPG:] KEYWORD ARGS`): valid when a `VALIDSIG`
    /// names a trusted primary key fingerprint (its tenth argument, GnuPG 2.x) and its signing
    /// key is neither expired nor revoked (`EXPKEYSIG`, `REVKEYSIG`, and an expired signature,
    /// `EXPSIG`, are refused, as apt refuses them); else why not, in words, naming the key the
    /// signature says made it.
    static func verdict(_ status: String, trusted: Set<String>) -> Verdict {
        var bad: String?
        var unknown: String?
        var spoiled: String?
        // Each signature's lines follow a NEWSIG line (GnuPG 2.1 and later): one is judged by
        // its own lines, so an expired signature next to a good one does not spoil that one.
        var groups: [[[String]]] = [[]]
        for line in status.split(separator: "\n") {
            let fields = line.split(separator: " ").map(String.init)
            guard fields.count >= 2, fields[0] == "[GNUPG:]" else { continue }
            if fields[1] == "NEWSIG" {
                groups.append([])
            } else {
                groups[groups.count - 1].append(fields)
            }
        }
        for group in groups {
            var valid: String?
            var why: String?
            for fields in group where fields.count >= 3 {
                switch fields[1] {
                case "VALIDSIG": valid = (fields.count >= 12 ? fields[11] : fields[2]).uppercased()
                case "BADSIG": bad = fields[2]
                case "ERRSIG", "NO_PUBKEY": unknown = fields[2]
                case "EXPKEYSIG": why = "OpenPGP key \(fields[2]), which has expired"
                case "REVKEYSIG": why = "OpenPGP key \(fields[2]), which was revoked"
                case "EXPSIG": why = "OpenPGP key \(fields[2]), in a signature that has expired"
                default: break
                }
            }
            guard let valid, trusted.contains(valid) else { continue }
            if let why {
                spoiled = why
                continue
            }
            return .valid(valid)
        }
        if let spoiled { return .invalid("the checksum file is signed by \(spoiled)") }
        if let bad {
            return .invalid(
                "the OpenPGP signature by key \(bad) does not verify: the checksum file is not the one signed"
            )
        }
        if let unknown {
            return .invalid("the checksum file is signed by OpenPGP key \(unknown), which is not trusted")
        }
        return .invalid("the checksum file has no valid OpenPGP signature (none, or one gpgv cannot read)")
    }

    /// The version 4 fingerprints of the primary keys in `keyring`.
    static func primaryFingerprints(_ keyring: [UInt8]) throws(PinFetchError) -> Set<String> {
        Set(
            try OpenPGPArmor.packets(keyring).filter { $0.tag == 6 }.compactMap {
                OpenPGPFingerprint.of(keyPacketBody: $0.body)
            }
        )
    }

    /// Debian's `/usr/bin/gpgv`, else `gpgv` on the `PATH`.
    static func executable() -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        for directory in ["/usr/bin"] + path.split(separator: ":").map(String.init) where directory.hasPrefix("/") {
            let candidate = directory + "/gpgv"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }

    /// Runs `executable` with `arguments` (standard input, output and error on `/dev/null`) and
    /// returns what it wrote to file descriptor 3.
    static func spawn(
        _ executable: String,
        _ arguments: [String],
        in directory: String
    ) throws(PinFetchError)
        -> String
    {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw PinFetchError(.generic, "pipe: \(String(cString: strerror(errno)))") }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }  // fd 3 in the child is a dup2, kept open
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, fds[1], 3)
        var environment = ["LC_ALL=C", "GNUPGHOME=\(directory)"]
        if let path = ProcessInfo.processInfo.environment["PATH"] { environment.append("PATH=\(path)") }
        var pid: pid_t = 0
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        let spawned = posix_spawn(&pid, executable, &actions, nil, argv, envp)
        close(fds[1])
        guard spawned == 0 else {
            close(fds[0])
            throw PinFetchError(.generic, "cannot run \(executable): \(String(cString: strerror(spawned)))")
        }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while bytes.count < 1 << 20 {
            let count = buffer.withUnsafeMutableBytes { read(fds[0], $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            if count <= 0 { break }
            bytes += buffer[0..<count]
        }
        close(fds[0])
        var exitStatus: Int32 = 0
        while waitpid(pid, &exitStatus, 0) < 0, errno == EINTR {}
        return String(decoding: bytes, as: UTF8.self)
    }
}
