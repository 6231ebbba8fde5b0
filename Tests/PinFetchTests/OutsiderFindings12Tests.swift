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

    /// H3: `café` in NFC and in NFD are two files to the file system (and two entries of a
    /// SHA256SUMS), but one to Swift's `String ==`: they were merged into one entry.
    @Test func `names that differ only in Unicode normalization are two files`() async throws {
        let composed = "caf\u{E9}"  // NFC
        let decomposed = "cafe\u{301}"  // NFD
        #expect(composed == decomposed && !composed.utf8.elementsEqual(decomposed.utf8))
        let bodies = ["/r/caf%C3%A9": Array("composed".utf8), "/r/cafe%CC%81": Array("decomposed".utf8)]
        try await withTestHTTPServer(serving: TestResource(body: [])) { server in
            server.handler = { request, _ in
                guard let body = bodies[request.target] else { return TestResponse(status: 404) }
                return TestResponse(status: 200, body: body)
            }
            try await withTemporaryDirectory { directory in
                let sums =
                    "\(Fixtures.sha256(bodies["/r/caf%C3%A9"]!))  \(composed)\n"
                    + "\(Fixtures.sha256(bodies["/r/cafe%CC%81"]!))  \(decomposed)\n"
                try sums.write(toFile: "\(directory)/SHA256SUMS", atomically: true, encoding: .utf8)
                let run = await runCLI(
                    Self.quiet + [
                        "-i", "\(directory)/SHA256SUMS", "--base-url", server.url("/r/"), "-P", "\(directory)/o",
                    ]
                )
                #expect(run.status == 0, "\(run.standardError)")
                #expect(contents("\(directory)/o/\(composed)") == bodies["/r/caf%C3%A9"])
                #expect(contents("\(directory)/o/\(decomposed)") == bodies["/r/cafe%CC%81"])
                // The lookup of one name finds its own entry, not the other's.
                let file = try ChecksumFile(parsing: Array(sums.utf8))
                #expect(
                    try file.pin(for: decomposed).digest
                        == Pin.bytes(fromHex: Fixtures.sha256(bodies["/r/cafe%CC%81"]!))
                )
            }
        }
    }
}
