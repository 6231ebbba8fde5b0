import Foundation
import Testing

/// Pipes (issue 11, point 6): `-i -` reads the manifest from standard input; `-o -` writes the
/// verified bytes, and only verified bytes, to standard output. Run through `bash` so the pipes
/// are real.
struct PipeTests {
    /// Runs `script` with `bash -c`, `$PF` naming pinfetch and `$TMPDIR` a fresh directory.
    static func bash(_ script: String, in directory: String) async throws -> ChildProcess {
        let temporary = "\(directory)/tmp"
        try FileManager.default.createDirectory(atPath: temporary, withIntermediateDirectories: true)
        let child = try ChildProcess(
            "/bin/bash",
            ["-c", script],
            logs: "\(directory)/bash",
            environment: ["PF": try EndToEndTests.pinfetchExecutable(), "TMPDIR": temporary]
        )
        try await child.wait(timeout: .seconds(60))
        return child
    }

    @Test func `-o - writes the verified bytes to standard output and the JSON line to stderr`() async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let child = try await Self.bash(
                    "\"$PF\" -q --no-cache --json --sha256 \(Fixtures.sha256A) -o - \(server.url()) > \(directory)/got",
                    in: directory
                )
                #expect(child.termination == .exited(0), "\(child.transcript)")
                #expect(contents("\(directory)/got") == Fixtures.a)
                #expect(child.standardError.contains("\"path\":\"-\""), "\(child.standardError)")
                #expect(listing("\(directory)/tmp") == [])
            }
        }
    }

    @Test func `-o - with a mismatch writes nothing and exits 9`() async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let child = try await Self.bash(
                    "\"$PF\" -q --no-cache --retries 0 --sha256 \(Fixtures.sha256B) -o - \(server.url()) > \(directory)/got",
                    in: directory
                )
                #expect(child.termination == .exited(9), "\(child.transcript)")
                #expect(contents("\(directory)/got") == [])
                #expect(listing("\(directory)/tmp") == [])
            }
        }
    }

    @Test func `a reader that closes the pipe early ends the run with exit 3 and no leftovers`() async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let child = try await Self.bash(
                    "\"$PF\" -q --no-cache -o - \(server.url()) | head -c 10 > \(directory)/got; "
                        + "echo \"${PIPESTATUS[0]}\" > \(directory)/status",
                    in: directory
                )
                #expect(child.termination == .exited(0), "\(child.transcript)")
                #expect(contents("\(directory)/got") == Array(Fixtures.a.prefix(10)))
                #expect(contents("\(directory)/status") == Array("3\n".utf8), "\(child.transcript)")
                #expect(child.standardError.contains("the reader closed the pipe"), "\(child.standardError)")
                #expect(listing("\(directory)/tmp") == [])
            }
        }
    }

    @Test(arguments: ["-", "/dev/stdin"])
    func `-i reads the manifest from standard input`(input: String) async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let child = try await Self.bash(
                    "printf '%s\\n' '\(server.url()) sha256:\(Fixtures.sha256A) one' "
                        + "| \"$PF\" -q --no-cache -P \(directory)/out -i \(input)",
                    in: directory
                )
                #expect(child.termination == .exited(0), "\(child.transcript)")
                #expect(contents("\(directory)/out/one") == Fixtures.a)
            }
        }
    }
}
