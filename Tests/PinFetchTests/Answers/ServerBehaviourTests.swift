import Foundation
import PinFetch
import Testing

/// Servers that answer HEAD badly, frame bodies oddly, or change on every request.
struct ServerBehaviourTests {
    static var resourceA: TestResource { TestResource(body: Fixtures.a, etag: Fixtures.etagA) }
    static var pinA: Pin { get throws { try Pin(sha256Hex: Fixtures.sha256A) } }

    /// Fetches `server`'s file into `directory/out.bin`, retrying at once up to `retries` times.
    func fetch(
        _ server: TestHTTPServer,
        into directory: String,
        retries: Int = 5,
        verifying pin: Pin? = nil
    ) async -> FetchResult {
        await Fetcher.immediate(retries: retries).run(server.url(), to: "\(directory)/out.bin", verifying: pin)
    }

    @Test(arguments: [403, 405, 501])
    func `a refused HEAD still lets a matching partial be resumed`(status: Int) async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            server.faults = TestFaults(headStatus: status)
            try await withTemporaryDirectory { directory in
                server.enqueueFaults(TestFaults(closeAfterBodyBytes: 400_000))
                #expect(await self.fetch(server, into: directory, retries: 0).error?.code == .network)
                let result = await self.fetch(server, into: directory, verifying: try Self.pinA)
                #expect(result.error == nil, "\(failure(result))")
                #expect(result.resumedFrom == 400_000)
                #expect(server.getRequests.last?.header("If-Range") == Fixtures.etagA)
                #expect(contents("\(directory)/out.bin") == Fixtures.a)
            }
        }
    }

    /// A HEAD that is never answered (a server or middlebox that drops HEAD): HEAD is advisory,
    /// so it is given up a few seconds after its connection is up, not after the stall timeout,
    /// and the GET resumes the partial.
    @Test func `a HEAD that never answers is given up, and the GET resumes the partial`() async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            server.faults = TestFaults(silentHead: true)
            try await withTemporaryDirectory { directory in
                server.enqueueFaults(TestFaults(closeAfterBodyBytes: 400_000))
                #expect(await self.fetch(server, into: directory, retries: 0).error?.code == .network)
                let result = await Fetcher.immediate { $0.stallTimeout = 120 }.run(
                    server.url(),
                    to: "\(directory)/out.bin",
                    verifying: try Self.pinA
                )
                #expect(result.error == nil, "\(failure(result))")
                #expect(result.resumedFrom == 400_000)
                #expect(server.requests.map(\.method) == ["GET", "HEAD", "GET"])
                #expect(server.getRequests.last?.header("If-Range") == Fixtures.etagA)
                #expect(contents("\(directory)/out.bin") == Fixtures.a)
                // The HEAD's own bound ended it, long before the stall timeout would have.
                #expect(result.elapsedSeconds < 60)
            }
        }
    }

    /// A proxy or server that answers the ranged GET `304 Not Modified`, a condition the request
    /// never asked: once more from byte 0 without `Range`, so a rerun does not fail the same way.
    @Test func `a 304 to the ranged GET is answered by one GET from byte 0`() async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                server.enqueueFaults(TestFaults(closeAfterBodyBytes: 400_000))
                #expect(await self.fetch(server, into: directory, retries: 0).error?.code == .network)
                server.handler = { request, _ in
                    guard request.method == "GET", request.header("Range") != nil else { return nil }
                    return TestResponse(status: 304, headers: [(name: "ETag", value: Fixtures.etagA)])
                }
                let result = await self.fetch(server, into: directory, retries: 0, verifying: try Self.pinA)
                #expect(result.error == nil, "\(failure(result))")
                #expect(server.getRequests.suffix(2).map { $0.header("Range") } == ["bytes=400000-", nil])
                #expect(result.resumedFrom == 0)
                #expect(contents("\(directory)/out.bin") == Fixtures.a)
            }
        }
    }

    @Test func `a HEAD length that disagrees with the GET does not decide completeness`() async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            server.handler = { request, _ in
                guard request.method == "HEAD" else { return nil }
                return TestResponse(
                    status: 200,
                    headers: [(name: "ETag", value: Fixtures.etagA), (name: "Content-Length", value: "5000000")]
                )
            }
            try await withTemporaryDirectory { directory in
                let result = await self.fetch(server, into: directory, verifying: try Self.pinA)
                #expect(result.error == nil, "\(failure(result))")
                #expect(contents("\(directory)/out.bin") == Fixtures.a)
            }
        }
    }

    @Test func `a chunked body without its last chunk is a truncation, not a finished file`() async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            server.enqueueFaults(TestFaults(chunkedWithoutTerminator: true))
            try await withTemporaryDirectory { directory in
                let first = await self.fetch(server, into: directory, retries: 0, verifying: try Self.pinA)
                #expect(first.error?.code == .network, "\(failure(first))")
                #expect(!FileManager.default.fileExists(atPath: "\(directory)/out.bin"))
                server.faults = TestFaults(omitContentLength: true)
                let second = await self.fetch(server, into: directory, verifying: try Self.pinA)
                #expect(second.error == nil, "\(failure(second))")
                #expect(contents("\(directory)/out.bin") == Fixtures.a)
            }
        }
    }

    @Test func `a server whose ETag changes on every request ends the run after the retries`() async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            server.handler = { request, index in
                guard request.method == "GET" else { return nil }
                return TestResponse(
                    status: 200,
                    headers: [(name: "ETag", value: "\"v\(index)\"")],
                    body: Fixtures.a,
                    closeAfterBodyBytes: 400_000
                )
            }
            try await withTemporaryDirectory { directory in
                let result = await self.fetch(server, into: directory, retries: 3)
                #expect(result.error?.code == .network, "\(failure(result))")
                #expect(server.getRequests.count == 4)
                #expect(result.restarts == 3)
                #expect(!FileManager.default.fileExists(atPath: "\(directory)/out.bin"))
            }
        }
    }

    /// Unpinned, each `200` is the file from byte 0 again (nothing would catch an ETag that lies).
    @Test func `a server that always answers 200 and drops ends the run after the retries`() async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            server.faults = TestFaults(closeAfterBodyBytes: 300_000, ignoreRange: true)
            try await withTemporaryDirectory { directory in
                let result = await self.fetch(server, into: directory, retries: 2)
                #expect(result.error?.code == .network, "\(failure(result))")
                #expect(server.getRequests.count == 3)
                #expect(result.restarts == 2)
            }
        }
    }

    /// Pinned, its `200`s carry the ETag `If-Range` named, so none of them is a restart, and the
    /// bytes the first one brought stay resumable (the pin decides at the end).
    @Test func `a pinned file from a server that always answers 200 and drops keeps its first bytes`() async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            server.faults = TestFaults(closeAfterBodyBytes: 300_000, ignoreRange: true)
            try await withTemporaryDirectory { directory in
                let result = await self.fetch(server, into: directory, retries: 2, verifying: try Self.pinA)
                #expect(result.error?.code == .network, "\(failure(result))")
                #expect(server.getRequests.count == 3)
                #expect(result.restarts == 0)
                #expect(result.partial?.bytes == 300_000)
            }
        }
    }

    @Test(arguments: ["2/29/24 11:29 AM", "", "Fri, 31 Dec 9999 23:59:59 GMT"])
    func `a Last-Modified that cannot be a strong validator is never used to resume`(value: String) async throws {
        try await withTestHTTPServer(serving: TestResource(body: Fixtures.a, lastModified: value)) { server in
            try await withTemporaryDirectory { directory in
                server.enqueueFaults(TestFaults(closeAfterBodyBytes: 400_000))
                #expect(await self.fetch(server, into: directory, retries: 0).error?.code == .network)
                #expect(listing(directory).isEmpty)  // nothing a later run could trust
                let result = await self.fetch(server, into: directory, verifying: try Self.pinA)
                #expect(result.error == nil, "\(failure(result))")
                #expect(server.requests.allSatisfy { $0.header("If-Range") == nil && $0.header("Range") == nil })
            }
        }
    }

    @Test(arguments: [
        "\"9e107d9d372bb6826bd81d3542a419d6\"", "\"9e107d9d372bb6826bd81d3542a419d6-14\"", "\"\(Fixtures.sha256B)\"",
    ])
    func `an ETag that looks like a digest is only a validator`(etag: String) async throws {
        try await withTestHTTPServer(serving: TestResource(body: Fixtures.a, etag: etag)) { server in
            try await withTemporaryDirectory { directory in
                let result = await self.fetch(server, into: directory, verifying: try Self.pinA)
                #expect(result.error == nil, "\(failure(result))")
                let mismatch = await Fetcher.immediate().run(
                    server.url(),
                    to: "\(directory)/b.bin",
                    verifying: try Pin(sha256Hex: Fixtures.sha256B)
                )
                #expect(mismatch.error?.code == .digestMismatch, "\(failure(mismatch))")
            }
        }
    }
}
