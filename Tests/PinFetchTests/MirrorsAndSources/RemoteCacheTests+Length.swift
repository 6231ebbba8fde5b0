import Foundation
import Testing

@testable import PinFetch

/// A large blob is taken only at the origin's length: a cache that announces 10 GB for a pinned
/// file, and sends it fast, would fill the disk before the pin could refuse it.
extension RemoteCacheTests {
    @Test func `a large blob announced longer than the origin's file is refused after its head`() async throws {
        var blob = TestResource(body: Array(repeating: UInt8(ascii: "z"), count: 4096))
        blob.repeatedLength = 10_000_000_000
        try await Self.withHostileCache(TestFaults(), blob: blob) { cache, origin in
            try await withTemporaryDirectory { directory in
                let notes = EventNotes()
                let result = try await Self.fetch(cache.baseURL, origin, to: directory + "/t", notes: notes)
                #expect(result.error == nil, "\(failure(result))")
                #expect(contents(directory + "/t") == Self.body)
                #expect(notes.said("where the origin announces \(Self.body.count)"), "\(notes.all)")
                #expect(result.downloadedBytes == Int64(Self.body.count), "only the origin's bytes")
                #expect(origin.requests.map(\.method) == ["HEAD", "GET"])
                #expect(listing(directory) == ["t"])
            }
        }
    }

    @Test func `a large blob of the origin's length comes from the cache, after the origin's HEAD`() async throws {
        let body = (0..<(17 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 11) }
        try await withTestHTTPServer(serving: TestResource(body: body)) { cache in
            try await withTestHTTPServer(serving: TestResource(body: body)) { origin in
                try await withTemporaryDirectory { directory in
                    let fetcher = Fetcher.immediate(retries: 0) { $0.remoteCache = cache.baseURL }
                    let pin = try Pin(sha256Hex: Fixtures.sha256(body))
                    let result = await fetcher.run(origin.url("/t"), to: directory + "/t", verifying: pin)
                    #expect(result.error == nil, "\(failure(result))")
                    #expect(result.fromCache)
                    #expect(origin.requests.map(\.method) == ["HEAD"])
                    #expect(cache.getRequests.count == 2, "stopped after the head, then asked whole")
                    #expect(contents(directory + "/t") == body)
                }
            }
        }
    }
}
