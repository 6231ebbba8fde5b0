import Foundation
import Testing

@testable import PinFetch

/// Files over 4 GiB: every size, offset, `Range`/`Content-Range` value and checkpoint field is
/// 64-bit. About 10 GiB cross loopback, so it runs when `PINFETCH_LARGE_TESTS=1` (CI sets it).
struct LargeFileTests {
    static let enabled = ProcessInfo.processInfo.environment["PINFETCH_LARGE_TESTS"] == "1"

    /// A period that is not a power of two, so bytes placed at a wrong offset show in the digest.
    static let period: [UInt8] = (0..<1_048_573).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) }
    static let length = 5 << 30  // 5 GiB
    static let dropAt = (4 << 30) + 12_345  // just past 4 GiB

    /// SHA-256 of `period` repeated to `length`, with the library's digest (its consistency is
    /// tested elsewhere against OpenSSL's one-shot function).
    static func expectedDigest() -> String {
        let digest = RunningDigest(algorithm: .sha256)
        var remaining = Self.length
        Self.period.withUnsafeBytes { bytes in
            while remaining > 0 {
                let count = min(remaining, bytes.count)
                digest.update(UnsafeRawBufferPointer(rebasing: bytes[..<count]))
                remaining -= count
            }
        }
        return Pin.hex(digest.finalize())
    }

    @Test(.enabled(if: Self.enabled, "set PINFETCH_LARGE_TESTS=1 (about 10 GiB over loopback)"))
    func `a 5 GiB file dropped just past 4 GiB resumes at the right 64-bit offset`() async throws {
        var resource = TestResource(body: Self.period, etag: "\"large\"")
        resource.repeatedLength = Self.length
        let expected = Self.expectedDigest()
        try await withTestHTTPServer(serving: resource) { server in
            try await withTemporaryDirectory { directory in
                let output = "\(directory)/large.bin"
                server.enqueueFaults(TestFaults(closeAfterBodyBytes: Self.dropAt))
                let pin = try Pin(sha256Hex: expected)
                let first = await Fetcher.immediate(retries: 0).run(server.url(), to: output, verifying: pin)
                #expect(first.error?.code == .network, "\(failure(first))")
                let checkpoint = try #require(CheckpointFile.read(output + ".part.state")?.durable.first)
                #expect(checkpoint.offset == Int64(Self.dropAt))
                #expect(checkpoint.totalLength == Int64(Self.length))

                let second = await Fetcher.immediate().run(server.url(), to: output, verifying: pin)
                #expect(second.error == nil, "\(failure(second))")
                #expect(second.resumedFrom == Int64(Self.dropAt))
                #expect(second.downloadedBytes == Int64(Self.length - Self.dropAt))
                #expect(second.bytes == Int64(Self.length))
                #expect(server.getRequests.last?.header("Range") == "bytes=\(Self.dropAt)-")
                let size = try FileManager.default.attributesOfItem(atPath: output)[.size] as? Int
                #expect(size == Self.length)
            }
        }
    }
}
