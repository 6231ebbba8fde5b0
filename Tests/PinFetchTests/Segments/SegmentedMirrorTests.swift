import Foundation
import Testing

@testable import PinFetch

/// Segments from several mirrors: only with a pin, which decides; a mirror with other bytes,
/// another length or no ranges is left, and the others finish the file.
struct SegmentedMirrorTests {
    static let body = pseudoRandomBytes(3 << 20, seed: 154)

    /// Two servers of the same bytes under their own ETags, each connection held to 2 MiB/s.
    static func withMirrors(
        second: [UInt8] = Self.body,
        _ run: (TestHTTPServer, TestHTTPServer) async throws -> Void
    ) async throws {
        var faults = TestFaults()
        faults.bytesPerSecond = 2 << 20
        try await withTestHTTPServer(serving: TestResource(body: Self.body, etag: "\"a\"")) { first in
            try await withTestHTTPServer(serving: TestResource(body: second, etag: "\"b\"")) { other in
                first.faults = faults
                other.faults = faults
                try await run(first, other)
            }
        }
    }

    static func fetch(_ urls: [String], to output: String, pinned: Bool) async throws -> FetchResult {
        var options = SegmentedDownloadTests.options(segments: 4)
        options.retries = 1
        let pin = pinned ? try Pin(sha256Hex: Fixtures.sha256(Self.body)) : nil
        let job = FetchJob(mirrors: urls, destination: output, pin: pin)
        return await Fetcher(options: options).run([job]).first!
    }

    @Test func `a pinned file takes pieces from every mirror, the other one without If-Range`() async throws {
        try await Self.withMirrors { first, other in
            try await withTemporaryDirectory { directory in
                let output = directory + "/f"
                let result = try await Self.fetch([first.url(), other.url()], to: output, pinned: true)
                #expect(result.error == nil, "\(String(describing: result.error))")
                #expect(SegmentedDownloadTests.holds(output, Self.body))
                let fromOther = other.getRequests
                #expect(!fromOther.isEmpty, "no piece from the second mirror")
                #expect(fromOther.allSatisfy { $0.header("Range") != nil && $0.header("If-Range") == nil })
                #expect(
                    first.getRequests.filter { $0.header("Range") != nil }.allSatisfy {
                        $0.header("If-Range") == "\"a\""
                    }
                )
                #expect(result.mirrors.map(\.outcome) == ["ok", "ok"], "\(result.mirrors)")
                #expect(result.source == first.url())
                #expect(listing(directory) == ["f"])
            }
        }
    }

    /// Without a pin, the first mirror's `Repr-Digest` allows segments (one server's bytes).
    @Test func `without a pin the other mirror is not asked`() async throws {
        try await Self.withMirrors { first, other in
            first.resource = SegmentedDownloadTests.digested(Self.body)
            first.resource.etag = "\"a\""
            try await withTemporaryDirectory { directory in
                let output = directory + "/f"
                let result = try await Self.fetch([first.url(), other.url()], to: output, pinned: false)
                #expect(result.error == nil, "\(String(describing: result.error))")
                #expect(SegmentedDownloadTests.holds(output, Self.body))
                #expect(other.requests.isEmpty)
                #expect(first.getRequests.filter { $0.header("Range") != nil }.count >= 2)
            }
        }
    }

    /// Whichever place the wrong mirror has in the list.
    @Test(arguments: [false, true])
    func `a mirror whose pieces are other bytes: the mismatch is caught and one mirror's bytes are used`(
        wrongFirst: Bool
    ) async throws {
        var wrong = Self.body
        for index in stride(from: 0, to: wrong.count, by: 4096) { wrong[index] ^= 0xFF }
        try await Self.withMirrors(second: wrong) { first, other in
            try await withTemporaryDirectory { directory in
                let output = directory + "/f"
                let urls = wrongFirst ? [other.url(), first.url()] : [first.url(), other.url()]
                let result = try await Self.fetch(urls, to: output, pinned: true)
                #expect(result.error == nil, "\(String(describing: result.error))")
                #expect(SegmentedDownloadTests.holds(output, Self.body))
                #expect(!other.getRequests.isEmpty)
                #expect(result.source == first.url())
                // The mirror whose pieces were wrong says so; the one whose bytes matched, ok. (On a
                // loaded machine the first mirror may finish before any wrong piece is taken: then
                // nothing mismatched, but the other mirror is still never called ok.)
                let outcome = { (url: String) in result.mirrors.first { $0.url == url }?.outcome }
                #expect(outcome(first.url()) == "ok", "\(result.mirrors)")
                #expect(outcome(other.url()) != "ok", "\(result.mirrors)")
                if result.restarts > 0 { #expect(outcome(other.url()) == "mismatch", "\(result.mirrors)") }
                #expect(listing(directory) == ["f"])
            }
        }
    }

    @Test func `a mirror with another length is left, and the others finish the file`() async throws {
        try await Self.withMirrors(second: Array(Self.body.dropLast(1))) { first, other in
            try await withTemporaryDirectory { directory in
                let output = directory + "/f"
                let result = try await Self.fetch([first.url(), other.url()], to: output, pinned: true)
                #expect(result.error == nil, "\(String(describing: result.error))")
                #expect(SegmentedDownloadTests.holds(output, Self.body))
                // It was asked once, found wrong, and not asked again.
                #expect(other.getRequests.count == 1, "\(other.getRequests.map { $0.header("Range") ?? "-" })")
                #expect(result.restarts == 0)
            }
        }
    }

    /// Hostile mirror: a second mirror that answers every Range with the whole file.
    @Test func `a pinned mirror that ignores Range is asked no more; segments go on from the first`() async throws {
        try await SegmentedMirrorTests.withMirrors { first, other in
            var faults = TestFaults()
            faults.bytesPerSecond = 2 << 20
            faults.ignoreRange = true
            other.faults = faults
            try await withTemporaryDirectory { directory in
                let output = directory + "/f"
                let result = try await SegmentedMirrorTests.fetch([first.url(), other.url()], to: output, pinned: true)
                #expect(result.error == nil, "\(String(describing: result.error))")
                #expect(SegmentedDownloadTests.holds(output, SegmentedMirrorTests.body))
                #expect(other.getRequests.count == 1)
                #expect(first.getRequests.filter { $0.header("Range") != nil }.count >= 3)
            }
        }
    }
}
