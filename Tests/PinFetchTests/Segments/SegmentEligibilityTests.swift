import Foundation
import Testing

@testable import PinFetch

/// When a file is not split: a file too small for `--segments auto`, a representation without
/// a strong validator to tie its pieces together.
struct SegmentEligibilityTests {
    @Test func `--segments auto leaves a file under 64 MiB to one stream`() async throws {
        let body = pseudoRandomBytes(2 << 20, seed: 148)
        try await withTestHTTPServer(serving: TestResource(body: body, etag: SegmentedDownloadTests.etag)) { server in
            var faults = TestFaults()
            faults.bytesPerSecond = 2 << 20
            server.faults = faults
            try await withTemporaryDirectory { directory in
                var options = SegmentedDownloadTests.options(segments: 8)
                options.segmentsAutomatic = true
                let result = await Fetcher(options: options).run(server.url(), to: directory + "/f")
                #expect(result.error == nil)
                #expect(SegmentedDownloadTests.holds(directory + "/f", body))
                #expect(server.getRequests.count == 1)
            }
        }
    }

    @Test(arguments: ["W/\"weak\"", nil])
    func `without a strong validator the file comes over one stream`(etag: String?) async throws {
        let body = pseudoRandomBytes(500 << 10, seed: 145)
        try await withTestHTTPServer(serving: TestResource(body: body, etag: etag)) { server in
            try await withTemporaryDirectory { directory in
                let output = directory + "/f"
                let result = await Fetcher(options: SegmentedDownloadTests.options()).run(server.url(), to: output)
                #expect(result.error == nil)
                #expect(SegmentedDownloadTests.holds(output, body))
                #expect(server.getRequests.count == 1)
            }
        }
    }
}
