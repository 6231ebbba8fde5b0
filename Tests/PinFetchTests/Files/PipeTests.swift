import Foundation
import Testing

/// Pipes: `-i -` reads the manifest from standard input; `-o -` writes the
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

    /// `--json` lines that standard output does not take (a full device; a reader gone before
    /// the line came) are reported, with exit 3; the file itself is in place all the same.
    @Test(arguments: ["> /dev/full", "| true", ">&-", ">&- 0<&-"])
    func `--json into a standard output that fails is exit 3, with the file in place`(sink: String) async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
            try await withTemporaryDirectory { directory in
                // `true` is gone well before pinfetch, started 0.3 s later, has a line to write.
                let command =
                    "\"$PF\" -q --no-cache --json --sha256 \(Fixtures.sha256A) -o \(directory)/out \(server.url())"
                let child = try await Self.bash(
                    sink == "| true"
                        ? "{ sleep 0.3; \(command); echo \"$?\" > \(directory)/status; } | true"
                        : "\(command) \(sink); echo \"$?\" > \(directory)/status",
                    in: directory
                )
                #expect(contents("\(directory)/status") == Array("3\n".utf8), "\(child.transcript)")
                // A closed stdout is named as such (the lines never go into a descriptor the
                // runtime opened in its place).
                let why =
                    ["| true": "the reader closed the pipe", "> /dev/full": "No space left on device"][sink]
                    ?? "it is closed"
                #expect(child.standardError.contains("standard output did not take"), "\(child.transcript)")
                #expect(child.standardError.contains(why), "\(child.transcript)")
                #expect(contents("\(directory)/out") == Fixtures.a)
            }
        }
    }

    /// A stdout closed at start holds /dev/null (so nothing else takes its number), yet `-o -`
    /// must not report the bytes delivered.
    @Test func `-o - into a closed standard output is exit 3 and leaves nothing`() async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let child = try await Self.bash(
                    "\"$PF\" -q --no-cache --sha256 \(Fixtures.sha256A) -o - \(server.url()) >&-; "
                        + "echo \"$?\" > \(directory)/status",
                    in: directory
                )
                #expect(contents("\(directory)/status") == Array("3\n".utf8), "\(child.transcript)")
                #expect(listing("\(directory)/tmp") == [])
            }
        }
    }

    @Test func `a failed file stays worse than a standard output that failed`() async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let child = try await Self.bash(
                    "\"$PF\" -q --no-cache --json --retries 0 --sha256 \(Fixtures.sha256B) -o \(directory)/out "
                        + "\(server.url()) > /dev/full; echo \"$?\" > \(directory)/status",
                    in: directory
                )
                #expect(contents("\(directory)/status") == Array("9\n".utf8), "\(child.transcript)")
                #expect(child.standardError.contains("standard output did not take"), "\(child.transcript)")
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

    /// Closed pipe: a reader that takes one byte of the JSON lines, and a closed stderr.
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
}
