import Foundation
import Testing

/// OpenPGP-signed checksum files: keys made by `gpg` in a temporary `GNUPGHOME`,
/// checked by `gpgv` with a keyring of the trusted keys only.
extension SignedChecksumFileTests {
    /// A `GNUPGHOME` in `directory` with the key pairs `names`, each exported as `<name>.asc`
    /// (armoured) and `<name>.gpg` (binary); `body` runs with a function that runs `gpg` there.
    static func withGPG(
        in directory: String,
        keys names: [String],
        _ body: (_ gpg: ([String]) async throws -> Void) async throws -> Void
    ) async throws {
        let home = directory + "/gnupg"
        try FileManager.default.createDirectory(
            atPath: home,
            withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700]
        )
        let gpg: ([String]) async throws -> Void = { arguments in
            let status = try await Self.tool(
                "/usr/bin/gpg",
                ["--batch", "--yes", "--pinentry-mode", "loopback", "--passphrase", ""] + arguments,
                in: directory,
                environment: ["GNUPGHOME": home]
            )
            #expect(status == 0, "gpg \(arguments)")
        }
        for name in names {
            let user = "\(name) <\(name)@example.org>"
            try await gpg(["--quick-gen-key", user, "ed25519", "sign", "never"])
            try await gpg(["--armor", "--export", "-o", "\(directory)/\(name).asc", user])
            try await gpg(["--export", "-o", "\(directory)/\(name).gpg", user])
        }
        // The agent gpg started goes when the test ends, waited for without blocking a thread of
        // the test pool (a ChildProcess dropped at once would be stopped, blocking, in deinit).
        let result: Result<Void, any Error>
        do {
            try await body(gpg)
            result = .success(())
        } catch {
            result = .failure(error)
        }
        try await Self.tool("/usr/bin/gpgconf", ["--kill", "all"], in: directory, environment: ["GNUPGHOME": home])
        try result.get()
    }

    @Test(arguments: ["clear-signed", "detached binary", "detached armoured"])
    func `an OpenPGP signature by the trusted key lets the pinned file through`(form: String) async throws {
        try await Self.withServer { server, directory in
            try FileManager.default.createDirectory(atPath: directory + "/out", withIntermediateDirectories: true)
            try Self.writeSums(in: directory)
            try await Self.withGPG(in: directory, keys: ["release"]) { gpg in
                var arguments: [String]
                switch form {
                case "clear-signed":
                    try await gpg([
                        "--local-user", "release", "--clearsign", "-o", "\(directory)/SHA256SUMS.asc",
                        "\(directory)/SHA256SUMS",
                    ])
                    arguments = [
                        "--checksum-file", "\(directory)/SHA256SUMS.asc", "--trusted-key", "\(directory)/release.asc",
                    ]
                case "detached binary":
                    try await gpg([
                        "--local-user", "release", "--detach-sign", "-o", "\(directory)/SHA256SUMS.sig",
                        "\(directory)/SHA256SUMS",
                    ])
                    arguments = [
                        "--checksum-file", "\(directory)/SHA256SUMS", "--signature", "\(directory)/SHA256SUMS.sig",
                        "--trusted-key", "\(directory)/release.gpg",
                    ]
                default:
                    try await gpg([
                        "--local-user", "release", "--armor", "--detach-sign", "-o", "\(directory)/SHA256SUMS.sign",
                        "\(directory)/SHA256SUMS",
                    ])
                    arguments = [
                        "--checksum-file", "\(directory)/SHA256SUMS", "--signature", "\(directory)/SHA256SUMS.sign",
                        "--trusted-key", "\(directory)/release.asc",
                    ]
                }
                let run = await Self.fetch(server, directory, arguments)
                #expect(run.status == 0, "\(run.standardError)")
                #expect(contents(directory + "/out/app.bin") == Self.body)
            }
        }
    }

    @Test func `an OpenPGP signature by a key not trusted is refused, naming that key`() async throws {
        try await Self.withServer { server, directory in
            try FileManager.default.createDirectory(atPath: directory + "/out", withIntermediateDirectories: true)
            try Self.writeSums(in: directory)
            try await Self.withGPG(in: directory, keys: ["release", "other"]) { gpg in
                try await gpg([
                    "--local-user", "other", "--detach-sign", "-o", "\(directory)/SHA256SUMS.sig",
                    "\(directory)/SHA256SUMS",
                ])
                let run = await Self.fetch(
                    server,
                    directory,
                    [
                        "--checksum-file", "\(directory)/SHA256SUMS", "--signature", "\(directory)/SHA256SUMS.sig",
                        "--trusted-key", "\(directory)/release.asc",
                    ]
                )
                Self.expectRefused(run, server, directory, saying: "signed by OpenPGP key")
                #expect(run.standardError.contains("which is not trusted"), "\(run.standardError)")
            }
        }
    }

    @Test(arguments: ["text changed", "lines added outside", "signature garbled", "not signed"])
    func `a clear-signed file that is not what the key signed is refused, or only its signed text is used`(
        damage: String
    ) async throws {
        try await Self.withServer { server, directory in
            try FileManager.default.createDirectory(atPath: directory + "/out", withIntermediateDirectories: true)
            try Self.writeSums(in: directory)
            try await Self.withGPG(in: directory, keys: ["release"]) { gpg in
                let signed = directory + "/SHA256SUMS.asc"
                try await gpg(["--local-user", "release", "--clearsign", "-o", signed, "\(directory)/SHA256SUMS"])
                var text = try String(contentsOfFile: signed, encoding: .utf8)
                let digest = Fixtures.sha256(Self.body)
                var output = "app.bin"
                switch damage {
                case "text changed":  // the armour intact, one entry's name changed
                    text = text.replacingOccurrences(of: "  app.bin", with: "  app.bim")
                case "lines added outside":  // an entry before the signed message: never used
                    text = "\(digest)  extra.bin\n" + text
                    output = "extra.bin"
                case "signature garbled":
                    let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
                    let index = try #require(lines.firstIndex(of: "-----BEGIN PGP SIGNATURE-----"))
                    text = (lines[...(index + 1)] + ["AAAA" + lines[index + 2].dropFirst(4)] + lines[(index + 3)...])
                        .joined(separator: "\n")
                default:
                    text = try String(contentsOfFile: directory + "/SHA256SUMS", encoding: .utf8)
                }
                try text.write(toFile: signed, atomically: true, encoding: .utf8)
                let run = await runCLI(
                    Self.quiet + [
                        "--checksum-file", signed, "--trusted-key", "\(directory)/release.asc", "-o",
                        "\(directory)/out/\(output)", server.url("/\(output)"),
                    ]
                )
                if damage == "lines added outside" {
                    // The signature holds; the entry outside it is not there for extra.bin.
                    #expect(run.status == 2, "\(run.standardError)")
                    #expect(run.standardError.contains("extra.bin"), "\(run.standardError)")
                    #expect(server.getRequests.isEmpty)
                    #expect(listing(directory + "/out").isEmpty)
                } else {
                    Self.expectRefused(
                        run,
                        server,
                        directory,
                        saying: damage == "not signed" ? "is not signed" : "OpenPGP"
                    )
                }
            }
        }
    }

    @Test func `a clear-signed file without --trusted-key is used with a warning that its signature is unchecked`()
        async throws
    {
        try await Self.withServer { server, directory in
            try FileManager.default.createDirectory(atPath: directory + "/out", withIntermediateDirectories: true)
            try Self.writeSums(in: directory)
            try await Self.withGPG(in: directory, keys: ["release"]) { gpg in
                try await gpg([
                    "--local-user", "release", "--clearsign", "-o", "\(directory)/SHA256SUMS.asc",
                    "\(directory)/SHA256SUMS",
                ])
                let run = await Self.fetch(server, directory, ["-q", "--checksum-file", "\(directory)/SHA256SUMS.asc"])
                #expect(run.status == 0, "\(run.standardError)")
                #expect(contents(directory + "/out/app.bin") == Self.body)
                #expect(
                    run.standardError.contains("the signature is not checked (--trusted-key checks it)"),
                    "\(run.standardError)"
                )
            }
        }
    }

    /// Tool output: gpg's good signature followed by its expired one, of the same key.
    @Test func `a good signature next to an expired one by the same key counts`() async throws {
        try await Self.withServer { server, directory in
            try FileManager.default.createDirectory(atPath: directory + "/out", withIntermediateDirectories: true)
            try Self.writeSums(in: directory)
            try await Self.withGPG(in: directory, keys: ["release"]) { gpg in
                try await gpg([
                    "--local-user", "release", "--default-sig-expire", "seconds=1", "--detach-sign", "-o",
                    "\(directory)/old.sig", "\(directory)/SHA256SUMS",
                ])
                try await gpg([
                    "--local-user", "release", "--detach-sign", "-o", "\(directory)/good.sig",
                    "\(directory)/SHA256SUMS",
                ])
                try await Task.sleep(for: .seconds(2))
                let old = try #require(FileManager.default.contents(atPath: directory + "/old.sig"))
                let good = try #require(FileManager.default.contents(atPath: directory + "/good.sig"))
                // The good one first: gpgv 2.2 stops at an expired signature and says nothing of the next.
                try (good + old).write(to: URL(fileURLWithPath: directory + "/both.sig"))
                let arguments = [
                    "--checksum-file", "\(directory)/SHA256SUMS", "--trusted-key", "\(directory)/release.asc",
                    "--signature",
                ]
                let run = await Self.fetch(server, directory, arguments + ["\(directory)/both.sig"])
                #expect(run.status == 0, "\(run.standardError)")
                let expired = await Self.fetch(server, directory, arguments + ["\(directory)/old.sig"])
                #expect(expired.status == 9)
                #expect(expired.standardError.contains("in a signature that has expired"), "\(expired.standardError)")
            }
        }
    }

    /// Tool output: a file clear-signed by gpg whose line ends in spaces and a tab.
    @Test func `a clear-signed line with trailing white space reads as gpgv gives it`() async throws {
        try await Self.withServer { server, directory in
            try FileManager.default.createDirectory(atPath: directory + "/out", withIntermediateDirectories: true)
            try "\(Fixtures.sha256(Self.body))  app.bin  \t\n".write(
                toFile: "\(directory)/SHA256SUMS",
                atomically: true,
                encoding: .utf8
            )
            try await Self.withGPG(in: directory, keys: ["release"]) { gpg in
                try await gpg([
                    "--local-user", "release", "--clearsign", "-o", "\(directory)/SHA256SUMS.asc",
                    "\(directory)/SHA256SUMS",
                ])
                for keys in [[], ["--trusted-key", "\(directory)/release.asc"]] {
                    try? FileManager.default.removeItem(atPath: directory + "/out/app.bin")
                    let run = await Self.fetch(
                        server,
                        directory,
                        ["--checksum-file", "\(directory)/SHA256SUMS.asc"] + keys
                    )
                    #expect(run.status == 0, "\(keys): \(run.standardError)")
                    #expect(contents(directory + "/out/app.bin") == Self.body)
                }
            }
        }
    }
}
