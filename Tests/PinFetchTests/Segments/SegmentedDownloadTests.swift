import Foundation
import Synchronization
import Testing

@testable import PinFetch

/// One file over several connections (`--segments`), against the in-process server:
/// the right bytes whatever the pieces' answers, and one stream when segments cannot be trusted.
struct SegmentedDownloadTests {
    static let etag = "\"v1\""

    /// Options with small pieces, so a small file has many.
    static func options(segments: Int = 4, pieceSize: Int64 = 64 << 10) -> FetchOptions {
        var options = FetchOptions()
        options.segments = segments
        options.segmentPieceSize = pieceSize
        options.retryDelay = 0
        return options
    }

    /// Whether `path` holds `bytes` (a failure names no megabytes of bytes).
    static func holds(_ path: String, _ bytes: [UInt8]) -> Bool { fileHolds(path, bytes) }

    /// The resource `body` under ``etag`` with its `Repr-Digest` (RFC 9530), which lets an
    /// unpinned download use segments.
    static func digested(_ body: [UInt8]) -> TestResource {
        var resource = TestResource(body: body, etag: Self.etag)
        resource.extraHeaders = [("Repr-Digest", DigestFieldTests.field("sha-256", Fixtures.sha256(body)))]
        return resource
    }

    /// A segmented fetch of the server's file into `output` (pinned to `pin`, or checked by the
    /// server's digest), cancelled once pieces ahead of its crawling first piece came in (the
    /// server must throttle answers without `Range`).
    static func cancelledWithPiecesAhead(
        _ server: TestHTTPServer,
        to output: String,
        verifying pin: Pin? = nil
    ) async throws -> FetchResult {
        var options = Self.options(segments: 4, pieceSize: 256 << 10)
        options.retries = 0
        let first = Task { [options] in await Fetcher(options: options).run(server.url(), to: output, verifying: pin) }
        // Until two pieces beside the first were sent: the first crawls at 16 KiB/s (16 s for its
        // 256 KiB), so 768 KiB sent holds at least 512 KiB of the others. Not a time bound: the
        // deadline only ends a wait that can no longer succeed.
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline, Self.ranged(server).count < 3 || server.bodyBytesSent < 768 << 10 {
            try await Task.sleep(for: .milliseconds(20))
        }
        try await Task.sleep(for: .milliseconds(300))
        first.cancel()
        return await first.value
    }

    static func ranged(_ server: TestHTTPServer) -> [RecordedRequest] {
        server.getRequests.filter { $0.header("Range") != nil }
    }

    @Test func `a file over four connections has its bytes, hashed without reading back`() async throws {
        let body = pseudoRandomBytes((3 << 20) + 123, seed: 141)
        try await withTestHTTPServer(serving: TestResource(body: body, etag: Self.etag)) { server in
            // Each connection is held to 2 MiB/s, as a mirror's per-connection limit: on an
            // unthrottled loopback the first stream may take every piece before the others ask.
            var faults = TestFaults()
            faults.bytesPerSecond = 2 << 20
            server.faults = faults
            try await withTemporaryDirectory { directory in
                let output = directory + "/f"
                let result = await Fetcher(options: Self.options()).run(
                    server.url(),
                    to: output,
                    verifying: try Pin(sha256Hex: Fixtures.sha256(body))
                )
                #expect(result.error == nil, "\(String(describing: result.error))")
                #expect(Self.holds(output, body))
                #expect(result.rehashedBytes == 0)
                // The test server sends a piece's first 64 KiB at once, so the first stream, which
                // spent its burst, lags and may be raced: bytes both streams brought count twice.
                #expect(result.downloadedBytes >= Int64(body.count))
                let ranged = Self.ranged(server)
                #expect(ranged.count >= 3, "\(server.getRequests.map { $0.header("Range") ?? "-" })")
                #expect(ranged.allSatisfy { $0.header("If-Range") == Self.etag })
                #expect(listing(directory) == ["f"])
            }
        }
    }

    @Test func `a piece answered for another representation starts the file over from byte 0`() async throws {
        let old = pseudoRandomBytes(1 << 20, seed: 142)
        let new = pseudoRandomBytes(1 << 20, seed: 143)
        // Each with its Repr-Digest, so that the unpinned download uses segments.
        try await withTestHTTPServer(serving: Self.digested(old)) { server in
            var faults = TestFaults()
            faults.bytesPerSecond = 256 << 10  // so the other connections ask for pieces before the first is done
            server.faults = faults
            let changed = Atomic<Bool>(false)
            server.handler = { request, _ in
                // The file changes on the server while the first pieces are asked for.
                guard request.header("Range") != nil, !changed.exchange(true, ordering: .relaxed) else { return nil }
                var changedResource = Self.digested(new)
                changedResource.etag = "\"v2\""
                server.resource = changedResource
                return nil
            }
            try await withTemporaryDirectory { directory in
                let output = directory + "/f"
                let result = await Fetcher(options: Self.options()).run(server.url(), to: output)
                #expect(result.error == nil, "\(String(describing: result.error))")
                #expect(Self.holds(output, new))
                #expect(result.restarts >= 1)
                #expect(result.digest == Fixtures.sha256(new))
            }
        }
    }

    @Test(arguments: [true, false])
    func `a piece without a validator or a length stops the segments but keeps the prefix`(
        noValidator: Bool
    )
        async throws
    {
        let body = pseudoRandomBytes(4 << 20, seed: 149)
        try await withTestHTTPServer(serving: TestResource(body: body, etag: Self.etag)) { server in
            var faults = TestFaults()
            faults.bytesPerSecond = 1 << 20
            server.faults = faults
            server.handler = { request, _ in
                // Piece requests (`bytes=a-b`) get a 206 with no ETag, or with `*` for the length.
                guard let range = request.header("Range"), !range.hasSuffix("-") else { return nil }
                let bounds = range.dropFirst("bytes=".count).split(separator: "-").compactMap { Int($0) }
                guard bounds.count == 2 else { return nil }
                let total = noValidator ? "\(body.count)" : "*"
                var headers = [("Content-Range", "bytes \(bounds[0])-\(bounds[1])/\(total)")]
                if !noValidator { headers.append(("ETag", Self.etag)) }
                return TestResponse(status: 206, headers: headers, body: Array(body[bounds[0]...bounds[1]]))
            }
            try await withTemporaryDirectory { directory in
                let result = await Fetcher(options: Self.options()).run(
                    server.url(),
                    to: directory + "/f",
                    verifying: try Pin(sha256Hex: Fixtures.sha256(body))
                )
                #expect(result.error == nil, "\(String(describing: result.error))")
                #expect(Self.holds(directory + "/f", body))
                // Not a sign of another representation: no restart, the hashed prefix kept.
                #expect(result.restarts == 0)
                #expect(Self.ranged(server).contains { !($0.header("Range") ?? "").hasSuffix("-") })
                #expect(result.downloadedBytes < Int64(body.count) + (512 << 10), "\(result.downloadedBytes)")
            }
        }
    }

    @Test func `a server that ignores Range gets one stream, and the file is right`() async throws {
        let body = pseudoRandomBytes(4 << 20, seed: 144)
        try await withTestHTTPServer(serving: TestResource(body: body, etag: Self.etag)) { server in
            var faults = TestFaults()
            faults.ignoreRange = true
            faults.bytesPerSecond = 1 << 20
            server.faults = faults
            try await withTemporaryDirectory { directory in
                let output = directory + "/f"
                let result = await Fetcher(options: Self.options()).run(
                    server.url(),
                    to: output,
                    verifying: try Pin(sha256Hex: Fixtures.sha256(body))
                )
                #expect(result.error == nil, "\(String(describing: result.error))")
                #expect(Self.holds(output, body))
                #expect(!Self.ranged(server).isEmpty)  // pieces were asked for
                // The pieces' 200s stopped the segments once; the rest came over one stream.
                #expect(server.getRequests.count <= 6, "\(server.getRequests.map { $0.header("Range") ?? "-" })")
            }
        }
    }

    @Test func `a lagging first piece is asked for again on a free connection, and little is read back`()
        async throws
    {
        let body = pseudoRandomBytes(2 << 20, seed: 147)
        try await withTestHTTPServer(serving: TestResource(body: body, etag: Self.etag)) { server in
            var faults = TestFaults()
            faults.unrangedBytesPerSecond = 128 << 10  // the first stream lags; the pieces come fast
            server.faults = faults
            try await withTemporaryDirectory { directory in
                let output = directory + "/f"
                var options = Self.options(segments: 4, pieceSize: 256 << 10)
                options.segmentMemoryBound = 1 << 20
                let result = await Fetcher(options: options).run(
                    server.url(),
                    to: output,
                    verifying: try Pin(sha256Hex: Fixtures.sha256(body))
                )
                #expect(result.error == nil, "\(String(describing: result.error))")
                #expect(Self.holds(output, body))
                // Piece 0 again, from where the first stream stood: the lagging copy lost the race.
                let ranges = Self.ranged(server).compactMap { $0.header("Range") }
                // (the first stream may have gone on into piece 1 before the others began)
                let again = ranges.filter {
                    ($0.dropFirst(6).split(separator: "-").first.flatMap { Int($0) } ?? 0) % (256 << 10) != 0
                }
                #expect(again.count == 1, "\(ranges)")
                // The helpers start at once (the lead is held back): what they bring past the
                // memory bound while piece 0 lags is read back when the hash reaches it, and never
                // more than that.
                #expect(result.rehashedBytes <= Int64(body.count - (256 << 10) - options.segmentMemoryBound))
                // Bytes both streams brought count as downloaded: at most the rest of piece 0 twice.
                #expect(result.downloadedBytes >= Int64(body.count))
                #expect(result.downloadedBytes <= Int64(body.count) + (256 << 10))
            }
        }
    }

    @Test func `a first piece that lags however it is asked for: pieces past the memory bound are read back`()
        async throws
    {
        let body = pseudoRandomBytes(2 << 20, seed: 151)
        try await withTestHTTPServer(serving: TestResource(body: body, etag: Self.etag)) { server in
            var faults = TestFaults()
            faults.unrangedBytesPerSecond = 128 << 10
            // The first stream may go on into the next pieces before others start: a copy asked
            // for on a free connection lags as well, for any of the first four pieces.
            faults.throttledBefore = 1 << 20
            server.faults = faults
            try await withTemporaryDirectory { directory in
                let output = directory + "/f"
                var options = Self.options(segments: 4, pieceSize: 256 << 10)
                options.segmentMemoryBound = 512 << 10
                let result = await Fetcher(options: options).run(
                    server.url(),
                    to: output,
                    verifying: try Pin(sha256Hex: Fixtures.sha256(body))
                )
                #expect(result.error == nil, "\(String(describing: result.error))")
                #expect(Self.holds(output, body))
                #expect(result.rehashedBytes > 0)
                // What waited ahead beyond the bound; never the first piece, nor what fit in memory.
                #expect(result.rehashedBytes <= Int64(body.count) - (256 << 10) - (512 << 10))
            }
        }
    }

    /// The rerun keeps the pieces with any number of connections, one too.
    @Test(arguments: [4, 1])
    func `a cancelled segmented download keeps its pieces, and the next run reads them back instead of fetching them`(
        rerunSegments: Int
    ) async throws {
        let body = pseudoRandomBytes(2 << 20, seed: 146)
        try await withTestHTTPServer(serving: TestResource(body: body, etag: Self.etag)) { server in
            // The first piece crawls; the others come fast, so they wait ahead of the hash.
            var faults = TestFaults()
            faults.unrangedBytesPerSecond = 16 << 10  // its first piece alone takes 16 s
            faults.throttledBefore = 256 << 10  // asked for again, it crawls as well
            server.faults = faults
            try await withTemporaryDirectory { directory in
                let output = directory + "/f"
                let pin = try Pin(sha256Hex: Fixtures.sha256(body))
                let stopped = try await Self.cancelledWithPiecesAhead(server, to: output, verifying: pin)
                #expect(stopped.error?.code == .cancelled, "\(server.getRequests.map { $0.header("Range") ?? "-" })")
                let record = CheckpointFile.read(output + ".part.state")?.durable.first
                let spans = record?.spans ?? []
                let kept = spans.reduce(Int64(0)) { $0 + $1[1] - $1[0] }
                #expect(kept >= 256 << 10, "\(String(describing: record))")
                let prefix = record?.offset ?? 0

                server.faults = TestFaults()
                let before = server.getRequests.count
                let options = Self.options(segments: rerunSegments, pieceSize: 256 << 10)
                let result = await Fetcher(options: options).run(
                    server.url(),
                    to: output,
                    verifying: try Pin(sha256Hex: Fixtures.sha256(body))
                )
                #expect(result.error == nil, "\(String(describing: result.error))")
                #expect(Self.holds(output, body))
                // The kept pieces were read back into the hash, not fetched again, and count as
                // earlier data kept: resumed + downloaded make the file.
                #expect(result.resumedFrom >= prefix + kept - (256 << 10))
                #expect(result.resumedFrom + result.downloadedBytes == Int64(body.count))
                #expect(result.rehashedBytes >= kept - (256 << 10))
                let asked = server.getRequests.dropFirst(before).compactMap { $0.header("Range") }
                #expect(!asked.isEmpty)
                #expect(listing(directory) == ["f"])
            }
        }
    }

    /// A torn or lost write, or a stray one, anywhere in a span kept ahead of the hash: the span
    /// is read back whole before a resume keeps it, and fetched again when its checksum differs.
    /// No pin: the server's digest allows the segments, and would only find the damage at the end.
    @Test(arguments: ["start", "middle", "end", "nowhere"])
    func `a kept span damaged anywhere since its checkpoint is fetched again, not trusted`(
        at place: String
    ) async throws {
        let body = pseudoRandomBytes(2 << 20, seed: 150)
        try await withTestHTTPServer(serving: Self.digested(body)) { server in
            var faults = TestFaults()
            faults.unrangedBytesPerSecond = 16 << 10  // the first piece crawls, the others wait ahead
            faults.throttledBefore = 256 << 10
            server.faults = faults
            try await withTemporaryDirectory { directory in
                let output = directory + "/f"
                _ = try await Self.cancelledWithPiecesAhead(server, to: output)
                let record = try #require(CheckpointFile.read(output + ".part.state")?.durable.first)
                let span = try #require(record.spans?.first)
                #expect(record.spanChecksums?.count == record.spans?.count)
                // 4 KiB of zeros at the span's start, in its middle, or at its end; or none (the
                // span is then kept).
                if let at = ["start": span[0], "middle": (span[0] + span[1]) / 2, "end": span[1] - 4096][place] {
                    let handle = try #require(FileHandle(forUpdatingAtPath: output + ".part"))
                    try handle.seek(toOffset: UInt64(at))
                    handle.write(Data(count: 4096))
                    try handle.close()
                }

                server.faults = TestFaults()
                let before = server.getRequests.count
                let result = await Fetcher(options: Self.options(segments: 4, pieceSize: 256 << 10)).run(
                    server.url(),
                    to: output
                )
                #expect(result.error == nil, "\(String(describing: result.error))")
                #expect(Self.holds(output, body))
                #expect(result.digest == Fixtures.sha256(body))
                // Found at the resume, not by the digest at the end: no restart, and the span's
                // bytes came again (one stream may fetch them on the way).
                #expect(result.restarts == 0)
                let asked = server.getRequests.dropFirst(before).compactMap { $0.header("Range") }
                let kept = result.downloadedBytes <= Int64(body.count) - (span[1] - span[0])
                #expect(
                    kept == (place == "nowhere"),
                    "\(result.downloadedBytes) bytes came; asked \(asked) for \(span)"
                )
                #expect(result.resumedFrom + result.downloadedBytes == Int64(body.count))
            }
        }
    }

    @Test(arguments: [429, 503])
    func `a piece refused with 429 or 503 takes one connection away; the others go on`(status: Int) async throws {
        let body = pseudoRandomBytes(3 << 20, seed: 152)
        try await withTestHTTPServer(serving: TestResource(body: body, etag: Self.etag)) { server in
            var faults = TestFaults()
            faults.bytesPerSecond = 2 << 20
            server.faults = faults
            // The second ranged request is refused, as by a server that counts connections.
            let ranged = Mutex(0)
            // The range refused, as the handler saw it: the order the server records requests
            // in may differ from the handler's under load.
            let refused = Mutex<String?>(nil)
            server.handler = { request, _ in
                guard request.method == "GET", let range = request.header("Range") else { return nil }
                let count = ranged.withLock {
                    $0 += 1
                    return $0
                }
                guard count == 2 else { return nil }
                refused.withLock { $0 = range }
                return TestResponse(status: status, headers: [(name: "Retry-After", value: "1")])
            }
            try await withTemporaryDirectory { directory in
                let output = directory + "/f"
                let decisions = Mutex<[String]>([])
                var options = Self.options(segments: 4)
                options.events = { event in
                    if case .decision(_, let message) = event { decisions.withLock { $0.append(message) } }
                }
                let result = await Fetcher(options: options).run(
                    server.url(),
                    to: output,
                    verifying: try Pin(sha256Hex: Fixtures.sha256(body))
                )
                #expect(result.error == nil, "\(String(describing: result.error))")
                #expect(Self.holds(output, body))
                let asked = Self.ranged(server).compactMap { $0.header("Range") }
                // The refused piece was asked for again, and no stream went on alone from the
                // prefix (an open range): the segments went on, with one connection fewer.
                #expect(asked.count >= 3, "\(asked)")
                let again = refused.withLock { $0 }.map { range in asked.filter { $0 == range }.count >= 2 }
                #expect(again == true, "\(asked)")
                #expect(!asked.contains { $0.hasSuffix("-") }, "\(asked)")
                let fewer = decisions.withLock { $0.filter { $0.contains("HTTP \(status): one connection fewer") } }
                #expect(fewer.count == 1, "\(decisions.withLock { $0 })")
            }
        }
    }

    @Test func `every connection refused with 503: the pieces are kept, and the next attempt waits and goes on`()
        async throws
    {
        let body = pseudoRandomBytes(3 << 20, seed: 153)
        try await withTestHTTPServer(serving: TestResource(body: body, etag: Self.etag)) { server in
            var faults = TestFaults()
            faults.bytesPerSecond = 2 << 20
            faults.closeAfterBodyBytes = 600 << 10  // the first stream breaks off; pieces are shorter
            server.faults = faults
            // Ranged requests are refused for the first 1.5 s after the first one.
            let firstRanged = Mutex<ContinuousClock.Instant?>(nil)
            server.handler = { request, _ in
                guard request.method == "GET", request.header("Range") != nil else { return nil }
                let since = firstRanged.withLock { first in
                    if first == nil { first = .now }
                    return ContinuousClock.now - first!
                }
                guard since < .milliseconds(1500) else { return nil }
                return TestResponse(status: 503, headers: [(name: "Retry-After", value: "2")])
            }
            try await withTemporaryDirectory { directory in
                let output = directory + "/f"
                var options = Self.options(segments: 4, pieceSize: 256 << 10)
                options.retries = 2
                let decisions = Mutex<[String]>([])
                options.events = { event in
                    if case .decision(_, let message) = event { decisions.withLock { $0.append(message) } }
                }
                let started = ContinuousClock.now
                let result = await Fetcher(options: options).run(
                    server.url(),
                    to: output,
                    verifying: try Pin(sha256Hex: Fixtures.sha256(body))
                )
                #expect(result.error == nil, "\(String(describing: result.error))")
                #expect(Self.holds(output, body))
                // Retry-After was waited for at least once before the file was complete.
                #expect(ContinuousClock.now - started >= .seconds(2))
                // What came before the refusals was kept, not fetched again.
                #expect(result.downloadedBytes <= Int64(body.count) + (256 << 10))
                #expect(decisions.withLock { $0.contains { $0.hasPrefix("segments paused at byte") } })
            }
        }
    }
}
