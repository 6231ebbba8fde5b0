import Foundation
import Testing

/// Inputs an outsider's pass on issue 15 found mishandled, kept as tests.
extension SignedChecksumFileTests {
    /// Rewrites `path` with CRLF line ends.
    static func crlf(_ path: String) throws {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        try text.replacing("\n", with: "\r\n").write(toFile: path, atomically: true, encoding: .utf8)
    }

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

    @Test func `CRLF signature and key files, and two keys sharing an ID, are read as minisign reads them`()
        async throws
    {
        try await Self.withServer { server, directory in
            try FileManager.default.createDirectory(atPath: directory + "/out", withIntermediateDirectories: true)
            try Self.writeSums(in: directory)
            try await Self.minisignKey("release", in: directory)
            try await Self.minisign("\(directory)/SHA256SUMS", key: "release", in: directory)
            try Self.crlf(directory + "/SHA256SUMS.minisig")
            try Self.crlf(directory + "/release.pub")
            // Another key under the same 8-byte ID, given first.
            let lines = try String(contentsOfFile: directory + "/release.pub", encoding: .utf8)
                .split(separator: "\r\n").map(String.init)
            var decoded = try #require(Data(base64Encoded: lines[1]))
            decoded[20] ^= 0x55
            try "untrusted comment: same ID\n\(decoded.base64EncodedString())\n".write(
                toFile: directory + "/same.pub",
                atomically: true,
                encoding: .utf8
            )
            let run = await Self.fetch(
                server,
                directory,
                [
                    "--checksum-file", "\(directory)/SHA256SUMS", "--signature", "\(directory)/SHA256SUMS.minisig",
                    "--trusted-key", "\(directory)/same.pub", "--trusted-key", "\(directory)/release.pub",
                ]
            )
            #expect(run.status == 0, "\(run.standardError)")
            #expect(contents(directory + "/out/app.bin") == Self.body)
        }
    }

    @Test func `a key file that cannot be used is exit 2 before any request, the checksum file's included`()
        async throws
    {
        try await Self.withServer { server, directory in
            try "junk\n".write(toFile: directory + "/junk.pub", atomically: true, encoding: .utf8)
            let run = await Self.fetch(
                server,
                directory,
                ["--checksum-file", server.url("/SHA256SUMS"), "--trusted-key", "\(directory)/junk.pub"]
            )
            #expect(run.status == 2)
            #expect(run.standardError.hasPrefix("pinfetch: --trusted-key"), "\(run.standardError)")
            #expect(server.requests.isEmpty)
            let stdin = await Self.fetch(
                server,
                directory,
                ["--checksum-file", "-", "--signature", "-", "--trusted-key", "\(directory)/junk.pub"]
            )
            #expect(stdin.status == 2)
            #expect(stdin.standardError.contains("standard input"), "\(stdin.standardError)")
        }
    }

    @Test func `CRLF and concatenated armoured keys, a secret key named as such`() async throws {
        try await Self.withServer { server, directory in
            try FileManager.default.createDirectory(atPath: directory + "/out", withIntermediateDirectories: true)
            try Self.writeSums(in: directory)
            try await Self.withGPG(in: directory, keys: ["other", "release"]) { gpg in
                try await gpg([
                    "--local-user", "release", "--detach-sign", "-o", "\(directory)/SHA256SUMS.sig",
                    "\(directory)/SHA256SUMS",
                ])
                let both =
                    try String(contentsOfFile: directory + "/other.asc", encoding: .utf8)
                    + String(contentsOfFile: directory + "/release.asc", encoding: .utf8)
                try both.write(toFile: directory + "/both.asc", atomically: true, encoding: .utf8)
                try Self.crlf(directory + "/both.asc")
                let run = await Self.fetch(
                    server,
                    directory,
                    [
                        "--checksum-file", "\(directory)/SHA256SUMS", "--signature", "\(directory)/SHA256SUMS.sig",
                        "--trusted-key", "\(directory)/both.asc",
                    ]
                )
                #expect(run.status == 0, "\(run.standardError)")
                #expect(contents(directory + "/out/app.bin") == Self.body)
                try await gpg(["--armor", "--export-secret-keys", "-o", "\(directory)/secret.asc", "release"])
                let secret = await Self.fetch(
                    server,
                    directory,
                    ["--checksum-file", "\(directory)/SHA256SUMS", "--trusted-key", "\(directory)/secret.asc"]
                )
                #expect(secret.status == 2)
                #expect(secret.standardError.contains("a secret key"), "\(secret.standardError)")
            }
        }
    }

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
