import Foundation
import Testing

/// Trust anchors from the environment and client certificates, against
/// nginx over HTTPS with a CA made for the test.
extension ProcessTests {
    /// Runs pinfetch with `arguments` and the TLS variables of `environment` (the others empty,
    /// whatever the test process has).
    func pinfetchTLS(_ arguments: [String], environment: [String: String], logs: String) async throws -> CLIRun {
        var variables = ["SSL_CERT_FILE": "", "SSL_CERT_DIR": "", "CURL_CA_BUNDLE": ""]
        variables.merge(environment) { _, given in given }
        let child = try self.startPinfetch(arguments, logs: logs, environment: variables)
        try await child.wait(timeout: .seconds(60))
        return child.result
    }

    @Test(arguments: ["SSL_CERT_FILE", "CURL_CA_BUNDLE", "SSL_CERT_DIR"])
    func `the trust anchors can come from the environment, as with curl`(variable: String) async throws {
        try await Self.withHTTPSNginx { nginx, authority, work in
            var value = authority.certificate
            if variable == "SSL_CERT_DIR" {  // a directory of certificates named by subject hash
                value = try EndToEndTests.makeDirectory(work + "/certs")
                try FileManager.default.copyItem(atPath: authority.certificate, toPath: value + "/test-ca.pem")
                let rehash = try await ChildProcess.run(
                    TestCertificateAuthority.openssl,
                    ["rehash", value],
                    logs: work + "/rehash"
                )
                #expect(rehash.termination == .exited(0), "\(rehash.transcript)")
            }
            let run = try await self.pinfetchTLS(
                ["--sha256", Fixtures.sha256A, "-o", work + "/file", nginx.httpsURL("file")],
                environment: [variable: value],
                logs: work + "/run"
            )
            #expect(run.status == 0, EndToEndTests.explain(run, nginx))
            #expect(contents(work + "/file") == Fixtures.a)
        }
    }

    @Test func `--cacert adds to the bundle the environment names; a missing bundle fails HTTPS only`() async throws {
        try await Self.withHTTPSNginx { nginx, authority, work in
            // The environment's bundle alone does not know the test CA; --cacert adds it.
            let other = try await TestCertificateAuthority.make(in: EndToEndTests.makeDirectory(work + "/other"))
            let environment = ["SSL_CERT_FILE": other.certificate]
            let url = nginx.httpsURL("file")
            let alone = try await self.pinfetchTLS(
                ["-o", work + "/a", url],
                environment: environment,
                logs: work + "/a"
            )
            #expect(alone.status == 5, EndToEndTests.explain(alone, nginx))
            let added = try await self.pinfetchTLS(
                ["--cacert", authority.certificate, "-o", work + "/b", url],
                environment: environment,
                logs: work + "/b"
            )
            #expect(added.status == 0, EndToEndTests.explain(added, nginx))
            let missing = try await self.pinfetchTLS(
                ["-o", work + "/c", url],
                environment: ["CURL_CA_BUNDLE": work + "/no-such.pem"],
                logs: work + "/c"
            )
            #expect(missing.status == 5, "\(missing.standardError)")  // as curl: exit 77 there
            let plain = try await self.pinfetchTLS(
                ["-o", work + "/d", nginx.url("file")],
                environment: ["CURL_CA_BUNDLE": work + "/no-such.pem"],
                logs: work + "/d"
            )
            #expect(plain.status == 0, "\(plain.standardError)")
        }
    }

    @Test func `a server that asks for a client certificate gets one with --cert and --key`() async throws {
        try await Self.withHTTPSNginx(clientAuthentication: true) { nginx, authority, work in
            let url = nginx.httpsURL("file")
            let trust = ["--cacert", authority.certificate, "--sha256", Fixtures.sha256A]
            let without = try await self.pinfetch(trust + ["-o", work + "/without", url], logs: work + "/without")
            #expect(without.status == 8, EndToEndTests.explain(without, nginx))  // nginx: 400, no certificate sent
            #expect(!FileManager.default.fileExists(atPath: work + "/without"))

            let client = ["--cert", authority.client.certificate, "--key", authority.client.key]
            let with = try await self.pinfetch(trust + client + ["-o", work + "/with", url], logs: work + "/with")
            #expect(with.status == 0, EndToEndTests.explain(with, nginx))
            #expect(contents(work + "/with") == Fixtures.a)

            // One PEM file holding the certificate and its key, as curl takes it.
            let combined = work + "/client-and-key.pem"
            let pem =
                try String(contentsOfFile: authority.client.certificate, encoding: .utf8)
                + String(contentsOfFile: authority.client.key, encoding: .utf8)
            try pem.write(toFile: combined, atomically: true, encoding: .utf8)
            let one = try await self.pinfetch(
                trust + ["--cert", combined, "-o", work + "/one", url],
                logs: work + "/one"
            )
            #expect(one.status == 0, EndToEndTests.explain(one, nginx))
        }
    }

    @Test func `client certificate options that cannot work are bad input before any request`() async throws {
        try await Self.withHTTPSNginx(clientAuthentication: true) { nginx, authority, work in
            let url = nginx.httpsURL("file")
            for arguments in [
                ["--cert", work + "/missing.pem"], ["--key", authority.client.key],
                ["--cert", authority.client.certificate, "--key", work + "/missing.key"],
            ] {
                let run = try await self.pinfetch(arguments + ["-o", work + "/x", url], logs: work + "/bad")
                #expect(run.status == 2, "\(arguments): \(run.standardError)")
            }
            #expect(nginx.requests.isEmpty)
        }
    }
}

extension ProcessTests {
    /// The files the user names are read once, at the start: libcurl and OpenSSL would open them
    /// again for each request, and one swapped for a FIFO while the run goes on hung a transfer
    /// inside `open`, through every stop signal. Here the CA bundle (`SSL_CERT_FILE`), the client
    /// certificate and key, and the netrc file all become FIFOs with no writer while the first of
    /// two files comes; the second still comes, with the certificate the server asks for.
    @Test func `certificate, key, CA bundle and netrc files swapped for FIFOs mid-run hang nothing`() async throws {
        try await Self.withHTTPSNginx(clientAuthentication: true) { nginx, authority, work in
            let slow = Self.pseudoRandomContent(1 << 20, seed: 31)  // about 5 s at /slow/'s 200 KiB/s
            try nginx.serve(slow, as: "slow.bin")
            var named: [String: String] = [:]
            for (name, source) in [
                "ca.pem": authority.certificate, "client.pem": authority.client.certificate,
                "client.key": authority.client.key,
            ] {
                named[name] = work + "/" + name
                try FileManager.default.copyItem(atPath: source, toPath: work + "/" + name)
            }
            named["netrc"] = work + "/netrc"
            try "machine 127.0.0.1 login ci password secret\n".write(
                toFile: work + "/netrc",
                atomically: true,
                encoding: .utf8
            )
            try [
                "\(nginx.httpsURL("slow/slow.bin")) sha256:\(Fixtures.sha256(slow)) slow.bin",
                "\(nginx.httpsURL("file")) sha256:\(Fixtures.sha256A) file",
            ].joined(separator: "\n").appending("\n").write(toFile: work + "/list", atomically: true, encoding: .utf8)
            let out = try EndToEndTests.makeDirectory(work + "/out")
            let child = try self.startPinfetch(
                [
                    "-j", "1", "--cert", named["client.pem"]!, "--key", named["client.key"]!,
                    "--netrc-file", named["netrc"]!, "-i", work + "/list", "-P", out,
                ],
                logs: work + "/run",
                environment: ["SSL_CERT_FILE": named["ca.pem"]!, "SSL_CERT_DIR": "", "CURL_CA_BUNDLE": ""]
            )
            try await Self.waitUntil("the first file's partial", child) {
                FileManager.default.fileExists(atPath: out + "/slow.bin.part")
            }
            for path in named.values {
                try FileManager.default.removeItem(atPath: path)
                #expect(mkfifo(path, 0o600) == 0)
            }
            _ = try await child.wait(timeout: .seconds(60))
            #expect(child.result.status == 0, "\(child.transcript)\n\(EndToEndTests.explain(child.result, nginx))")
            #expect(contents(out + "/slow.bin") == slow)
            #expect(contents(out + "/file") == Fixtures.a)
        }
    }
}

extension ProcessTests {
    /// Files named by the environment (`CURL_CA_BUNDLE`, `SSL_CERT_FILE`, `$HOME/.netrc` for
    /// `--netrc`) are read once at the start as well: a FIFO there is bad input at once (exit 2),
    /// where libcurl's `open` of it held the run through every stop signal.
    @Test(arguments: ["CURL_CA_BUNDLE", "SSL_CERT_FILE", "HOME"])
    func `a FIFO named by the environment is bad input at once, not a hang`(variable: String) async throws {
        try await withTemporaryDirectory { work in
            let fifo = variable == "HOME" ? work + "/.netrc" : work + "/ca.pem"
            #expect(mkfifo(fifo, 0o600) == 0)
            var environment = ["CURL_CA_BUNDLE": "", "SSL_CERT_FILE": "", "SSL_CERT_DIR": ""]
            environment[variable] = variable == "HOME" ? work : fifo
            let child = try self.startPinfetch(
                (variable == "HOME" ? ["--netrc"] : []) + ["-o", work + "/x", "https://127.0.0.1:9/x"],
                logs: work + "/run",
                environment: environment
            )
            _ = try await child.wait(timeout: .seconds(30))
            #expect(child.result.status == 2, "\(child.transcript)")
            #expect(child.result.standardError.contains("is not a regular file"), "\(child.transcript)")
            #expect(!FileManager.default.fileExists(atPath: work + "/x"))
        }
    }
}
