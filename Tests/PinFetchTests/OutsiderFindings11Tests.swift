import Foundation
@preconcurrency import Glibc
import Testing

@testable import PinFetch

/// What an outsider broke in issue 11's first build, each kept as the input that broke it.
struct OutsiderFindings11Tests {
    static let quiet = ["-q", "--json", "--retry-delay", "0", "--retries", "0"]

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
            let run = await runCLI(Self.quiet + ["--cert", key, "-o", "\(directory)/o", "https://127.0.0.1:9/x"])
            #expect(run.status == 2)
            #expect(run.standardError.contains("never asks for a passphrase"), "\(run.standardError)")
        }
    }

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

    // MARK: - The second outsider pass

    @Test func `a retry after a host that did not resolve repeats the network error, exit 4`() async throws {
        try await withTemporaryDirectory { directory in
            let run = await runCLI(
                Self.quiet + ["--retries", "1", "-o", "\(directory)/o", "http://nonexist.invalid/x"]
            )
            #expect(run.status == 4, "\(run.standardError)")
            #expect(!run.standardError.contains("bad argument"))
            #expect(run.int("attempts") == 2)
        }
    }
}
