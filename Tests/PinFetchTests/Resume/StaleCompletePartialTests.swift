import Foundation
import Testing

@testable import PinFetch

/// A partial that holds as many bytes as the current representation is not for that reason of
/// it: a server that ignores `If-Range` answers `416` at the partial's end after the file was
/// replaced by another of the same length.
struct StaleCompletePartialTests {
    static let old = "Mon, 01 Jan 2024 00:00:00 GMT"
    static let new = "Tue, 02 Jan 2024 00:00:00 GMT"
    static let bodyA = Array(repeating: UInt8(ascii: "a"), count: 100_000)
    static let bodyB = Array(repeating: UInt8(ascii: "b"), count: 100_000)

    static func resource(_ body: [UInt8], modified: String) -> TestResource {
        var resource = TestResource(body: body, etag: nil)
        resource.lastModified = modified
        return resource
    }

    /// A first run that received every byte of a body without an end it could trust (chunked,
    /// never terminated) keeps the whole body as its partial; then the file is replaced.
    @Test(arguments: [false, true])
    func `a 416 without a validator from a server that ignores If-Range does not place an old version`(
        pinned: Bool
    ) async throws {
        try await withTestHTTPServer(serving: Self.resource(Self.bodyA, modified: Self.old)) { server in
            try await withTemporaryDirectory { directory in
                server.faults = TestFaults(chunkedWithoutTerminator: true)
                let first = await Fetcher.immediate(retries: 0).run(server.url(), to: "\(directory)/f")
                #expect(first.error?.code == .network, "\(failure(first))")
                #expect(FileSystem.size(of: "\(directory)/f.part") == Int64(Self.bodyA.count))
                server.resource = Self.resource(Self.bodyB, modified: Self.new)
                // HEAD refused: only the GET's answers tell what the file is now.
                server.faults = TestFaults(ignoreIfRange: true, headStatus: 405)
                let pin = pinned ? try Pin(sha256Hex: Fixtures.sha256(Self.bodyB)) : nil
                let second = await Fetcher.immediate(retries: 2).run(server.url(), to: "\(directory)/f", verifying: pin)
                #expect(second.error == nil, "\(failure(second))")
                #expect(contents("\(directory)/f") == Self.bodyB)
                let gets = server.getRequests
                #expect(gets.count == 3, "GET, ranged GET (416), GET from byte 0")
                #expect(gets.last?.header("Range") == nil)
            }
        }
    }
}
