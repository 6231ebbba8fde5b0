import Foundation
import Synchronization
import Testing

@testable import PinFetch

/// Servers that misbehave on single pieces of a pinned segmented download: a piece that stalls is
/// raced on another connection, and pieces whose bytes differ by connection send the file over one
/// stream, so the file is right and never waits for a silent connection.
struct HostilePieceTests {
    /// Hostile server: a piece that stalls after its first 1000 bytes, the first stream slow.
    @Test(arguments: [64 << 10, 256 << 10])
    func `a piece that stalls is raced, and the silent loser does not hold the file`(pieceSize: Int) async throws {
        let body = pseudoRandomBytes(2 << 20, seed: 155)
        try await withTestHTTPServer(serving: TestResource(body: body, etag: "\"v\"")) { server in
            var faults = TestFaults()
            faults.unrangedBytesPerSecond = 256 << 10  // the first stream is slow: helpers start
            faults.stallRangeStartingAt = 1536 << 10  // a piece a helper takes (past the first stream)
            server.faults = faults
            try await withTemporaryDirectory { directory in
                var options = SegmentedDownloadTests.options(segments: 4, pieceSize: Int64(pieceSize))
                options.stallTimeout = 30
                let result = await Fetcher(options: options).run(
                    server.url(),
                    to: directory + "/f",
                    verifying: try Pin(sha256Hex: Fixtures.sha256(body))
                )
                #expect(result.error == nil, "\(String(describing: result.error))")
                #expect(SegmentedDownloadTests.holds(directory + "/f", body))
                #expect(result.elapsedSeconds < 15, "waited for the stall timeout")
                let ranges = server.getRequests.compactMap { $0.header("Range") }
                #expect(ranges.contains { $0.hasPrefix("bytes=\((1536 << 10) + 1000)-") }, "\(ranges)")
            }
        }
    }

    /// Hostile server: ranged answers of other bytes under the whole file's ETag.
    @Test func `pieces whose bytes differ by connection: the pinned file comes over one stream`() async throws {
        let body = pseudoRandomBytes(2 << 20, seed: 157)
        var lie = body
        for index in stride(from: 0, to: lie.count, by: 4096) { lie[index] ^= 0xFF }
        try await withTestHTTPServer(serving: TestResource(body: body, etag: "\"v\"")) { server in
            var faults = TestFaults()
            faults.unrangedBytesPerSecond = 512 << 10  // the first stream is slow: helpers start
            server.faults = faults
            // Ranged answers carry other bytes under the same ETag; the whole file is right.
            server.handler = { [lie] request, _ in
                guard let range = request.header("Range"), range.hasPrefix("bytes="),
                    let dash = range.firstIndex(of: "-"),
                    let start = Int(range[range.index(range.startIndex, offsetBy: 6)..<dash]),
                    let end = Int(range[range.index(after: dash)...])
                else { return nil }
                return TestResponse(
                    status: 206,
                    headers: [
                        (name: "ETag", value: "\"v\""), (name: "Accept-Ranges", value: "bytes"),
                        (name: "Content-Range", value: "bytes \(start)-\(end)/\(lie.count)"),
                    ],
                    body: Array(lie[start...end])
                )
            }
            try await withTemporaryDirectory { directory in
                var options = SegmentedDownloadTests.options(segments: 4, pieceSize: 256 << 10)
                let reasons = Mutex<[String]>([])
                options.events = { event in
                    if case .restarted(_, let reason) = event { reasons.withLock { $0.append(reason) } }
                }
                let result = await Fetcher(options: options).run(
                    server.url(),
                    to: directory + "/f",
                    verifying: try Pin(sha256Hex: Fixtures.sha256(body))
                )
                #expect(result.error == nil, "\(String(describing: result.error))")
                #expect(SegmentedDownloadTests.holds(directory + "/f", body))
                #expect(reasons.withLock { $0 } == ["checksum mismatch with pieces over several connections"])
            }
        }
    }
}

extension HostilePieceTests {
    /// A partial a segmented phase put together (here: its prefix holds pieces of another answer,
    /// as a pinned run with a server that lies on ranges leaves it) resumed by a run with neither
    /// a pin nor a server digest: nothing vouches for those pieces, so the file is fetched again
    /// over one stream instead of committed spliced, from the first answer on.
    @Test(arguments: [true, false])
    func `a pieced partial resumed without a pin or digest is fetched again over one stream`(pieced: Bool) async throws
    {
        try await withTestHTTPServer(serving: TestResource(body: Fixtures.a, etag: Fixtures.etagA)) { server in
            try await withTemporaryDirectory { directory in
                let output = "\(directory)/out.bin"
                var lie = Array(Fixtures.a[..<400_000])
                for index in stride(from: 262_144, to: lie.count, by: 4096) { lie[index] ^= 0xFF }
                let digest = RunningDigest(algorithm: .sha256)
                lie.withUnsafeBytes { digest.update($0) }
                try Data(lie).write(to: URL(filePath: output + ".part"))
                var record = Checkpoint(
                    url: server.url(),
                    validator: Validator(entityTag: Fixtures.etagA, lastModified: nil),
                    totalLength: Int64(Fixtures.a.count),
                    offset: Int64(lie.count),
                    algorithm: .sha256,
                    hashState: digest.serializedState(),
                    hashStateSize: RunningDigest.stateSize(of: .sha256),
                    libraryVersion: RunningDigest.libraryVersion
                )
                record.pieced = pieced ? true : nil
                try Data(record.encoded()).write(to: URL(filePath: output + ".part.state"))
                let result = await Fetcher.immediate(retries: 1).run(server.url(), to: output)
                #expect(result.error == nil, "\(failure(result))")
                if pieced {
                    #expect(contents(output) == Fixtures.a)
                    #expect(result.restarts == 1)
                    // At once: the ranged answer (no digest of its own) is not continued first.
                    #expect(result.downloadedBytes == Int64(Fixtures.a.count), "\(result.downloadedBytes)")
                } else {
                    // Without the record's word, a partial written in order is trusted, as any
                    // unpinned resume is (its validator ties it to the representation).
                    #expect(result.resumedFrom == Int64(lie.count))
                }
            }
        }
    }
}
