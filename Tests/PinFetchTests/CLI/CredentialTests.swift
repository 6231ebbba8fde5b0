import Foundation
@preconcurrency import Glibc
import Testing

/// Credentials as CI jobs give them: `--user`, a netrc file matched against the host each request
/// goes to, `-H @FILE` (a pipe too), a client key; none of them ever follows a redirect to another
/// origin or goes to a checksum file's, none is ever printed, and pinfetch never prompts for one.
struct CredentialTests {
    static let quiet = ["-q", "--json", "--retry-delay", "0", "--retries", "0"]

    /// `Basic base64(user:password)`.
    static func basic(_ credentials: String) -> String { "Basic " + Data(credentials.utf8).base64EncodedString() }

    /// Writes `text` to a new file in `directory`, mode 0600, and returns its path.
    static func write(_ text: String, named name: String, in directory: String) throws -> String {
        let path = "\(directory)/\(name)"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o600)
        return path
    }

    /// User input: also a password that begins with a combining mark (one `Character` with the colon).
    @Test(arguments: ["S3cret", "\u{301}S3cret"])
    func `--user sends Basic credentials to the origin, never past a redirect away`(password: String) async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { target in
            try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { origin in
                let elsewhere = "http://localhost:\(target.port)/file"
                origin.handler = { _, _ in TestResponse(status: 302, headers: [("Location", elsewhere)], body: []) }
                try await withTemporaryDirectory { directory in
                    let run = await runCLI(
                        Self.quiet + ["--user", "alice:" + password, "-o", "\(directory)/out", origin.url()]
                    )
                    #expect(run.status == 0, "\(run.standardError)")
                    #expect(origin.requests.first?.header("Authorization") == Self.basic("alice:" + password))
                    #expect(target.requests.count == 1)
                    #expect(target.requests.allSatisfy { $0.header("Authorization") == nil })
                    #expect(!run.standardOutput.contains("S3cret") && !run.standardError.contains("S3cret"))
                }
            }
        }
    }

    @Test(arguments: ["alice", ":pw", "al\u{7}ice:pw"])
    func `--user without USER:PASSWORD is bad input: pinfetch never prompts`(value: String) async {
        let run = await runCLI(["--user", value, "-o", "/nonexistent/x", "http://127.0.0.1:9/x"])
        #expect(run.status == 2)
        #expect(run.standardError.contains("--user"), "\(run.standardError)")
        #expect(!run.standardError.contains("pw"))
    }

    @Test func `a netrc entry is matched against the host each mirror and hop goes to`() async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { second in
            try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { first in
                first.handler = { _, _ in TestResponse(status: 503, headers: [], body: []) }
                try await withTemporaryDirectory { directory in
                    let netrc = try Self.write(
                        """
                        machine 127.0.0.1 login first password one
                        machine localhost
                          login second
                          password two

                        """,
                        named: "netrc",
                        in: directory
                    )
                    let run = await runCLI(
                        Self.quiet + [
                            "--retries", "0", "--netrc-file", netrc, "-o", "\(directory)/out", first.url(),
                            "http://localhost:\(second.port)/file",
                        ]
                    )
                    #expect(run.status == 0, "\(run.standardError)")
                    #expect(first.requests.first?.header("Authorization") == Self.basic("first:one"))
                    #expect(second.requests.first?.header("Authorization") == Self.basic("second:two"))
                    #expect(!run.standardError.contains("one") && !run.standardError.contains("two"))
                }
            }
        }
    }

    @Test func `netrc credentials are not sent after a redirect to another origin, even on the same host`()
        async throws
    {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { target in
            try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { origin in
                let elsewhere = target.url()  // 127.0.0.1 too, another port: another origin
                origin.handler = { _, _ in TestResponse(status: 301, headers: [("Location", elsewhere)], body: []) }
                try await withTemporaryDirectory { directory in
                    let netrc = try Self.write("default login any password secret\n", named: "netrc", in: directory)
                    let run = await runCLI(
                        Self.quiet + ["--netrc-file", netrc, "-o", "\(directory)/out", origin.url()]
                    )
                    #expect(run.status == 0, "\(run.standardError)")
                    #expect(origin.requests.first?.header("Authorization") == Self.basic("any:secret"))
                    #expect(target.requests.count == 1)
                    #expect(target.requests.allSatisfy { $0.header("Authorization") == nil })
                }
            }
        }
    }

    @Test func `--netrc reads HOME's .netrc, and a missing --netrc-file is bad input`() async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let home = "\(directory)/home"
                try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
                _ = try Self.write("machine 127.0.0.1 login ci password fromhome\n", named: ".netrc", in: home)
                let child = try ChildProcess(
                    try EndToEndTests.pinfetchExecutable(),
                    EndToEndTests.quiet + ["--netrc", "-o", "\(directory)/out", server.url()],
                    logs: "\(directory)/run",
                    environment: ["HOME": home]
                )
                try await child.wait(timeout: .seconds(60))
                #expect(child.termination == .exited(0), "\(child.transcript)")
                #expect(server.requests.first?.header("Authorization") == Self.basic("ci:fromhome"))

                let missing = await runCLI(["--netrc-file", "\(home)/nope", "-o", "\(directory)/x", server.url()])
                #expect(missing.status == 2)
                #expect(missing.standardError.contains("--netrc-file: cannot read"))
                #expect(server.requests.count == 1)
            }
        }
    }

    @Test func `-H @FILE sends one header per line and never echoes a bad line`() async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let good = try Self.write(
                    "Authorization: Bearer t0ken\r\n\nX-Job: 42\n",
                    named: "headers",
                    in: directory
                )
                let run = await runCLI(Self.quiet + ["-H", "@\(good)", "-o", "\(directory)/out", server.url()])
                #expect(run.status == 0, "\(run.standardError)")
                #expect(server.requests.first?.header("Authorization") == "Bearer t0ken")
                #expect(server.requests.first?.header("X-Job") == "42")

                let bad = try Self.write("X-Ok: 1\nBearer s3cret-token\n", named: "bad", in: directory)
                let refused = await runCLI(Self.quiet + ["-H", "@\(bad)", "-o", "\(directory)/no", server.url()])
                #expect(refused.status == 2)
                #expect(refused.standardError.contains("-H @\(bad), line 2"), "\(refused.standardError)")
                #expect(!refused.standardError.contains("s3cret"))
                let missing = await runCLI(
                    Self.quiet + ["-H", "@\(directory)/none", "-o", "\(directory)/no", server.url()]
                )
                #expect(missing.status == 2)
                #expect(server.requests.count == 1)
            }
        }
    }

    /// User input: a --cert key encrypted with a passphrase.
    @Test func `an encrypted client key is bad input: pinfetch never prompts for a passphrase`() async throws {
        try await withTemporaryDirectory { directory in
            let key = "\(directory)/key.pem"
            let made = try await ChildProcess.run(
                TestCertificateAuthority.openssl,
                [
                    "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-aes256", "-pass", "pass:x",
                    "-out", key,
                ],
                logs: "\(directory)/openssl"
            )
            #expect(made.termination == .exited(0))
            // A --cert file that holds the key too (the certificate's block is only a marker here).
            let combined = "\(directory)/combined.pem"
            let certificate = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
            try Data(Array(certificate.utf8) + (contents(key) ?? [])).write(to: URL(filePath: combined))
            let run = await runCLI(Self.quiet + ["--cert", combined, "-o", "\(directory)/o", "https://127.0.0.1:9/x"])
            #expect(run.status == 2)
            #expect(run.standardError.contains("never asks for a passphrase"), "\(run.standardError)")
        }
    }

    /// User input: a --cert or --key file that is no PEM of its kind (DER bytes, a key given as
    /// the certificate, a BEGIN line over junk, one pipe read for both, a certificate without its
    /// key) is bad input at once, not a handshake failure later. OpenSSL reads what is taken.
    @Test func `a --cert or --key that OpenSSL cannot read as its kind is bad input`() async throws {
        try await withTemporaryDirectory { directory in
            let certificate = "\(directory)/cert.pem"
            let key = "\(directory)/key.pem"
            let pair = "\(directory)/pair.pem"
            let binary = "\(directory)/cert.der"
            let junkCertificate = "\(directory)/junk-cert.pem"
            let junkKey = "\(directory)/junk-key.pem"
            let withJunk = "\(directory)/cert-then-junk.pem"
            let otherKey = "\(directory)/other-key.pem"
            try Data(Fixtures.otherPrivateKeyPEM.utf8).write(to: URL(filePath: otherKey))
            try Data(Fixtures.certificatePEM.utf8).write(to: URL(filePath: certificate))
            try Data(Fixtures.privateKeyPEM.utf8).write(to: URL(filePath: key))
            try Data((Fixtures.certificatePEM + Fixtures.privateKeyPEM).utf8).write(to: URL(filePath: pair))
            try Data([0x30, 0x82, 0x01, 0x0A]).write(to: URL(filePath: binary))
            try Data("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n".utf8)
                .write(to: URL(filePath: junkCertificate))
            try Data("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n".utf8)
                .write(to: URL(filePath: junkKey))
            try Data((Fixtures.certificatePEM + "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n").utf8)
                .write(to: URL(filePath: withJunk))
            for (arguments, says) in [
                (["--cert", binary], "\(binary) holds no PEM certificate"),
                (["--cert", key], "\(key) holds no PEM certificate"),
                (["--cert", certificate, "--key", certificate], "\(certificate) holds no PEM private key"),
                (
                    ["--cert", junkCertificate, "--key", key],
                    "\(junkCertificate) holds no certificate OpenSSL can read"
                ),
                (["--cert", certificate, "--key", junkKey], "\(junkKey) holds no private key OpenSSL can read"),
                (["--cert", certificate], "\(certificate) holds no private key OpenSSL can read: give it"),
                (["--cacert", junkCertificate], "\(junkCertificate) holds no certificate OpenSSL can read"),
                (["--cacert", withJunk], "\(withJunk) holds no certificate OpenSSL can read"),
                (["--cert", withJunk, "--key", key], "\(withJunk) holds no certificate OpenSSL can read"),
                (["--cert", certificate, "--key", otherKey], "the private key in \(otherKey) is not the key of"),
            ] {
                let run = await runCLI(Self.quiet + arguments + ["-o", "\(directory)/o", "https://127.0.0.1:9/x"])
                #expect(run.status == 2, "\(arguments)")
                #expect(run.standardError.contains(says), "\(run.standardError)")
            }
            for arguments in [["--cert", certificate, "--key", key], ["--cert", pair], ["--cacert", certificate]] {
                let accepted = await runCLI(Self.quiet + arguments + ["--dry-run", "https://127.0.0.1:9/x"])
                #expect(!accepted.standardError.contains("holds no"), "\(arguments): \(accepted.standardError)")
            }
        }
    }

    /// User input: -H @/dev/stdin, the headers piped in.
    @Test func `-H @FILE reads a pipe, as curl does`() async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let child = try await PipeTests.bash(
                    "printf 'X-A: 1\\n' | \"$PF\" -q --no-cache -H @/dev/stdin -o \(directory)/o \(server.url())",
                    in: directory
                )
                #expect(child.termination == .exited(0), "\(child.transcript)")
                #expect(server.requests.first?.header("X-A") == "1")
            }
        }
    }

    /// User input: --user and -H with a --checksum-file on another origin.
    @Test func `--user and -H stay off a checksum file on another origin`() async throws {
        let sums = Array("\(Fixtures.sha256A)  file\n".utf8)
        try await withTestHTTPServer(serving: TestResource(body: sums)) { sumsServer in
            try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
                try await withTemporaryDirectory { directory in
                    let run = await runCLI(
                        Self.quiet + ["-u", "alice:USERPW", "-H", "X-Token: T", "-o", "\(directory)/file"]
                            + ["--checksum-file", sumsServer.url("/SHA256SUMS"), server.url()]
                    )
                    #expect(run.status == 0, "\(run.standardError)")
                    #expect(
                        sumsServer.requests.allSatisfy {
                            $0.header("Authorization") == nil && $0.header("X-Token") == nil
                        }
                    )
                    #expect(server.requests.first?.header("Authorization") != nil)
                }
            }
        }
    }
}
