import Foundation
import PinFetch
import Testing

/// Talking to the user and bounding the speed: `-v` shows requests, the answers' deciding fields
/// and decisions; retries print a line unless `-q`; `--limit-rate` bounds a file's speed (and
/// `MaximumTimeTests` its time).
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

    @Test func `--limit-rate slows the transfer to about that rate`() async throws {
        try await withTestHTTPServer(serving: Self.resource) { server in
            try await withTemporaryDirectory { directory in
                let started = ContinuousClock.now
                let limited = Fetcher.immediate { $0.maximumReceiveRate = 400 << 10 }
                let result = await limited.run(server.url(), to: "\(directory)/out.bin")
                #expect(result.error == nil, "\(failure(result))")
                // 1 MiB at 400 KiB/s takes about 2.5 s; unlimited, it takes milliseconds here.
                #expect(ContinuousClock.now - started > .seconds(1.5))
            }
        }
    }
}
