import Foundation
import PinFetch
import Testing

/// A signed URL's secret is in no sidecar and decides nothing: a partial from one signed URL is
/// not continued from another, however alike the two look with their secrets hidden, unless a pin
/// decides what the bytes are.
struct SignedURLResumeTests {
    static let modified = "Sun, 06 Nov 1994 08:49:37 GMT"

    /// User input: two signed URLs of one file that differ only in their secret, with one Last-Modified.
    @Test func `a partial from one signed URL is not resumed from another that only differs in its secret`()
        async throws
    {
        try await withTestHTTPServer(serving: TestResource(body: Fixtures.a, lastModified: Self.modified)) { server in
            try await withTemporaryDirectory { directory in
                let output = "\(directory)/o"
                server.enqueueFaults(TestFaults(closeAfterBodyBytes: 400_000))
                let once = Fetcher.immediate(retries: 0)
                let first = await once.run(server.url("/get?key=SECRETKEYA"), to: output)
                #expect(first.error?.code == .network, "\(failure(first))")
                let state = try #require(FileManager.default.contents(atPath: output + ".part.state"))
                #expect(!String(decoding: state, as: UTF8.self).contains("SECRETKEYA"))
                server.resource = TestResource(body: Fixtures.b, lastModified: Self.modified)
                let second = await once.run(server.url("/get?key=SECRETKEYB"), to: output)
                #expect(second.error == nil, "\(failure(second))")
                #expect(server.getRequests.last?.header("Range") == nil)
                #expect(fileHolds(output, Fixtures.b))
            }
        }
    }

    /// User input: a URL signed again between two runs, with a pin.
    @Test func `a re-signed URL resumes with a pin, and its sidecar holds nothing derived from the signature`()
        async throws
    {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let output = "\(directory)/o"
                let pin = try Pin(sha256Hex: Fixtures.sha256A)
                let once = Fetcher.immediate(retries: 0)
                server.enqueueFaults(TestFaults(closeAfterBodyBytes: 400_000))
                let first = await once.run(server.url("/f?X-Amz-Signature=SIGONE"), to: output, verifying: pin)
                #expect(first.error?.code == .network, "\(failure(first))")
                let state = String(
                    decoding: try #require(FileManager.default.contents(atPath: output + ".part.state")),
                    as: UTF8.self
                )
                #expect(!state.contains("SIGONE") && !state.contains("urlDigest"))
                let second = await once.run(server.url("/f?X-Amz-Signature=SIGTWO"), to: output, verifying: pin)
                #expect(second.error == nil, "\(failure(second))")
                #expect(second.resumedFrom == 400_000)
                #expect(server.getRequests.last?.header("Range") == "bytes=400000-")
                #expect(fileHolds(output, Fixtures.a))
            }
        }
    }
}
