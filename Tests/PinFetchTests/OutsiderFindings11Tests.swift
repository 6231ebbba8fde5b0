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

    @Test func `a closed stdout or stderr never crashes the run`() async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
            server.faults = TestFaults(bytesPerSecond: 2_000_000)
            try await withTemporaryDirectory { directory in
                // Unpinned: pinned the same, the second and third would be quick copies of the first.
                let manifest = (1...3).map { "\(server.url()) f\($0)" }.joined(
                    separator: "\n"
                )
                try manifest.write(toFile: "\(directory)/m", atomically: true, encoding: .utf8)
                let child = try await PipeTests.bash(
                    "\"$PF\" --no-cache --json -j 1 -P \(directory)/a -i \(directory)/m | head -c1 >/dev/null; "
                        + "echo \"${PIPESTATUS[0]}\" > \(directory)/s1; "
                        + "\"$PF\" --no-cache -P \(directory)/b -i \(directory)/m 2>&-; echo $? > \(directory)/s2",
                    in: directory
                )
                #expect(child.termination == .exited(0), "\(child.transcript)")
                // The JSON lines a closed pipe lost are exit 3 (PipeTests); the files are all there.
                // (One at a time, half a second each: head is gone before the second line.)
                #expect(contents("\(directory)/s1") == Array("3\n".utf8))
                #expect(listing("\(directory)/a") == ["f1", "f2", "f3"])
                #expect(contents("\(directory)/s2") == Array("0\n".utf8))
                #expect(listing("\(directory)/b") == ["f1", "f2", "f3"])
            }
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
