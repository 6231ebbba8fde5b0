import Foundation
import Testing

@testable import PinFetch

/// `Repr-Digest` / `Content-Digest` (RFC 9530): parsed, checked against the bytes, never the ETag.
struct DigestFieldTests {
    static let quiet = ["-q", "--json", "--retry-delay", "0"]

    static func field(_ algorithm: String, _ hex: String) -> String {
        "\(algorithm)=:\(Data(Pin.bytes(fromHex: hex)!).base64EncodedString()):"
    }

    static func resource(_ headers: [(name: String, value: String)]) -> TestResource {
        var resource = TestResource(body: Fixtures.a, etag: Fixtures.etagA)
        resource.extraHeaders = headers
        return resource
    }

    @Test func `dictionary members of sha-256 and sha-512 are parsed, others skipped`() {
        let sha256 = Fixtures.sha256A
        let sha512 = Fixtures.sha512(Fixtures.a)
        let value =
            "md5=:AAAAAAAAAAAAAAAAAAAAAA==:, \(Self.field("sha-256", sha256));p=1 , \(Self.field("SHA-512", sha512))"
        let parsed = DigestFields.parse(value)
        #expect(parsed[.sha256].map(Pin.hex) == sha256)
        #expect(parsed[.sha512].map(Pin.hex) == sha512)
        #expect(DigestFields.parse("sha-256=:short:").isEmpty)
        #expect(DigestFields.parse("sha-256=abc, sha-512").isEmpty)
        #expect(DigestFields.parse("").isEmpty)
    }

    @Test(arguments: [
        ("Repr-Digest", true), ("Content-Digest", true), ("Repr-Digest", false), ("Content-Digest", false),
    ])
    func `a server digest is checked against the bytes without a pin`(field: String, correct: Bool) async throws {
        let hex = correct ? Fixtures.sha256A : Fixtures.sha256B
        try await withTestHTTPServer(serving: Self.resource([(field, Self.field("sha-256", hex))])) { server in
            try await withTemporaryDirectory { directory in
                let run = await runCLI(Self.quiet + ["-o", "\(directory)/out.bin", server.url()])
                #expect(run.status == (correct ? 0 : 9))
                #expect(listing(directory) == (correct ? ["out.bin"] : []))
                if !correct { #expect(run.standardError.contains(field)) }
            }
        }
    }

    /// A field sent on two lines is one list (RFC 9110 §5.3): a wrong sha-256 on the second line
    /// is checked like one on the first.
    @Test func `a digest field on two lines is read whole`() async throws {
        let lines: [(name: String, value: String)] = [
            ("Repr-Digest", "md5=:AAAAAAAAAAAAAAAAAAAAAA==:"), ("Repr-Digest", Self.field("sha-256", Fixtures.sha256B)),
        ]
        try await withTestHTTPServer(serving: Self.resource(lines)) { server in
            try await withTemporaryDirectory { directory in
                let run = await runCLI(Self.quiet + ["-o", "\(directory)/out.bin", server.url()])
                #expect(run.status == 9, "\(run.standardError)")
                #expect(listing(directory).isEmpty)
            }
        }
    }

    @Test func `a server digest that disagrees with a matching pin is exit 9`() async throws {
        try await withTestHTTPServer(serving: Self.resource([("Repr-Digest", Self.field("sha-256", Fixtures.sha256B))]))
        {
            server in
            try await withTemporaryDirectory { directory in
                let run = await runCLI(
                    Self.quiet + ["--sha256", Fixtures.sha256A, "-o", "\(directory)/out.bin", server.url()]
                )
                #expect(run.status == 9)
                #expect(listing(directory).isEmpty)
            }
        }
    }

    @Test func `without a pin SHA-512 is used when the server offers only that`() async throws {
        let sha512 = Fixtures.sha512(Fixtures.a)
        try await withTestHTTPServer(serving: Self.resource([("Repr-Digest", Self.field("sha-512", sha512))])) {
            server in
            try await withTemporaryDirectory { directory in
                let run = await runCLI(Self.quiet + ["-o", "\(directory)/out.bin", server.url()])
                #expect(run.status == 0)
                #expect(run.string("sha512") == sha512)
            }
        }
    }

    @Test func `a resumed download is checked against the Repr-Digest of the 206`() async throws {
        try await withTestHTTPServer(serving: Self.resource([])) { server in
            try await withTemporaryDirectory { directory in
                server.enqueueFaults(TestFaults(closeAfterBodyBytes: 400_000))
                #expect(
                    await runCLI(Self.quiet + ["--retries", "0", "-o", "\(directory)/out.bin", server.url()]).status
                        == 4
                )
                server.resource = Self.resource([("Repr-Digest", Self.field("sha-256", Fixtures.sha256B))])
                let run = await runCLI(Self.quiet + ["-o", "\(directory)/out.bin", server.url()])
                #expect(run.status == 9)  // retried once from byte 0, and the digest still disagrees
                #expect(run.int("restarts") == 1)
                #expect(listing(directory).isEmpty)
            }
        }
    }
}
