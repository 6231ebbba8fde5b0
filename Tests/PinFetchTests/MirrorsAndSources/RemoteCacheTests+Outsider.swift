import Foundation
import PinFetch
import Testing

/// Inputs an outsider's pass on issue 16 found mishandled, kept as tests: a cache that trickles,
/// eats --max-time, sends a body without end, sits behind a query, or is dead for every file.
extension RemoteCacheTests {
    /// The cache answers every path with `body` under `faults`.
    static func withHostileCache(
        _ faults: TestFaults,
        body: [UInt8] = Self.body,
        _ run: (TestHTTPServer, TestHTTPServer) async throws -> Void
    ) async throws {
        try await withTestHTTPServer(serving: TestResource(body: body)) { cache in
            try await withTestHTTPServer(serving: TestResource(body: Self.body)) { origin in
                cache.faults = faults
                try await run(cache, origin)
            }
        }
    }

    @Test(arguments: ["trickle", "no length"])
    func `a blob that trickles or has no length is given up, and the origin used`(kind: String) async throws {
        var faults = TestFaults()
        if kind == "trickle" { faults.bytesPerSecond = 1000 } else { faults.omitContentLength = true }
        let big = Array(repeating: UInt8(ascii: "z"), count: 200_000)
        try await Self.withHostileCache(faults, body: big) { cache, origin in
            try await withTemporaryDirectory { directory in
                let run = await Self.fetch(
                    cache.baseURL,
                    origin,
                    to: directory + "/t",
                    extra: ["--remote-cache-timeout", "1"]
                )
                #expect(run.status == 0, "\(run.standardError)")
                #expect(contents(directory + "/t") == Self.body)
                #expect(run.elapsed < 30)  // 200 kB at 1 kB/s is 200 s
                #expect(origin.getRequests.count == 1)
                let why = kind == "trickle" ? "too slow or silent" : "without a Content-Length"
                #expect(run.standardError.contains(why), "\(run.standardError)")
            }
        }
    }

    @Test func `a dead cache is asked once per run, not once per file`() async throws {
        var faults = TestFaults()
        faults.stallAfterBodyBytes = 0
        try await Self.withHostileCache(faults) { cache, origin in
            // Four files of their own (four pinned the same would be one download and three copies).
            origin.handler = { request, _ in
                TestResponse(status: 200, body: ManifestFetchTests.body(Int(request.target.dropFirst(2)) ?? 0))
            }
            try await withTemporaryDirectory { directory in
                let lines = (0..<4).map {
                    "\(origin.url("/f\($0)")) sha256:\(Fixtures.sha256(ManifestFetchTests.body($0))) f\($0)"
                }
                try (lines.joined(separator: "\n") + "\n").write(
                    toFile: directory + "/list",
                    atomically: true,
                    encoding: .utf8
                )
                let run = await runCLI([
                    "-q", "--remote-cache", cache.baseURL, "--remote-cache-timeout", "1", "-i", directory + "/list",
                    "-P",
                    directory + "/out",
                ])
                #expect(run.status == 0, "\(run.standardError)")
                #expect(cache.getRequests.count == 1)
                #expect(origin.getRequests.count == 4)
                #expect(run.standardError.contains("not asking it again"), "\(run.standardError)")
            }
        }
    }

    @Test func `a cache URL with a query gets /cas/HEX on its path, the query kept`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: [])) { cache in
            try await withTestHTTPServer(serving: TestResource(body: Self.body)) { origin in
                let hex = Fixtures.sha256(Self.body)
                cache.handler = { request, _ in
                    guard request.target == "/bazel/cas/\(hex)?token=abc" else { return TestResponse(status: 404) }
                    return TestResponse(status: 200, body: Self.body)
                }
                try await withTemporaryDirectory { directory in
                    let run = await Self.fetch(cache.baseURL + "/bazel/?token=abc", origin, to: directory + "/t")
                    #expect(run.status == 0, "\(run.standardError)")
                    #expect(run.string("cache") == "remote", "\(cache.getRequests.map(\.target))")
                    #expect(origin.requests.isEmpty)
                }
            }
        }
    }

    @Test(arguments: ["Content-Length: 5", "Transfer-Encoding: chunked", "Host: evil.example", "bad header"])
    func `a remote cache header that frames or routes the request is exit 2`(header: String) async {
        let run = await runCLI([
            "--remote-cache", "http://cache.test", "--remote-cache-header", header, "--sha256",
            String(repeating: "a", count: 64), "http://h.test/f",
        ])
        #expect(run.status == 2, "\(run.standardError)")
        #expect(run.standardError.contains("--remote-cache-header"), "\(run.standardError)")
    }
}
