import Foundation
import Testing

@testable import PinFetch

/// `Repr-Digest` / `Content-Digest` (RFC 9530): parsed, checked against the bytes, never the ETag.
struct DigestFieldTests {
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
        let twice = "\(Self.field("sha-256", sha256)), \(Self.field("sha-256", Fixtures.sha256B))"
        #expect(DigestFields.parse(twice)[.sha256] == ResponseHead.contradiction)
        let same = "\(Self.field("sha-256", sha256)), \(Self.field("sha-256", sha256))"
        #expect(DigestFields.parse(same)[.sha256].map(Pin.hex) == sha256)
    }

    @Test(arguments: [
        ("Repr-Digest", true), ("Content-Digest", true), ("Repr-Digest", false), ("Content-Digest", false),
    ])
    func `a server digest is checked against the bytes without a pin`(field: String, correct: Bool) async throws {
        let hex = correct ? Fixtures.sha256A : Fixtures.sha256B
        try await withTestHTTPServer(serving: Self.resource([(field, Self.field("sha-256", hex))])) { server in
            try await withTemporaryDirectory { directory in
                let result = await Fetcher.immediate().run(server.url(), to: "\(directory)/out.bin")
                #expect(result.error?.code == (correct ? nil : .digestMismatch), "\(failure(result))")
                #expect(listing(directory) == (correct ? ["out.bin"] : []))
                if !correct { #expect(result.error?.message.contains(field) == true, "\(failure(result))") }
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
                let result = await Fetcher.immediate().run(server.url(), to: "\(directory)/out.bin")
                #expect(result.error?.code == .digestMismatch, "\(failure(result))")
                #expect(listing(directory).isEmpty)
            }
        }
    }

    @Test func `a server digest that disagrees with a matching pin is exit 9`() async throws {
        try await withTestHTTPServer(serving: Self.resource([("Repr-Digest", Self.field("sha-256", Fixtures.sha256B))]))
        {
            server in
            try await withTemporaryDirectory { directory in
                let result = await Fetcher.immediate().run(
                    server.url(),
                    to: "\(directory)/out.bin",
                    verifying: try Pin(sha256Hex: Fixtures.sha256A)
                )
                #expect(result.error?.code == .digestMismatch, "\(failure(result))")
                #expect(listing(directory).isEmpty)
            }
        }
    }

    @Test func `without a pin SHA-512 is used when the server offers only that`() async throws {
        let sha512 = Fixtures.sha512(Fixtures.a)
        try await withTestHTTPServer(serving: Self.resource([("Repr-Digest", Self.field("sha-512", sha512))])) {
            server in
            try await withTemporaryDirectory { directory in
                let result = await Fetcher.immediate().run(server.url(), to: "\(directory)/out.bin")
                #expect(result.error == nil, "\(failure(result))")
                #expect(result.algorithm == .sha512)
                #expect(result.digest == sha512)
            }
        }
    }

    @Test func `a resumed download is checked against the Repr-Digest of the 206`() async throws {
        try await withTestHTTPServer(serving: Self.resource([])) { server in
            try await withTemporaryDirectory { directory in
                server.enqueueFaults(TestFaults(closeAfterBodyBytes: 400_000))
                let first = await Fetcher.immediate(retries: 0).run(server.url(), to: "\(directory)/out.bin")
                #expect(first.error?.code == .network, "\(failure(first))")
                server.resource = Self.resource([("Repr-Digest", Self.field("sha-256", Fixtures.sha256B))])
                let result = await Fetcher.immediate().run(server.url(), to: "\(directory)/out.bin")
                // Retried once from byte 0, and the digest still disagrees.
                #expect(result.error?.code == .digestMismatch, "\(failure(result))")
                #expect(result.restarts == 1)
                #expect(listing(directory).isEmpty)
            }
        }
    }
}
