import Foundation
import PinFetch
import Testing

/// The remote cache's read path: a pinned file comes from `<cache>/cas/<hex>` when the blob there
/// is right; a miss, a wrong blob, or a cache that is down, slow or dead only costs a line (a dead
/// one once a run), and the file comes from its mirror.
struct RemoteCacheTests {
    static let body = Array("a pinned toolchain\n".utf8)

    /// A cache server answering `/cas/<hex of body>` with `blob` (or 404 for `nil`).
    static func cache(_ server: TestHTTPServer, blob: [UInt8]?) {
        let hex = Fixtures.sha256(Self.body)
        server.handler = { request, _ in
            guard request.target == "/bazel/cas/\(hex)", let blob else { return TestResponse(status: 404) }
            return TestResponse(status: 200, body: blob)
        }
    }

    static func fetch(
        _ cache: String,
        _ origin: TestHTTPServer,
        to output: String,
        extra: [String] = []
    ) async -> CLIRun {
        await runCLI(
            ["--json", "--retries", "0", "--remote-cache", cache, "--sha256", Fixtures.sha256(Self.body), "-o", output]
                + extra + [origin.url("/t")]
        )
    }

    /// The JSON line's `mirrors`, as `"URL outcome"`.
    static func mirrors(_ run: CLIRun) -> [String] {
        (run.json["mirrors"] as? [[String: Any]] ?? []).map {
            "\($0["url"] as? String ?? "?") \($0["outcome"] as? String ?? "?")"
        }
    }

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

    @Test func `a hit comes from the cache: no request to the origin, and the JSON says so`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: [])) { cache in
            try await withTestHTTPServer(serving: TestResource(body: Self.body)) { origin in
                Self.cache(cache, blob: Self.body)
                try await withTemporaryDirectory { directory in
                    let run = await Self.fetch(
                        cache.baseURL + "/bazel/",
                        origin,
                        to: directory + "/t",
                        extra: ["-H", "X-Origin-Token: secret", "--remote-cache-header", "Authorization: Bearer cache"]
                    )
                    #expect(run.status == 0, "\(run.standardError)")
                    #expect(contents(directory + "/t") == Self.body)
                    #expect(origin.requests.isEmpty)
                    #expect(run.json["from_cache"] as? Bool == true)
                    #expect(run.string("cache") == "remote")
                    #expect(run.string("source") == cache.url("/bazel/cas/\(Fixtures.sha256(Self.body))"))
                    #expect(run.string("status") == "downloaded")
                    #expect(Self.mirrors(run) == ["\(run.string("source") ?? "") ok"])
                    #expect(run.int("downloaded_bytes") == Self.body.count)
                    // Only the cache's own header goes to the cache; -H goes to the mirrors only.
                    let asked = try #require(cache.getRequests.first)
                    #expect(asked.header("Authorization") == "Bearer cache")
                    #expect(asked.header("X-Origin-Token") == nil)
                    #expect(listing(directory) == ["t"])
                }
            }
        }
    }

    @Test(arguments: ["miss", "wrong blob", "refused", "cut short"])
    func `a miss, a wrong blob or a refusal falls back to the origin, never a wrong byte`(kind: String) async throws {
        try await withTestHTTPServer(serving: TestResource(body: [])) { cache in
            try await withTestHTTPServer(serving: TestResource(body: Self.body)) { origin in
                switch kind {
                case "miss": Self.cache(cache, blob: nil)
                case "wrong blob": Self.cache(cache, blob: Array("not the toolchain\n".utf8))
                case "cut short":
                    cache.handler = { _, _ in
                        TestResponse(
                            status: 200,
                            headers: [("Content-Length", "\(Self.body.count)")],
                            body: Self.body,
                            closeAfterBodyBytes: 4
                        )
                    }
                default: cache.handler = { _, _ in TestResponse(status: 403) }
                }
                try await withTemporaryDirectory { directory in
                    let run = await Self.fetch(cache.baseURL + "/bazel", origin, to: directory + "/t")
                    #expect(run.status == 0, "\(run.standardError)")
                    #expect(contents(directory + "/t") == Self.body)
                    #expect(origin.getRequests.count == 1)
                    #expect(run.json["from_cache"] as? Bool == false)
                    #expect(run.json["cache"] is NSNull)
                    #expect(run.string("source") == origin.url("/t"))
                    let warned = run.standardError.contains("remote cache")
                    #expect(warned == (kind != "miss"), "\(run.standardError)")  // a miss is quiet
                    // What the cache sent is reported too: listed before the origin, and counted.
                    let blob = cache.url("/bazel/cas/\(Fixtures.sha256(Self.body))")
                    // A body cut short is named as a mirror's would be.
                    let outcomes = [
                        "miss": [], "wrong blob": ["\(blob) mismatch"], "refused": ["\(blob) serverResponse"],
                        "cut short": ["\(blob) network"],
                    ]
                    #expect(Self.mirrors(run) == outcomes[kind]! + ["\(origin.url("/t")) ok"])
                    let wrong = ["wrong blob": "not the toolchain\n".utf8.count, "cut short": 4][kind] ?? 0
                    #expect(run.int("downloaded_bytes") == Self.body.count + wrong)
                    #expect(listing(directory) == ["t"])
                }
            }
        }
    }

    @Test func `a cache that is down or stalls costs at most its timeout`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: Self.body)) { cache in
            try await withTestHTTPServer(serving: TestResource(body: Self.body)) { origin in
                var faults = TestFaults()
                faults.stallAfterBodyBytes = 4  // headers and four bytes, then silence
                cache.faults = faults
                try await withTemporaryDirectory { directory in
                    let stalled = await Self.fetch(
                        cache.baseURL,
                        origin,
                        to: directory + "/t",
                        extra: ["--remote-cache-timeout", "1"]
                    )
                    #expect(stalled.status == 0, "\(stalled.standardError)")
                    #expect(contents(directory + "/t") == Self.body)
                    #expect(stalled.elapsed >= 1)  // it did wait for the stall
                    #expect(stalled.elapsed < 30)  // bounded: the cache stalls for good
                    #expect(cache.getRequests.count == 1)
                    #expect(stalled.standardError.contains("remote cache"), "\(stalled.standardError)")
                    let closed = try Nginx.freePort()  // nothing listens there
                    let down = await Self.fetch("http://127.0.0.1:\(closed)", origin, to: directory + "/u")
                    #expect(down.status == 0, "\(down.standardError)")
                    #expect(contents(directory + "/u") == Self.body)
                }
            }
        }
    }

    @Test func `an unpinned file never asks the cache`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: [])) { cache in
            try await withTestHTTPServer(serving: TestResource(body: Self.body)) { origin in
                Self.cache(cache, blob: Self.body)
                try await withTemporaryDirectory { directory in
                    let run = await runCLI(["--remote-cache", cache.baseURL, "-o", directory + "/t", origin.url("/t")])
                    #expect(run.status == 0, "\(run.standardError)")
                    #expect(cache.requests.isEmpty)
                }
            }
        }
    }

    @Test(arguments: ["ftp://cache.example.org", "cache.example.org", "http://cache.example.org/#x"])
    func `a remote cache that is no http URL is exit 2`(url: String) async {
        let run = await runCLI([
            "--remote-cache", url, "--sha256", String(repeating: "a", count: 64), "http://h.test/f",
        ])
        #expect(run.status == 2, "\(run.standardError)")
        #expect(run.standardError.contains("--remote-cache"))
    }

    /// The message shows the URL without its password, signature or token.
    @Test(arguments: [
        "http://u:PWSECRET@cache.test/bazel/?X-Amz-Signature=AMZSECRET#access_token=FRAGSECRET",
        "ftp://u:PWSECRET@cache.test/?token=TOKSECRET", "http://u:PWSECRET@[::1/x?token=TOKSECRET",
    ])
    func `a bad remote cache URL is refused without its secrets, naming what is wrong`(url: String) async {
        let run = await runCLI([
            "--remote-cache", url, "--sha256", String(repeating: "a", count: 64), "http://h.test/f",
        ])
        #expect(run.status == 2, "\(run.standardError)")
        #expect(run.standardError.hasPrefix("pinfetch: --remote-cache: "), "\(run.standardError)")
        #expect(!run.standardError.contains("SECRET"), "\(run.standardError)")
        #expect(run.standardError.split(separator: "\n").count == 1, "\(run.standardError)")
        if url.contains("#") { #expect(run.standardError.contains("fragment"), "\(run.standardError)") }
    }

    /// Hostile cache: a blob at 1 kB/s, or one without a Content-Length.
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

    /// Dead cache: a remote cache that sends no blob, for a batch of four files.
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

    /// User input: a --remote-cache URL with a query (a token).
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

    /// User input: a --remote-cache-header that frames or routes the request, or is no header.
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
