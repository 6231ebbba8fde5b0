import Foundation
@preconcurrency import Glibc
import PinFetch
import Synchronization
import Testing

/// Entries of one batch pinned the same (a release's `latest` alias, one toolchain for several
/// targets): the first is downloaded, the others are copies of it checked against the pin, with
/// no second request for the same bytes.
struct BatchSiblingTests {
    @Test(arguments: [1, 4])
    func `entries pinned the same are downloaded once and copied`(jobs: Int) async throws {
        try await withTestHTTPServer(serving: TestResource(body: [])) { server in
            ManifestFetchTests.serveFiles(server)
            try await withTemporaryDirectory { directory in
                let pin = try Pin(sha256Hex: Fixtures.sha256(ManifestFetchTests.body(1)))
                let other = try Pin(sha256Hex: Fixtures.sha256(ManifestFetchTests.body(2)))
                let entries: [(String, String, Pin)] = [
                    ("/f1", "tool-latest", pin), ("/f2", "other", other), ("/f1?copy=2", "tool-1.0", pin),
                    ("/f1", "linux/tool", pin),
                ]
                let batch = entries.map { path, name, pin in
                    FetchJob(mirrors: [server.url(path)], destination: "\(directory)/out/\(name)", pin: pin)
                }
                let results = await Fetcher.immediate(retries: 0).run(batch, parallelism: jobs)
                #expect(results.allSatisfy { $0.error == nil }, "\(results.map(failure))")
                for name in ["tool-latest", "tool-1.0", "linux/tool"] {
                    #expect(contents("\(directory)/out/\(name)") == ManifestFetchTests.body(1), "\(name)")
                }
                #expect(contents("\(directory)/out/other") == ManifestFetchTests.body(2))
                #expect(server.getRequests.map(\.target).sorted() == ["/f1", "/f2"])
                let reports = Dictionary(
                    uniqueKeysWithValues: results.map { ($0.path.replacing("\(directory)/out/", with: ""), $0) }
                )
                #expect(reports["tool-latest"]?.status == .downloaded)
                for copy in ["tool-1.0", "linux/tool"] {
                    #expect(reports[copy]?.status == .alreadyComplete, "\(copy)")
                    #expect(reports[copy]?.cache == .local, "\(copy)")
                    #expect(reports[copy]?.downloadedBytes == 0, "\(copy)")
                    #expect(reports[copy]?.attempts == 0, "\(copy)")
                }
                #expect(listing("\(directory)/out") == ["linux", "other", "tool-1.0", "tool-latest"])
            }
        }
    }

    /// If the first fails, the next downloads from its own URLs and the rest are copies of it
    /// (not every later entry downloading on its own).
    @Test(arguments: [1, 3])
    func `a first entry that failed hands over to the next one pinned the same`(
        jobs parallelism: Int
    )
        async throws
    {
        try await withTestHTTPServer(serving: TestResource(body: [])) { server in
            ManifestFetchTests.serveFiles(server, missing: ["/f1"])
            try await withTemporaryDirectory { directory in
                let body = ManifestFetchTests.body(1)
                server.handler = { request, _ in
                    request.target == "/gone" ? TestResponse(status: 404) : TestResponse(status: 200, body: body)
                }
                let pin = try Pin(sha256Hex: Fixtures.sha256(body))
                let jobs = [
                    FetchJob(mirrors: [server.url("/gone")], destination: "\(directory)/a", pin: pin),
                    FetchJob(mirrors: [server.url("/here")], destination: "\(directory)/b", pin: pin),
                    FetchJob(mirrors: [server.url("/also-here")], destination: "\(directory)/c", pin: pin),
                ]
                var options = FetchOptions()
                options.retries = 0
                let results = await Fetcher(options: options).run(jobs, parallelism: parallelism)
                #expect(results[0].error?.code == .serverResponse)
                #expect(results[1].error == nil)
                #expect(results[1].status == .downloaded)
                #expect(results[2].status == .alreadyComplete && results[2].fromCache)
                #expect(contents("\(directory)/b") == body)
                #expect(contents("\(directory)/c") == body)
                #expect(server.getRequests.map(\.target) == ["/gone", "/here"])
            }
        }
    }

    @Test(arguments: ["other bytes", "a symbolic link", "a FIFO"])
    func `a first file changed before the copy is caught: the entry is downloaded, with a warning`(
        change: String
    ) async throws {
        try await withTestHTTPServer(serving: TestResource(body: Fixtures.a)) { server in
            try await withTemporaryDirectory { directory in
                let pin = try Pin(sha256Hex: Fixtures.sha256A)
                let jobs = [
                    FetchJob(mirrors: [server.url("/1")], destination: "\(directory)/a", pin: pin),
                    FetchJob(mirrors: [server.url("/2")], destination: "\(directory)/b", pin: pin),
                ]
                let warnings = Mutex<[String]>([])
                var options = FetchOptions()
                options.events = { event in
                    if case .warning(_, let message) = event { warnings.withLock { $0.append(message) } }
                }
                // With one worker the second entry starts after the first one's result is out.
                let results = await Fetcher(options: options).run(jobs, parallelism: 1) { index, _ in
                    guard index == 0 else { return }
                    let first = "\(directory)/a"
                    switch change {
                    case "other bytes": try? Data(Fixtures.b).write(to: URL(filePath: first))
                    case "a symbolic link":  // to a right copy: still never read through a link
                        _ = rename(first, "\(directory)/moved")
                        _ = symlink("\(directory)/moved", first)
                    default:
                        _ = unlink(first)
                        _ = mkfifo(first, 0o600)
                    }
                }
                #expect(results.allSatisfy { $0.error == nil })
                #expect(contents("\(directory)/b") == Fixtures.a)
                #expect(results[1].status == .downloaded)
                #expect(server.getRequests.map(\.target) == ["/1", "/2"])
                let warning =
                    change == "other bytes" ? "no longer holds the pinned bytes" : "is no longer a regular file"
                #expect(warnings.withLock { $0 }.contains { $0.contains(warning) }, "\(warnings.withLock { $0 })")
                #expect(listing(directory).filter { $0 != "moved" } == ["a", "b"])
            }
        }
    }

    /// Many entries of few pins over two hosts, one connection each, some first entries failing:
    /// every entry ends (no worker waits for one that no worker has), each pin is fetched once
    /// by an entry that works, and every file that ends well holds its bytes.
    @Test(.timeLimit(.minutes(1)), arguments: [1, 2, 5])
    func `many entries pinned alike over busy hosts all end, each pin fetched once`(
        jobs parallelism: Int
    )
        async throws
    {
        try await withTestHTTPServer(serving: TestResource(body: [])) { one in
            try await withTestHTTPServer(serving: TestResource(body: [])) { two in
                for server in [one, two] {
                    server.handler = { request, _ in
                        let path = request.target
                        guard !path.hasPrefix("/gone"), let pin = Int(path.split(separator: "/").last ?? "") else {
                            return TestResponse(status: 404)
                        }
                        return TestResponse(status: 200, body: ManifestFetchTests.body(pin))
                    }
                }
                try await withTemporaryDirectory { directory in
                    // Entry i has pin i % 4; the first entries of pins 0 and 1 go to a missing path.
                    let jobs = try (0..<24).map { index in
                        let pin = index % 4
                        let server = index % 3 == 0 ? one : two
                        let path = index < 2 ? "/gone/\(pin)" : "/f\(index)/\(pin)"
                        return FetchJob(
                            mirrors: [server.url(path)],
                            destination: "\(directory)/out\(index)",
                            pin: try Pin(sha256Hex: Fixtures.sha256(ManifestFetchTests.body(pin)))
                        )
                    }
                    var options = FetchOptions()
                    options.retries = 0
                    options.maximumConnectionsPerHost = 1
                    let results = await Fetcher(options: options).run(jobs, parallelism: parallelism)
                    #expect(results.count == 24)
                    #expect(results.indices.filter { results[$0].error != nil } == [0, 1])
                    for index in results.indices where index >= 2 {
                        #expect(contents("\(directory)/out\(index)") == ManifestFetchTests.body(index % 4), "\(index)")
                    }
                    let fetched = (one.getRequests + two.getRequests).map(\.target).filter { !$0.hasPrefix("/gone") }
                    #expect(fetched.count == 4, "\(fetched)")  // one download per pin
                }
            }
        }
    }
}
