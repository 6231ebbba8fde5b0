import Foundation
import Testing

/// Signed checksum files, with keys and signatures made by the real tools from Debian
/// (`minisign`, `gpg` with a temporary `GNUPGHOME`; `.ci/run` installs them): a file is fetched
/// only when a trusted key signed the checksum file that pins it; anything else is exit 9
/// before any request for the file, and nothing is created.
@Suite(.serialized)
struct SignedChecksumFileTests {
    static let body = Array("the release artifact\n".utf8)
    static let quiet = ["--json", "--retries", "0", "--retry-delay", "0"]

    /// Runs a tool to its end in `directory` and returns its exit status.
    @discardableResult
    static func tool(
        _ executable: String,
        _ arguments: [String],
        in directory: String,
        environment: [String: String] = [:]
    )
        async throws -> Int32
    {
        let child = try ChildProcess(executable, arguments, logs: directory + "/tool", environment: environment)
        try await child.wait(timeout: .seconds(60))
        return child.termination?.status ?? -1
    }

    /// A directory with `SHA256SUMS` for `app.bin` and a minisign key pair `name`.
    static func minisignKey(_ name: String, in directory: String) async throws {
        try await Self.tool(
            "/usr/bin/minisign",
            ["-G", "-W", "-f", "-p", "\(directory)/\(name).pub", "-s", "\(directory)/\(name).key"],
            in: directory
        )
    }

    static func minisign(_ file: String, key: String, in directory: String, extra: [String] = []) async throws {
        try await Self.tool(
            "/usr/bin/minisign",
            ["-S", "-s", "\(directory)/\(key).key", "-m", file, "-t", "release 1.0"] + extra,
            in: directory
        )
    }

    static func writeSums(in directory: String, name: String = "SHA256SUMS") throws {
        try "\(Fixtures.sha256(Self.body))  app.bin\n".write(
            toFile: "\(directory)/\(name)",
            atomically: true,
            encoding: .utf8
        )
    }

    static func withServer(_ body: (TestHTTPServer, String) async throws -> Void) async throws {
        try await withTestHTTPServer(serving: TestResource(body: Self.body, etag: "\"s\"")) { server in
            try await withTemporaryDirectory { directory in try await body(server, directory) }
        }
    }

    /// The CLI fetching `app.bin` pinned by `sums`, with `extra` arguments.
    static func fetch(_ server: TestHTTPServer, _ directory: String, _ extra: [String]) async -> CLIRun {
        await runCLI(Self.quiet + extra + ["-o", "\(directory)/out/app.bin", server.url("/app.bin")])
    }

    static func expectRefused(
        _ run: CLIRun,
        _ server: TestHTTPServer,
        _ directory: String,
        saying words: String,
        requestsBefore: Int = 0
    ) {
        #expect(run.status == 9, "\(run.standardError)")
        #expect(run.standardError.contains(words), "\(run.standardError)")
        #expect(run.standardError.split(separator: "\n").count == 1, "\(run.standardError)")
        #expect(server.getRequests.count == requestsBefore, "no request for the file")
        #expect(listing(directory + "/out").isEmpty)
        #expect(run.string("status") == "skipped", "\(run.standardOutput)")
        #expect((run.json["error"] as? [String: Any])?["exit_code"] as? Int == 9, "\(run.standardOutput)")
    }

    @Test(arguments: [false, true])
    func `a minisign signature by the trusted key lets the pinned file through`(legacy: Bool) async throws {
        try await Self.withServer { server, directory in
            try FileManager.default.createDirectory(atPath: directory + "/out", withIntermediateDirectories: true)
            try Self.writeSums(in: directory)
            try await Self.minisignKey("release", in: directory)
            try await Self.minisign(
                "\(directory)/SHA256SUMS",
                key: "release",
                in: directory,
                extra: legacy ? ["-l"] : []
            )
            let run = await Self.fetch(
                server,
                directory,
                [
                    "--checksum-file", "\(directory)/SHA256SUMS", "--signature", "\(directory)/SHA256SUMS.minisig",
                    "--trusted-key", "\(directory)/release.pub",
                ]
            )
            #expect(run.status == 0, "\(run.standardError)")
            #expect(contents(directory + "/out/app.bin") == Self.body)
        }
    }

    @Test func `a minisign signature by another key is refused, naming that key`() async throws {
        try await Self.withServer { server, directory in
            try FileManager.default.createDirectory(atPath: directory + "/out", withIntermediateDirectories: true)
            try Self.writeSums(in: directory)
            try await Self.minisignKey("release", in: directory)
            try await Self.minisignKey("other", in: directory)
            try await Self.minisign("\(directory)/SHA256SUMS", key: "other", in: directory)
            // minisign's comment names the ID in hex without leading zeros; messages give all 16 digits.
            let comment = try String(contentsOfFile: directory + "/other.pub", encoding: .utf8).split(separator: "\n")[
                0
            ]
            let otherID = try #require(comment.split(separator: " ").last.map(String.init))
            let run = await Self.fetch(
                server,
                directory,
                [
                    "--checksum-file", "\(directory)/SHA256SUMS", "--signature", "\(directory)/SHA256SUMS.minisig",
                    "--trusted-key", "\(directory)/release.pub",
                ]
            )
            Self.expectRefused(run, server, directory, saying: "\(otherID), which is not trusted")
        }
    }

    /// The one-byte change, the trusted comment edit, and broken signature files.
    @Test(arguments: ["checksum file", "trusted comment", "truncated", "garbled", "empty", "signify without its lines"])
    func `a minisign signature that does not match is refused with exit 9, never a crash`(damage: String) async throws {
        try await Self.withServer { server, directory in
            try FileManager.default.createDirectory(atPath: directory + "/out", withIntermediateDirectories: true)
            try Self.writeSums(in: directory)
            try await Self.minisignKey("release", in: directory)
            try await Self.minisign("\(directory)/SHA256SUMS", key: "release", in: directory)
            let signature = directory + "/SHA256SUMS.minisig"
            var lines = try String(contentsOfFile: signature, encoding: .utf8).split(separator: "\n").map(String.init)
            var words = "does not verify"
            switch damage {
            case "checksum file":
                var sums = try #require(FileManager.default.contents(atPath: directory + "/SHA256SUMS"))
                sums[sums.count - 2] ^= 0x01  // the last letter of the name
                try sums.write(to: URL(fileURLWithPath: directory + "/SHA256SUMS"))
            case "trusted comment":
                lines[2] = "trusted comment: release 9.9"
                words = "trusted comment that is not the one signed"
            case "truncated":
                lines[1] = String(lines[1].prefix(40))
                words = "not a minisign or signify signature"
            case "garbled":
                lines[3] = "!!!not base64!!!"
                words = "not a minisign or signify signature"
            case "empty":
                lines = ["untrusted comment:"]
                words = "not a minisign or signify signature"
            default:  // a pre-hashed signature cut to signify's two lines
                lines = Array(lines.prefix(2))
                words = "not a minisign or signify signature"
            }
            if damage != "checksum file" {
                try (lines.joined(separator: "\n") + "\n").write(toFile: signature, atomically: true, encoding: .utf8)
            }
            let run = await Self.fetch(
                server,
                directory,
                [
                    "--checksum-file", "\(directory)/SHA256SUMS", "--signature", signature, "--trusted-key",
                    "\(directory)/release.pub",
                ]
            )
            Self.expectRefused(run, server, directory, saying: words)
        }
    }

    @Test func `a signify signature (two lines, Ed25519 of the file) is checked too`() async throws {
        try await Self.withServer { server, directory in
            try FileManager.default.createDirectory(atPath: directory + "/out", withIntermediateDirectories: true)
            try Self.writeSums(in: directory)
            try await Self.minisignKey("release", in: directory)
            // minisign's legacy signature without its trusted comment is signify's format.
            try await Self.minisign("\(directory)/SHA256SUMS", key: "release", in: directory, extra: ["-l"])
            let minisig = try String(contentsOfFile: directory + "/SHA256SUMS.minisig", encoding: .utf8)
            let signify = minisig.split(separator: "\n").prefix(2).joined(separator: "\n") + "\n"
            try signify.write(toFile: directory + "/SHA256SUMS.sig", atomically: true, encoding: .utf8)
            let arguments = [
                "--checksum-file", "\(directory)/SHA256SUMS", "--signature", "\(directory)/SHA256SUMS.sig",
                "--trusted-key", "\(directory)/release.pub",
            ]
            let run = await Self.fetch(server, directory, arguments)
            #expect(run.status == 0, "\(run.standardError)")
            #expect(contents(directory + "/out/app.bin") == Self.body)
            // The same signature of a changed file is refused.
            try "\(Fixtures.sha256(Self.body))  app.bin\n# changed\n".write(
                toFile: "\(directory)/SHA256SUMS",
                atomically: true,
                encoding: .utf8
            )
            try FileManager.default.removeItem(atPath: directory + "/out/app.bin")
            Self.expectRefused(
                await Self.fetch(server, directory, arguments),
                server,
                directory,
                saying: "signify signature by key",
                requestsBefore: 1
            )
        }
    }

    @Test func `--signature without --trusted-key, and --trusted-key without a checksum file, are usage errors`()
        async throws
    {
        try await Self.withServer { server, directory in
            let noKey = await Self.fetch(
                server,
                directory,
                ["--checksum-file", "\(directory)/SHA256SUMS", "--signature", "\(directory)/SHA256SUMS.minisig"]
            )
            #expect(noKey.status == 2)
            #expect(noKey.standardError.contains("--signature needs --trusted-key"))
            let noSums = await Self.fetch(server, directory, ["--trusted-key", "\(directory)/k.pub"])
            #expect(noSums.status == 2)
            #expect(server.requests.isEmpty)
        }
    }

    @Test func `a key file that is no key is a usage error naming it`() async throws {
        try await Self.withServer { server, directory in
            try Self.writeSums(in: directory)
            try "hello\n".write(toFile: directory + "/junk.pub", atomically: true, encoding: .utf8)
            let run = await Self.fetch(
                server,
                directory,
                ["--checksum-file", "\(directory)/SHA256SUMS", "--trusted-key", "\(directory)/junk.pub"]
            )
            #expect(run.status == 2)
            #expect(run.standardError.contains("--trusted-key \(directory)/junk.pub"), "\(run.standardError)")
            #expect(server.requests.isEmpty)
        }
    }

    /// User input: a manifest whose own pin disagrees with the signed checksum file, then one that agrees.
    @Test func `a manifest's own pin cannot override the signed checksum file`() async throws {
        try await Self.withServer { server, directory in
            try Self.writeSums(in: directory)
            try await Self.minisignKey("release", in: directory)
            try await Self.minisign("\(directory)/SHA256SUMS", key: "release", in: directory)
            let other = Fixtures.sha256(Array("evil\n".utf8))
            let sign = [
                "--checksum-file", "\(directory)/SHA256SUMS", "--signature", "\(directory)/SHA256SUMS.minisig",
                "--trusted-key", "\(directory)/release.pub", "-P", "\(directory)/out",
            ]
            try "\(server.url("/app.bin")) sha256:\(other) app.bin\n".write(
                toFile: directory + "/list",
                atomically: true,
                encoding: .utf8
            )
            let disagreeing = await runCLI(Self.quiet + sign + ["-i", directory + "/list"])
            #expect(disagreeing.status == 2, "\(disagreeing.standardError)")
            #expect(disagreeing.standardError.contains("disagrees with the signed checksum file"))
            #expect(server.getRequests.isEmpty)
            try "\(server.url("/app.bin")) sha256:\(Fixtures.sha256(Self.body)) app.bin\n".write(
                toFile: directory + "/list",
                atomically: true,
                encoding: .utf8
            )
            let agreeing = await runCLI(Self.quiet + sign + ["-i", directory + "/list"])
            #expect(agreeing.status == 0, "\(agreeing.standardError)")
            #expect(contents(directory + "/out/app.bin") == Self.body)
        }
    }
}
