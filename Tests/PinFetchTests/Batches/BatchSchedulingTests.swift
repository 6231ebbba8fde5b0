import Foundation
import PinFetch
import Synchronization
import Testing

/// Workers pass over files that would only wait for their host: files held for a busy host never
/// take every `-j` worker while another host's files wait.
struct BatchSchedulingTests {
    @Test func `another host's file is not held behind files waiting for a busy host`() async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { slow in
            try await withTestHTTPServer(serving: TestResource(body: Fixtures.b)) { fast in
                slow.faults = TestFaults(bytesPerSecond: 1_000_000)  // about a second per file
                try await withTemporaryDirectory { directory in
                    let jobs =
                        (0..<3).map {
                            FetchJob(mirrors: [slow.url("/a\($0)")], destination: "\(directory)/a\($0)")
                        } + [FetchJob(mirrors: [fast.url("/b")], destination: "\(directory)/b")]
                    var options = FetchOptions()
                    options.maximumConnectionsPerHost = 1
                    let ended = Mutex<[Int]>([])
                    let results = await Fetcher(options: options).run(jobs, parallelism: 2) { index, _ in
                        ended.withLock { $0.append(index) }
                    }
                    #expect(results.allSatisfy { $0.error == nil })
                    #expect(contents("\(directory)/b") == Fixtures.b)
                    // The second worker took b rather than a1 (which would wait for a0's connection).
                    #expect(ended.withLock { $0 } == [3, 0, 1, 2])
                    #expect(slow.getRequests.map(\.target) == ["/a0", "/a1", "/a2"])
                }
            }
        }
    }

    @Test func `with one worker the files go in order`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: Fixtures.b)) { one in
            try await withTestHTTPServer(serving: TestResource(body: Fixtures.b)) { other in
                try await withTemporaryDirectory { directory in
                    let jobs = [one.url("/1"), one.url("/2"), other.url("/3"), one.url("/4")].enumerated().map {
                        FetchJob(mirrors: [$0.element], destination: "\(directory)/\($0.offset)")
                    }
                    var options = FetchOptions()
                    options.maximumConnectionsPerHost = 1
                    let ended = Mutex<[Int]>([])
                    _ = await Fetcher(options: options).run(jobs, parallelism: 1) { index, _ in
                        ended.withLock { $0.append(index) }
                    }
                    #expect(ended.withLock { $0 } == [0, 1, 2, 3])
                }
            }
        }
    }
}
