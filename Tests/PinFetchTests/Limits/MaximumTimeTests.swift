import Foundation
@preconcurrency import Glibc
import Testing

@testable import PinFetch

/// `--max-time` bounds a file's whole fetch, whatever it waits for: a slow body, the waits between
/// retries, another process's lock, the check of a large destination against the pin, a turn on a
/// busy host's connection, a silent remote cache and a refused piece's `Retry-After`. Past it the
/// file ends with exit 4, saying so in plain words.
struct MaximumTimeTests {
    /// A fetcher with the command line's defaults (retries and their waits) and `--max-time seconds`.
    static func bounded(_ seconds: Double) -> Fetcher {
        var options = FetchOptions()
        options.maximumTime = seconds
        return Fetcher(options: options)
    }

    /// Slow server: 40 kB/s, 26 s for the whole file.
    @Test func `--max-time ends a slow file with exit 4 and keeps its partial`() async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
            server.faults = TestFaults(bytesPerSecond: 40_000)  // 26 s for the whole file
            try await withTemporaryDirectory { directory in
                let result = await Self.bounded(1).run(server.url(), to: "\(directory)/out.bin")
                #expect(result.elapsedSeconds < 15)  // 1 s, on a busy machine
                #expect(result.error?.code == .network, "\(failure(result))")
                #expect(
                    result.error?.message.contains("--max-time of 1 s reached (at byte ") == true,
                    "\(failure(result))"
                )
                #expect((result.partial?.bytes ?? 0) > 0)
            }
        }
    }

    /// Hostile server: a 503 that asks for a 30 s Retry-After.
    @Test func `--max-time counts the waits between retries`() async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
            server.faults = TestFaults(status: 503, retryAfter: "30")
            try await withTemporaryDirectory { directory in
                let result = await Self.bounded(2).run(server.url(), to: "\(directory)/out.bin")
                #expect(result.elapsedSeconds < 20)  // not the 30 s Retry-After
                #expect(result.error?.code == .network, "\(failure(result))")
                #expect(server.getRequests.count == 1)
            }
        }
    }

    /// Another process: it holds the destination's lock for good.
    @Test func `--max-time holds while waiting for another process's lock`() async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let output = "\(directory)/o"
                let held = try DestinationLock(path: output + ".part.lock", timeout: 0)
                defer { held.release() }
                let result = await Fetcher.immediate(retries: 0) { $0.maximumTime = 1 }.run(server.url(), to: output)
                // The lock is held for good: without --max-time it would wait forever.
                #expect(result.elapsedSeconds < 30)
                #expect(result.error?.code == .network, "\(failure(result))")
            }
        }
    }

    /// Planted file: a sparse 64 GiB file at the destination, to hash against the pin.
    @Test func `--max-time holds while a large destination is checked against the pin`() async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let output = "\(directory)/o"
                #expect(truncate(output, 0) != 0 || true)
                _ = FileManager.default.createFile(atPath: output, contents: nil)
                #expect(truncate(output, 64 << 30) == 0)  // sparse: hashing it all takes most of a minute
                let result = await Fetcher.immediate(retries: 0) { $0.maximumTime = 0.5 }.run(
                    server.url(),
                    to: output,
                    verifying: try Pin(sha256Hex: Fixtures.sha256A)
                )
                #expect(result.elapsedSeconds < 30)  // hashing 64 GiB takes most of a minute
                #expect(result.error?.code == .network, "\(failure(result))")
                #expect(result.error?.message.contains("--max-time") == true, "\(failure(result))")
            }
        }
    }

    /// User input: a --limit-rate that would need 51 s for the file, and a --max-time of 1 s.
    @Test func `--max-time holds while keeping to --limit-rate`() async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let result = await Fetcher.immediate(retries: 0) {
                    $0.maximumTime = 1
                    $0.maximumReceiveRate = 20 << 10
                }.run(server.url(), to: "\(directory)/o")
                #expect(result.elapsedSeconds < 30)  // 1 MiB at 20 KiB/s is 51 s
                #expect(result.error?.code == .network, "\(failure(result))")
                #expect(result.error?.message.contains("--max-time") == true, "\(failure(result))")
            }
        }
    }

    /// Busy host: two slow files on its one connection, the second one reaching its deadline mid-body.
    @Test func `--max-time reached mid-body after a wait for a connection says so in plain words`() async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
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

    /// Busy host: six files of 6 s each queued for its one connection, 2.5 s allowed each.
    @Test(
        .enabled(if: ProcessInfo.processInfo.environment["PINFETCH_SKIP_E2E"] != "1", "PINFETCH_SKIP_E2E=1"),
        .timeLimit(.minutes(3))
    )
    func `--max-time ends files waiting for a connection on time, and says so`() async throws {
        try await withNginx { nginx in
            try await withTemporaryDirectory { work in
                // Six files of 6 s each over one connection (1400 KiB at /slow/: nginx sends the
                // first second's 200 KiB at once, then 200 KiB/s), 2.5 s allowed each: the first
                // cannot end before the deadline, so the others are still waiting at theirs (with
                // files of 2 s, a loaded machine let the first finish and gave each a turn).
                _ = try ProcessTests.serveFiles(nginx, count: 6, size: 1400 << 10, in: work) { nginx.slowURL($0) }
                let out = try EndToEndTests.makeDirectory(work + "/out")
                let run = try await ProcessTests().pinfetch(
                    ["-j", "6", "--max-connections-per-host", "1", "--max-time", "2.5", "--retries", "0"]
                        + ["-i", work + "/list", "-P", out],
                    logs: work + "/run"
                )
                #expect(run.status == 4, EndToEndTests.explain(run, nginx))
                let failures = run.lines.filter { $0["status"] as? String == "failed" }
                let messages = failures.compactMap { ($0["error"] as? [String: Any])?["message"] as? String }
                #expect(!messages.isEmpty && messages.allSatisfy { $0.contains("--max-time") }, "\(messages)")
                #expect(!messages.contains { $0.contains("resolve") || $0.contains("after 0 m") }, "\(messages)")
                // Each says why in plain words: it waited for the connection, or ran out of time
                // on it. (Their deadlines come within milliseconds of each other: on a loaded
                // machine each may get the connection in turn as the one before gives up, so which
                // wording a file gets is not fixed; the words are.)
                let plain = ["while waiting for a connection", "out of time", "Operation timed out"]
                #expect(messages.allSatisfy { message in plain.contains { message.contains($0) } }, "\(messages)")
                // Ended by the deadline, well before a file's 6 s (a loaded machine ends one
                // past 2.9 s: the margin is the mechanism's, not the clock's precision).
                let elapsed = run.lines.compactMap { $0["elapsed_s"] as? Double }
                #expect(elapsed.allSatisfy { $0 < 4.5 }, "\(elapsed)")
            }
        }
    }

    /// Hostile cache: a remote cache that sends its head, then nothing.
    @Test func `a silent cache takes at most half of --max-time: the origin still has time`() async throws {
        var faults = TestFaults()
        faults.stallAfterBodyBytes = 0  // the head, then silence
        try await RemoteCacheTests.withHostileCache(faults) { cache, origin in
            try await withTemporaryDirectory { directory in
                let result = try await RemoteCacheTests.fetch(cache.baseURL, origin, to: directory + "/t") {
                    $0.remoteCacheTimeout = 60
                    $0.maximumTime = 4
                }
                #expect(result.error == nil, "\(failure(result))")
                #expect(contents(directory + "/t") == RemoteCacheTests.body)
            }
        }
    }

    /// Hostile server: the first stream cut at 600 KiB, every piece refused with a 60 s Retry-After.
    @Test func `--max-time ends a wait for Retry-After on a refused piece`() async throws {
        let body = pseudoRandomBytes(3 << 20, seed: 156)
        try await withTestHTTPServer(serving: TestResource(body: body, etag: "\"v\"")) { server in
            var faults = TestFaults()
            faults.bytesPerSecond = 2 << 20
            faults.closeAfterBodyBytes = 600 << 10
            server.faults = faults
            server.handler = { request, _ in
                guard request.header("Range") != nil else { return nil }
                return TestResponse(status: 503, headers: [(name: "Retry-After", value: "60")])
            }
            try await withTemporaryDirectory { directory in
                var options = SegmentedDownloadTests.options(segments: 4, pieceSize: 256 << 10)
                options.maximumTime = 3
                let result = await Fetcher(options: options).run(
                    server.url(),
                    to: directory + "/f",
                    verifying: try Pin(sha256Hex: Fixtures.sha256(body))
                )
                #expect(result.error?.code == .network, "\(String(describing: result.error))")
                #expect(result.elapsedSeconds < 20)  // far below the 60 s the server asked for
                #expect(FileManager.default.fileExists(atPath: directory + "/f.part"))
            }
        }
    }
}
