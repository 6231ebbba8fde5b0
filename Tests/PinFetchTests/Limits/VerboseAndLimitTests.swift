import Foundation
import PinFetch
import Testing

/// Talking to the user and bounding the time (issue 11, points 4 and 5): `-v` shows requests,
/// the answers' deciding fields and decisions; retries print a line unless `-q`; `--max-time`
/// bounds a file's whole fetch and `--limit-rate` its speed.
struct VerboseAndLimitTests {
    static let resource = AnswerEndToEndTests.resourceA

    @Test func `-v shows the resume request, the answer's range and the decision, never a credential`()
        async throws
    {
        try await withTestHTTPServer(serving: Self.resource) { server in
            try await withTemporaryDirectory { directory in
                let output = "\(directory)/out.bin"
                server.enqueueFaults(TestFaults(closeAfterBodyBytes: 400_000))
                #expect(await runCLI(["-q", "--retries", "0", "-o", output, server.url()]).status == 4)
                let run = await runCLI(["-v", "--user", "ci:Pa55", "--json", "-o", output, server.url()])
                #expect(run.status == 0, "\(run.standardError)")
                let lines = run.standardError.split(separator: "\n").map(String.init)
                let expected = [
                    "pinfetch: out.bin: * resuming at byte 400000 with If-Range \"a-v1\"",
                    "pinfetch: out.bin: > GET \(server.url())",
                    "pinfetch: out.bin: > Range: bytes=400000-",
                    "pinfetch: out.bin: > If-Range: \"a-v1\"",
                    "pinfetch: out.bin: > Authorization: ***",
                    "pinfetch: out.bin: < HTTP 206",
                    "pinfetch: out.bin: < content-range: bytes 400000-1048575/1048576",
                ]
                for line in expected { #expect(lines.contains(line), "missing \(line) in:\n\(run.standardError)") }
                #expect(!run.standardError.contains("Pa55"))
            }
        }
    }

    @Test func `without -q a retry prints its reason and its wait; with -q nothing`() async throws {
        try await withTestHTTPServer(serving: Self.resource) { server in
            try await withTemporaryDirectory { directory in
                server.enqueueFaults(TestFaults(status: 503, retryAfter: "1"))
                let run = await runCLI(["--json", "--retries", "2", "-o", "\(directory)/a", server.url()])
                #expect(run.status == 0)
                let line = run.standardError.split(separator: "\n").first { $0.contains("retrying") } ?? ""
                #expect(line.contains("503") && line.hasSuffix("retrying in 1.0 s (retry 1 of 2)"), "\(line)")

                server.enqueueFaults(TestFaults(status: 503, retryAfter: "1"))
                let quiet = await runCLI(["-q", "--json", "--retries", "2", "-o", "\(directory)/b", server.url()])
                #expect(quiet.status == 0)
                #expect(quiet.standardError.isEmpty)
            }
        }
    }

    @Test func `a move to the next mirror says which`() async throws {
        try await withTestHTTPServer(serving: Self.resource) { good in
            try await withTestHTTPServer(serving: Self.resource) { broken in
                broken.faults = TestFaults(status: 404)
                try await withTemporaryDirectory { directory in
                    let run = await runCLI(["--json", "-o", "\(directory)/out", broken.url(), good.url()])
                    #expect(run.status == 0)
                    #expect(run.standardError.contains("; trying mirror 2 of 2: \(good.url())"), "\(run.standardError)")
                }
            }
        }
    }

    @Test func `-v and -q together are bad input`() async {
        let run = await runCLI(["-v", "-q", "http://127.0.0.1:9/x"])
        #expect(run.status == 2)
    }

    @Test func `--max-time ends a slow file with exit 4 and keeps its partial`() async throws {
        try await withTestHTTPServer(serving: Self.resource) { server in
            server.faults = TestFaults(bytesPerSecond: 40_000)  // 26 s for the whole file
            try await withTemporaryDirectory { directory in
                let run = await runCLI(
                    ["-q", "--json", "--max-time", "1", "-o", "\(directory)/out.bin", server.url()]
                )
                #expect(run.elapsed < 15)  // 1 s, on a busy machine
                #expect(run.status == 4)
                #expect(run.standardError.contains("--max-time of 1 s reached (at byte "), "\(run.standardError)")
                let partial = run.json["partial"] as? [String: Any]
                #expect(((partial?["bytes"] as? NSNumber)?.intValue ?? 0) > 0)
            }
        }
    }

    /// Found by an outsider: a file that waited for a connection, then ran into --max-time with
    /// bytes still coming, ended "last: …: Callback aborted" (libcurl's words for pinfetch's own
    /// stop at the deadline).
    @Test func `--max-time reached mid-body after a wait for a connection says so in plain words`() async throws {
        try await withTestHTTPServer(serving: Self.resource) { server in
            server.faults = TestFaults(bytesPerSecond: 500_000)  // about 2 s a file
            try await withTemporaryDirectory { directory in
                let jobs = (0..<2).map {
                    FetchJob(mirrors: [server.url("/f\($0)")], destination: "\(directory)/f\($0)")
                }
                var options = FetchOptions()
                options.maximumConnectionsPerHost = 1
                options.maximumTime = 3  // the second file waits about 2 s, then has 1 s
                options.retries = 0
                let results = await Fetcher(options: options).run(jobs, parallelism: 2)
                // Whichever got the connection second waited for it.
                let failures = results.compactMap(\.error)
                let message = failures.first?.message ?? ""
                #expect(failures.count == 1 && failures[0].code == .network, "\(failures)")
                #expect(message.contains("--max-time of 3 s reached"), "\(message)")
                #expect(!message.localizedCaseInsensitiveContains("callback"), "\(message)")
            }
        }
    }

    @Test func `--max-time counts the waits between retries`() async throws {
        try await withTestHTTPServer(serving: Self.resource) { server in
            server.faults = TestFaults(status: 503, retryAfter: "30")
            try await withTemporaryDirectory { directory in
                let run = await runCLI(["-q", "--json", "--max-time", "2", "-o", "\(directory)/out.bin", server.url()])
                #expect(run.elapsed < 20)  // not the 30 s Retry-After
                #expect(run.status == 4)
                #expect(server.getRequests.count == 1)
            }
        }
    }

    @Test func `--limit-rate slows the transfer to about that rate`() async throws {
        try await withTestHTTPServer(serving: Self.resource) { server in
            try await withTemporaryDirectory { directory in
                let started = ContinuousClock.now
                let run = await runCLI(["-q", "--limit-rate", "400K", "-o", "\(directory)/out.bin", server.url()])
                #expect(run.status == 0)
                // 1 MiB at 400 KiB/s takes about 2.5 s; unlimited, it takes milliseconds here.
                #expect(ContinuousClock.now - started > .seconds(1.5))
            }
        }
    }
}
