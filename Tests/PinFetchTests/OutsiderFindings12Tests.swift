import Foundation
@preconcurrency import Glibc
import Testing

@_spi(CLI) @testable import PinFetch

/// What an outsider broke in issue 12's first build, each kept as the input that broke it.
struct OutsiderFindings12Tests {
    static let quiet = ["-q", "--json", "--retry-delay", "0", "--retries", "0"]
    static let modified = "Sun, 06 Nov 1994 08:49:37 GMT"

    /// H1: `?key=A` and `?key=B` are both shown (and were stored) as `?key=***`; with the same
    /// `Last-Modified`, B's tail was appended to A's partial and the run ended with exit 0.
    @Test func `a partial from one signed URL is not resumed from another that only differs in its secret`()
        async throws
    {
        try await withTestHTTPServer(serving: TestResource(body: Fixtures.a, lastModified: Self.modified)) { server in
            try await withTemporaryDirectory { directory in
                let output = "\(directory)/o"
                server.enqueueFaults(TestFaults(closeAfterBodyBytes: 400_000))
                let first = await runCLI(Self.quiet + ["-o", output, server.url("/get?key=SECRETKEYA")])
                #expect(first.status == 4, "\(first.standardError)")
                let state = try #require(FileManager.default.contents(atPath: output + ".part.state"))
                #expect(!String(decoding: state, as: UTF8.self).contains("SECRETKEYA"))
                server.resource = TestResource(body: Fixtures.b, lastModified: Self.modified)
                let second = await runCLI(Self.quiet + ["-o", output, server.url("/get?key=SECRETKEYB")])
                #expect(second.status == 0, "\(second.standardError)")
                #expect(server.getRequests.last?.header("Range") == nil)
                #expect(UnvalidatedResumeTests.holds(output, Fixtures.b))
            }
        }
    }
}
