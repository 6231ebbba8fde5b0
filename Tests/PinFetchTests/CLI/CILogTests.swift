import Foundation
import Testing

@testable import PinFetch
@testable import PinFetchCLI

/// What a CI log shows: batch totals off a terminal, GitHub annotations for
/// failed files, and an empty list that is bad input rather than a silent success.
struct CILogTests {
    @Test func `off a terminal a batch's lines end with where the batch stands`() {
        let sink = ProgressReporterTests.Sink()
        let reporter = ProgressReporter(terminal: nil, lineInterval: 0, write: sink.write)
        reporter.expect(files: 3)
        reporter.report(ProgressReporterTests.progress("/tmp/a.iso", 1 << 20, of: 2 << 20))
        reporter.finish("/tmp/a.iso")
        reporter.report(ProgressReporterTests.progress("/tmp/b.tar", 1 << 20, of: 4 << 20))
        let lines = sink.value.split(separator: "\n").map(String.init)
        #expect(lines.contains("pinfetch: 0 of 3 files done, 1 running"), "\(sink.value)")
        #expect(lines.last == "pinfetch: 1 of 3 files done, 1 running", "\(sink.value)")
        #expect(lines.allSatisfy { $0.hasPrefix("pinfetch: ") })  // no line a CI runner takes for a command
        #expect(!sink.value.contains("\u{1B}"))
    }

    @Test func `under GitHub Actions a failed file is also an error annotation`() async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
            server.faults = TestFaults(status: 404)
            try await withTemporaryDirectory { directory in
                let child = try ChildProcess(
                    try EndToEndTests.pinfetchExecutable(),
                    EndToEndTests.quiet + ["--retries", "0", "-o", "\(directory)/a,b:c", server.url()],
                    logs: "\(directory)/run",
                    environment: ["GITHUB_ACTIONS": "true"]
                )
                try await child.wait(timeout: .seconds(30))
                #expect(child.termination == .exited(8))
                let annotation = child.standardError.split(separator: "\n").first { $0.hasPrefix("::error ") } ?? ""
                #expect(
                    annotation.hasPrefix("::error title=pinfetch%3A \(directory)/a%2Cb%3Ac::"),
                    "\(child.standardError)"
                )
                #expect(annotation.contains("404"))
                #expect(!child.standardOutput.contains("::error"))  // stdout stays JSON lines
            }
        }
    }

    @Test(arguments: ["", "# only a comment\n\n"])
    func `an empty manifest is bad input, a shard with no entry has nothing to do`(text: String) async throws {
        try await withTemporaryDirectory { directory in
            try text.write(toFile: "\(directory)/m", atomically: true, encoding: .utf8)
            let empty = await runCLI(["-q", "-i", "\(directory)/m"])
            #expect(empty.status == 2)
            #expect(empty.standardError.contains("lists no file to fetch"))

            try "http://127.0.0.1:9/a\n".write(toFile: "\(directory)/one", atomically: true, encoding: .utf8)
            let shard = await runCLI(["--shard", "1/2", "-P", directory, "-i", "\(directory)/one"])
            #expect(shard.status == 0)
            #expect(shard.standardError.contains("nothing to do"))
        }
    }

    @Test func `--dry-run says what each file would need and makes no request`() async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let cache = "\(directory)/cache"
                try FileManager.default.createDirectory(atPath: "\(cache)/sha256", withIntermediateDirectories: true)
                try Data(Fixtures.a).write(to: URL(filePath: "\(cache)/sha256/\(Fixtures.sha256A)"))
                try Data(Fixtures.a).write(to: URL(filePath: "\(directory)/have"))
                try writePartial(
                    Fixtures.a[..<400_000],
                    of: 1_048_576,
                    to: "\(directory)/half",
                    url: server.url(),
                    etag: Fixtures.etagA
                )
                let pin = "sha256:\(Fixtures.sha256A)"
                try """
                \(server.url()) \(pin) have
                \(server.url()) \(pin) cached
                \(server.url()) half
                \(server.url()) fresh

                """.write(toFile: "\(directory)/m", atomically: true, encoding: .utf8)
                let run = await runCLI([
                    "--dry-run", "--json", "--cache-dir", cache, "-P", directory, "-i", "\(directory)/m",
                ])
                #expect(run.status == 0, "\(run.standardError)")
                let lines = run.standardOutput.split(separator: "\n").compactMap {
                    try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
                }
                #expect(
                    lines.map { $0["action"] as? String } == ["already-complete", "from-cache", "resume", "download"]
                )
                #expect((lines[2]["resume_bytes"] as? NSNumber)?.intValue == 400_000)
                #expect(server.requests.isEmpty)
                #expect(!FileSystem.exists("\(directory)/cached") && !FileSystem.exists("\(directory)/fresh"))
            }
        }
    }

    @Test func `--dry-run says which entries would be copies of an earlier one pinned the same`() async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
            try await withTemporaryDirectory { directory in
                try Data(Fixtures.a).write(to: URL(filePath: "\(directory)/have"))
                let pin = "sha256:\(Fixtures.sha256A)"
                try """
                \(server.url()) \(pin) first
                \(server.url()) \(pin) have
                \(server.url("/other")) \(pin) second
                \(server.url()) unpinned

                """.write(toFile: "\(directory)/m", atomically: true, encoding: .utf8)
                let json = await runCLI(["--dry-run", "--json", "-P", directory, "-i", "\(directory)/m"])
                let actions = json.standardOutput.split(separator: "\n").compactMap {
                    (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["action"] as? String
                }
                #expect(actions == ["download", "already-complete", "copy", "download"], "\(json.standardOutput)")
                let text = await runCLI(["--dry-run", "-P", directory, "-i", "\(directory)/m"])
                #expect(
                    text.standardOutput.contains("copy of \(directory)/first, pinned the same"),
                    "\(text.standardOutput)"
                )
                #expect(server.requests.isEmpty)
            }
        }
    }
}
