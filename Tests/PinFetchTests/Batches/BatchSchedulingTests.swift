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

    /// With `-j 1` one file transfers at a time, in order (a file that commits does not count:
    /// the next one's transfer is under way then).
    @Test func `with one transfer slot the files start in order`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: Fixtures.b)) { one in
            try await withTestHTTPServer(serving: TestResource(body: Fixtures.b)) { other in
                try await withTemporaryDirectory { directory in
                    let jobs = [one.url("/1"), one.url("/2"), other.url("/3"), one.url("/4")].enumerated().map {
                        FetchJob(mirrors: [$0.element], destination: "\(directory)/\($0.offset)")
                    }
                    var options = FetchOptions()
                    options.maximumConnectionsPerHost = 1
                    let started = Mutex<[String]>([])
                    options.events = { event in
                        guard case .request(let path, _, _, _) = event else { return }
                        started.withLock { if !$0.contains(path) { $0.append(path) } }
                    }
                    let results = await Fetcher(options: options).run(jobs, parallelism: 1)
                    #expect(results.allSatisfy { $0.error == nil })
                    #expect(started.withLock { $0 } == (0..<4).map { "\(directory)/\($0)" })
                }
            }
        }
    }

    /// A `-j` slot is a transfer in flight: the first file's commit is held (in its last step
    /// before the rename) until the server has seen the second file's request, which comes only
    /// if the slot was given up when the commit began.
    @Test func `a file that commits does not hold its transfer slot`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: Fixtures.b)) { server in
            try await withTemporaryDirectory { directory in
                let jobs = (1...2).map { FetchJob(mirrors: [server.url("/\($0)")], destination: "\(directory)/\($0)") }
                let held = Mutex<(calls: Int, sawSecond: Bool)>((0, false))
                var options = FetchOptions()
                options.stopRequested = {
                    guard
                        held.withLock({ state in
                            state.calls += 1
                            return state.calls == 1
                        })
                    else { return false }
                    let deadline = Date().addingTimeInterval(20)
                    while Date() < deadline, !server.getRequests.contains(where: { $0.target == "/2" }) {
                        Thread.sleep(forTimeInterval: 0.01)
                    }
                    let saw = server.getRequests.contains { $0.target == "/2" }
                    held.withLock { $0.sawSecond = saw }
                    return false
                }
                let results = await Fetcher(options: options).run(jobs, parallelism: 1)
                #expect(results.allSatisfy { $0.error == nil })
                #expect(held.withLock { $0.sawSecond }, "the second file's GET came while the first one committed")
                #expect(contents("\(directory)/1") == Fixtures.b)
                #expect(contents("\(directory)/2") == Fixtures.b)
            }
        }
    }
}
