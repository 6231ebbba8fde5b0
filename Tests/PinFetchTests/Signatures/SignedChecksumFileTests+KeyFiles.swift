import Foundation
import Testing

/// Key and signature files as the tools and people write them: CRLF line ends, two keys under one
/// ID, armoured keys one after another, a secret key or junk where a trusted key should be.
extension SignedChecksumFileTests {
    /// Rewrites `path` with CRLF line ends.
    static func crlf(_ path: String) throws {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        try text.replacing("\n", with: "\r\n").write(toFile: path, atomically: true, encoding: .utf8)
    }

    /// Tool output: minisign's signature and key with CRLF line ends; another key of the same ID given first.
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

    /// User input: a --trusted-key file that is no key, for a remote checksum file and for standard input.
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

    /// Tool output: two armoured public keys of gpg in one CRLF file; a secret key given as --trusted-key.
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
}
