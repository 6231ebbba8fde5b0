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

    /// Fetches `origin`'s `/t`, pinned to ``body``, to `output` in one attempt with the remote
    /// cache `cache`, what the events said going to `notes`, with what `configure` sets.
    static func fetch(
        _ cache: String,
        _ origin: TestHTTPServer,
        to output: String,
        notes: EventNotes = EventNotes(),
        _ configure: (inout FetchOptions) -> Void = { _ in }
    ) async throws -> FetchResult {
        let fetcher = Fetcher.immediate(retries: 0) { options in
            options.remoteCache = cache
            options.events = notes.record
            configure(&options)
        }
        return await fetcher.run(
            origin.url("/t"),
            to: output,
            verifying: try Pin(sha256Hex: Fixtures.sha256(Self.body))
        )
    }

    /// The result's `mirrors`, as `"URL outcome"`.
    static func mirrors(_ result: FetchResult) -> [String] {
        result.mirrors.map { "\($0.url) \($0.outcome)" }
    }

    /// The cache answers every path with `body` (or `blob`) under `faults`.
    static func withHostileCache(
        _ faults: TestFaults,
        body: [UInt8] = Self.body,
        blob: TestResource? = nil,
        _ run: (TestHTTPServer, TestHTTPServer) async throws -> Void
    ) async throws {
        try await withTestHTTPServer(serving: blob ?? TestResource(body: body)) { cache in
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
                    let result = try await Self.fetch(cache.baseURL + "/bazel/", origin, to: directory + "/t") {
                        $0.headers = ["X-Origin-Token: secret"]
                        $0.remoteCacheHeaders = ["Authorization: Bearer cache"]
                    }
                    #expect(result.error == nil, "\(failure(result))")
                    #expect(contents(directory + "/t") == Self.body)
                    #expect(origin.requests.isEmpty)
                    #expect(result.fromCache == true)
                    #expect(result.cache == .remote)
                    #expect(result.source == cache.url("/bazel/cas/\(Fixtures.sha256(Self.body))"))
                    #expect(result.status == .downloaded)
                    #expect(Self.mirrors(result) == ["\(result.source ?? "") ok"])
                    #expect(result.downloadedBytes == Int64(Self.body.count))
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
                    let notes = EventNotes()
                    let result = try await Self.fetch(
                        cache.baseURL + "/bazel",
                        origin,
                        to: directory + "/t",
                        notes: notes
                    )
                    #expect(result.error == nil, "\(failure(result))")
                    #expect(contents(directory + "/t") == Self.body)
                    #expect(origin.getRequests.count == 1)
                    #expect(result.fromCache == false)
                    #expect(result.cache == nil)
                    #expect(result.source == origin.url("/t"))
                    #expect(notes.said("remote cache") == (kind != "miss"), "\(notes.all)")  // a miss is quiet
                    // What the cache sent is reported too: listed before the origin, and counted.
                    let blob = cache.url("/bazel/cas/\(Fixtures.sha256(Self.body))")
                    // A body cut short is named as a mirror's would be.
                    let outcomes = [
                        "miss": [], "wrong blob": ["\(blob) mismatch"], "refused": ["\(blob) serverResponse"],
                        "cut short": ["\(blob) network"],
                    ]
                    #expect(Self.mirrors(result) == outcomes[kind]! + ["\(origin.url("/t")) ok"])
                    let wrong = ["wrong blob": "not the toolchain\n".utf8.count, "cut short": 4][kind] ?? 0
                    #expect(result.downloadedBytes == Int64(Self.body.count + wrong))
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
                    let notes = EventNotes()
                    let stalled = try await Self.fetch(cache.baseURL, origin, to: directory + "/t", notes: notes) {
                        $0.remoteCacheTimeout = 1
                    }
                    #expect(stalled.error == nil, "\(failure(stalled))")
                    #expect(contents(directory + "/t") == Self.body)
                    #expect(stalled.elapsedSeconds >= 1)  // it did wait for the stall
                    #expect(stalled.elapsedSeconds < 30)  // bounded: the cache stalls for good
                    #expect(cache.getRequests.count == 1)
                    #expect(notes.said("remote cache"), "\(notes.all)")
                    let closed = try Nginx.freePort()  // nothing listens there
                    let down = try await Self.fetch("http://127.0.0.1:\(closed)", origin, to: directory + "/u")
                    #expect(down.error == nil, "\(failure(down))")
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
                    let fetcher = Fetcher.immediate { $0.remoteCache = cache.baseURL }
                    let result = await fetcher.run(origin.url("/t"), to: directory + "/t")
                    #expect(result.error == nil, "\(failure(result))")
                    #expect(cache.requests.isEmpty)
                }
            }
        }
    }

    @Test(arguments: [
        "ftp://cache.example.org", "cache.example.org", "http://cache.example.org/#x",
        "http://cache.example.org/#\u{301}x",
    ])
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
                let notes = EventNotes()
                let result = try await Self.fetch(cache.baseURL, origin, to: directory + "/t", notes: notes) {
                    $0.remoteCacheTimeout = 1
                }
                #expect(result.error == nil, "\(failure(result))")
                #expect(contents(directory + "/t") == Self.body)
                #expect(result.elapsedSeconds < 30)  // 200 kB at 1 kB/s is 200 s
                #expect(origin.getRequests.count == 1)
                let why = kind == "trickle" ? "too slow or silent" : "without a Content-Length"
                #expect(notes.said(why), "\(notes.all)")
            }
        }
    }

    /// A blob that trickles just above the stall floor (40 kB/s, over 16 KiB/s) would hold the
    /// fetch for as long as it announced (10^9 bytes: 7 hours at that rate, 16 minutes at
    /// 1 MiB/s): it must keep up with 1 MiB/s after the first timeout.
    @Test func `a blob just above the stall floor is given up seconds after the timeout, whatever its length`()
        async throws
    {
        var faults = TestFaults()
        faults.bytesPerSecond = 40_000
        var blob = TestResource(body: Array(repeating: UInt8(ascii: "z"), count: 4096))
        blob.repeatedLength = 1_000_000_000
        try await Self.withHostileCache(faults, blob: blob) { cache, origin in
            origin.faults = TestFaults(headStatus: 405)  // the origin's length unknown: the rate decides
            try await withTemporaryDirectory { directory in
                let notes = EventNotes()
                let result = try await Self.fetch(cache.baseURL, origin, to: directory + "/t", notes: notes) {
                    $0.remoteCacheTimeout = 1
                }
                #expect(result.error == nil, "\(failure(result))")
                #expect(contents(directory + "/t") == Self.body)
                #expect(result.elapsedSeconds < 60)
                #expect(origin.getRequests.count == 1)
                #expect(notes.said("slower than 1 MiB/s on average"), "\(notes.all)")
                #expect(listing(directory) == ["t"])
            }
        }
    }

    /// A blob announced larger than the room beside the destination is not taken: a cache never
    /// fills the disk.
    @Test func `a blob larger than the free space is refused before a byte is written`() async throws {
        var blob = TestResource(body: Array(repeating: UInt8(ascii: "z"), count: 4096))
        blob.repeatedLength = 1 << 50  // 1 PiB
        try await Self.withHostileCache(TestFaults(), blob: blob) { cache, origin in
            try await withTemporaryDirectory { directory in
                let notes = EventNotes()
                let result = try await Self.fetch(cache.baseURL, origin, to: directory + "/t", notes: notes)
                #expect(result.error == nil, "\(failure(result))")
                #expect(contents(directory + "/t") == Self.body)
                #expect(result.downloadedBytes == Int64(Self.body.count))
                #expect(notes.said("free beside the destination"), "\(notes.all)")
            }
        }
    }

    /// Two `Content-Length` fields that disagree: not taken, and the warning says why (it said
    /// "without a Content-Length").
    @Test func `a blob with conflicting Content-Length fields is refused for its framing`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: Self.body)) { cache in
            cache.handler = { _, _ in
                TestResponse(
                    status: 200,
                    headers: [(name: "Content-Length", value: "19"), (name: "Content-Length", value: "20")],
                    body: Self.body
                )
            }
            try await withTestHTTPServer(serving: TestResource(body: Self.body)) { origin in
                try await withTemporaryDirectory { directory in
                    let notes = EventNotes()
                    let result = try await Self.fetch(cache.baseURL, origin, to: directory + "/t", notes: notes)
                    #expect(result.error == nil, "\(failure(result))")
                    #expect(contents(directory + "/t") == Self.body)
                    #expect(origin.getRequests.count == 1)
                    #expect(notes.said("framing is broken"), "\(notes.all)")
                }
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
                let jobs = try (0..<4).map {
                    FetchJob(
                        mirrors: [origin.url("/f\($0)")],
                        destination: directory + "/f\($0)",
                        pin: try Pin(sha256Hex: Fixtures.sha256(ManifestFetchTests.body($0)))
                    )
                }
                let notes = EventNotes()
                let fetcher = Fetcher.immediate { options in
                    options.remoteCache = cache.baseURL
                    options.remoteCacheTimeout = 1
                    options.events = notes.record
                }
                let results = await fetcher.run(jobs)
                #expect(results.allSatisfy { $0.error == nil }, "\(results.map(failure))")
                #expect(cache.getRequests.count == 1)
                #expect(origin.getRequests.count == 4)
                #expect(notes.warned("not asking it again"), "\(notes.warnings)")
            }
        }
    }

    /// User input: a --remote-cache URL with a query (a token), also when a combining mark
    /// follows its `?` (one Swift `Character` with it).
    @Test(arguments: [("?token=abc", "?token=abc"), ("?\u{301}token=abc", "?%CC%81token=abc")])
    func `a cache URL with a query gets /cas/HEX on its path, the query kept`(query: String, sent: String) async throws
    {
        try await withTestHTTPServer(serving: TestResource(body: [])) { cache in
            try await withTestHTTPServer(serving: TestResource(body: Self.body)) { origin in
                let hex = Fixtures.sha256(Self.body)
                cache.handler = { request, _ in
                    guard request.target == "/bazel/cas/\(hex)\(sent)" else { return TestResponse(status: 404) }
                    return TestResponse(status: 200, body: Self.body)
                }
                try await withTemporaryDirectory { directory in
                    let result = try await Self.fetch(cache.baseURL + "/bazel/" + query, origin, to: directory + "/t")
                    #expect(result.error == nil, "\(failure(result))")
                    #expect(result.cache == .remote, "\(cache.getRequests.map(\.target))")
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
