import Foundation
import Testing

@testable import PinFetch

/// A `200` to the ranged GET: the same representation continues the partial, another replaces it.
extension FetchTests {
    /// A CDN that drops `Range` when `If-Range` holds an ETag answers `200` with that very ETag:
    /// the same strong validator is the same representation, so the body's first bytes are
    /// skipped and the rest continue the partial (never appended whole: 1,448,576 bytes).
    @Test func `a 200 with the ETag If-Range named continues the partial past its first bytes`() async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let cut = await self.interruptedRun(server, into: directory, at: 400_000)
                #expect(cut.error?.code == .network, "\(failure(cut))")
                server.faults = TestFaults(ignoreRange: true)
                let result = await self.fetch(server, into: directory, pin: try Pin(sha256Hex: Fixtures.sha256A))
                #expect(result.error == nil, "\(failure(result))")
                #expect(contents("\(directory)/out.bin") == Fixtures.a)
                #expect(server.getRequests.last?.header("If-Range") == Fixtures.etagA)
                #expect(result.resumedFrom == 400_000)
                #expect(result.status == .resumed)
                #expect(result.restarts == 0)
                #expect(result.rehashedBytes == 0)
            }
        }
    }

    /// A `200` for another representation (a new ETag) to the ranged GET replaces the partial.
    @Test func `a 200 of a changed file to the ranged GET replaces the partial instead of appending`() async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let cut = await self.interruptedRun(server, into: directory, at: 400_000)
                #expect(cut.error?.code == .network, "\(failure(cut))")
                server.resource = TestResource(body: Fixtures.b, etag: Fixtures.etagB)
                server.faults = TestFaults(ignoreRange: true, headStatus: 405)  // the GET decides
                let result = await self.fetch(server, into: directory, pin: try Pin(sha256Hex: Fixtures.sha256B))
                #expect(result.error == nil, "\(failure(result))")
                #expect(contents("\(directory)/out.bin") == Fixtures.b)
                #expect(server.getRequests.last?.header("If-Range") == Fixtures.etagA)
                #expect(result.resumedFrom == 0)
                #expect(result.status == .downloaded)
                #expect(result.restarts == 1)
            }
        }
    }

    @Test(arguments: [(Fixtures.sha256A, PinFetchError.Code.digestMismatch), (Fixtures.sha256B, nil)])
    func `a changed representation is never spliced onto the partial`(
        pin: String,
        expected: PinFetchError.Code?
    ) async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let cut = await self.interruptedRun(server, into: directory, at: 400_000)
                #expect(cut.error?.code == .network, "\(failure(cut))")
                server.resource = TestResource(body: Fixtures.b, etag: Fixtures.etagB)
                let result = await self.fetch(server, into: directory, pin: try Pin(sha256Hex: pin))
                #expect(result.error?.code == expected, "\(failure(result))")
                if expected == nil {
                    #expect(contents("\(directory)/out.bin") == Fixtures.b)
                    #expect(listing(directory) == ["out.bin"])
                } else {
                    #expect(listing(directory).isEmpty)
                    #expect(result.error?.message.contains(Fixtures.sha256A) == true)
                    #expect(result.error?.message.contains(Fixtures.sha256B) == true)
                }
                #expect(server.getRequests.last?.header("Range") == nil)
            }
        }
    }

    /// Unpinned, a `200` with the partial's ETag is the whole file from byte 0: a server whose
    /// ETag lies (other bytes of the same length under it) must not get a file joined from two
    /// bodies, which no answer held and nothing would catch.
    @Test func `unpinned, a 200 with the partial's ETag and other bytes is taken whole, never joined`() async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let cut = await self.interruptedRun(server, into: directory, at: 400_000)
                #expect(cut.error?.code == .network, "\(failure(cut))")
                let other = Fixtures.a.map { $0 ^ 0x5A }
                server.resource = TestResource(body: other, etag: Fixtures.etagA)  // the same ETag: a lie
                server.faults = TestFaults(ignoreRange: true)
                let result = await self.fetch(server, into: directory)
                #expect(result.error == nil, "\(failure(result))")
                #expect(contents("\(directory)/out.bin") == other)
                #expect(result.resumedFrom == 0)
            }
        }
    }
}
