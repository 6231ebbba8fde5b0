import Foundation
import Testing

@testable import PinFetch

/// Digests that S3 and GCS publish in their own fields are cross-checked like `Repr-Digest`: a
/// disagreement is exit 9 even without a pin, and nothing reaches the destination. Digests of the
/// body below are from Python's hashlib.
struct ObjectStoreDigestTests {
    static let body = Array("The quick brown fox jumps over the lazy dog".utf8)
    static let sha256Base64 = "16j7swfXgJRpypq8sAguT41WUeRtPNt2LQLQvzfJ5ZI="
    static let md5Base64 = "nhB9nTcrtoJr2B01QqQZ1g=="
    /// Digests of the bytes `other`.
    static let otherSHA256Base64 = "2SmKENGwc1g33EvYXaxkGw887yekfl1TpU8vP1svz/o="
    static let otherMD5Base64 = "eV8yArF8trw9S3cdjGyerw=="

    struct Case: Sendable, CustomTestStringConvertible {
        var headers: [(name: String, value: String)]
        /// The kind of the failure, `nil` for a file fetched.
        var failure: PinFetchError.Code?
        /// What the message says of the field after its name.
        var says = "says"
        var testDescription: String { self.headers.map { "\($0.name): \($0.value)" }.joined(separator: ", ") }
    }

    static let cases = [
        Case(headers: [("x-amz-checksum-sha256", sha256Base64)], failure: nil),
        Case(headers: [("x-amz-checksum-sha256", otherSHA256Base64)], failure: .digestMismatch),
        Case(
            headers: [("x-amz-checksum-sha256", otherSHA256Base64), ("x-amz-checksum-type", "FULL_OBJECT")],
            failure: .digestMismatch
        ),
        // A multipart upload's checksum is a digest of digests: not comparable, not checked.
        Case(
            headers: [("x-amz-checksum-sha256", otherSHA256Base64), ("x-amz-checksum-type", "COMPOSITE")],
            failure: nil
        ),
        Case(headers: [("x-amz-checksum-sha256", otherSHA256Base64 + "-3")], failure: nil),
        Case(headers: [("x-goog-hash", "crc32c=n03x6A==, md5=\(md5Base64)")], failure: nil),
        Case(
            headers: [("x-goog-hash", "crc32c=n03x6A=="), ("x-goog-hash", "md5=\(otherMD5Base64)")],
            failure: .digestMismatch
        ),
        Case(headers: [("X-Goog-Hash", "MD5=\(otherMD5Base64)")], failure: .digestMismatch),
        // Stored gzip: GCS may serve it decompressed, so its MD5 is of other bytes.
        Case(
            headers: [("x-goog-hash", "md5=\(otherMD5Base64)"), ("x-goog-stored-content-encoding", "gzip")],
            failure: nil
        ),
        Case(headers: [("x-goog-hash", "crc32c=n03x6A==")], failure: nil),  // a composite object has no MD5
        Case(headers: [("x-goog-hash", "md5=not-base64!")], failure: nil),
        // A field with two different values disagrees with itself: never ignored.
        Case(
            headers: [("x-amz-checksum-sha256", sha256Base64), ("x-amz-checksum-sha256", otherSHA256Base64)],
            failure: .digestMismatch,
            says: "gives two different"
        ),
        Case(
            headers: [("x-goog-hash", "md5=\(md5Base64), md5=\(otherMD5Base64)")],
            failure: .digestMismatch,
            says: "gives two different"
        ),
        Case(
            headers: [("x-amz-checksum-sha256", sha256Base64), ("x-amz-checksum-sha256", sha256Base64)],
            failure: nil
        ),
        // The same joined on one line, as a proxy may send repeated fields.
        Case(
            headers: [("x-amz-checksum-sha256", "\(sha256Base64), \(otherSHA256Base64)")],
            failure: .digestMismatch,
            says: "gives two different"
        ),
        Case(
            headers: [("x-amz-checksum-sha256", "\(otherSHA256Base64),\(otherSHA256Base64)")],
            failure: .digestMismatch
        ),
        Case(headers: [("x-amz-checksum-sha256", "\(sha256Base64), \(sha256Base64)")], failure: nil),
        // A member that is no full-object checksum checks nothing; the others still do.
        Case(headers: [("x-amz-checksum-sha256", "\(otherSHA256Base64), not-base64!")], failure: .digestMismatch),
        Case(headers: [("x-amz-checksum-sha256", "\(sha256Base64), \(otherSHA256Base64)-3")], failure: nil),
        // Two fields, or one key twice, that state different digests: the server contradicts itself.
        Case(
            headers: [("Repr-Digest", "sha-256=:\(sha256Base64):"), ("x-amz-checksum-sha256", otherSHA256Base64)],
            failure: .digestMismatch,
            says: "gives two different"
        ),
        Case(
            headers: [
                ("Repr-Digest", "sha-256=:\(sha256Base64):"), ("Content-Digest", "sha-256=:\(otherSHA256Base64):"),
            ],
            failure: .digestMismatch,
            says: "gives two different"
        ),
        Case(
            headers: [("Repr-Digest", "sha-256=:\(otherSHA256Base64):"), ("Repr-Digest", "sha-256=:\(sha256Base64):")],
            failure: .digestMismatch,
            says: "gives two different"
        ),
        Case(
            headers: [("Repr-Digest", "sha-256=:\(sha256Base64):"), ("x-amz-checksum-sha256", sha256Base64)],
            failure: nil
        ),
    ]

    @Test(arguments: Self.cases)
    func `a store's published digest is checked without a pin`(item: Case) async throws {
        var resource = TestResource(body: Self.body, etag: "\"v1\"")
        resource.extraHeaders = item.headers
        try await withTestHTTPServer(serving: resource) { server in
            try await withTemporaryDirectory { directory in
                let result = await Fetcher().run(server.url(), to: "\(directory)/f")
                #expect(result.error?.code == item.failure, "\(failure(result))")
                if item.failure == nil {
                    #expect(contents("\(directory)/f") == Self.body)
                } else {
                    #expect(listing(directory).isEmpty)
                    let message = result.error?.message.lowercased() ?? ""
                    let field = item.headers[0].name.lowercased()
                    let says = item.says == "says" ? "the server's \(field) says" : "the server \(item.says)"
                    #expect(message.contains(says) && message.contains(field), "\(failure(result))")
                }
            }
        }
    }

    @Test func `S3's checksum also checks a resumed download`() async throws {
        let body = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 13) }
        var resource = TestResource(body: body, etag: "\"v1\"")
        resource.extraHeaders = [("x-amz-checksum-sha256", Self.otherSHA256Base64)]
        try await withTestHTTPServer(serving: resource) { server in
            try await withTemporaryDirectory { directory in
                server.enqueueFaults(TestFaults(closeAfterBodyBytes: 100_000))
                let result = await Fetcher.immediate().run(server.url(), to: "\(directory)/f")
                #expect(result.error?.code == .digestMismatch, "\(failure(result))")
                #expect(result.error?.message.contains("x-amz-checksum-sha256") == true, "\(failure(result))")
                #expect(!FileManager.default.fileExists(atPath: "\(directory)/f"))
            }
        }
    }

    @Test func `GCS's MD5 is checked only when this run hashed the whole file in one answer`() async throws {
        // A wrong MD5 on an answer that continued a partial is not checked (no MD5 state is kept
        // in checkpoints); the same MD5 on a whole answer is.
        let body = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 13) }
        var resource = TestResource(body: body, etag: "\"v1\"")
        resource.extraHeaders = [("x-goog-hash", "md5=\(Self.otherMD5Base64)")]
        try await withTestHTTPServer(serving: resource) { server in
            try await withTemporaryDirectory { directory in
                server.enqueueFaults(TestFaults(closeAfterBodyBytes: 100_000))
                let resumed = await Fetcher.immediate().run(server.url(), to: "\(directory)/f")
                #expect(resumed.error == nil, "\(failure(resumed))")
                #expect(contents("\(directory)/f") == body)
                let whole = await Fetcher().run(server.url(), to: "\(directory)/g")
                #expect(whole.error?.code == .digestMismatch, "\(failure(whole))")
                #expect(!FileManager.default.fileExists(atPath: "\(directory)/g"))
            }
        }
    }

    @Test func `the MD5 check hashes what the body delivered`() {
        let digest = CrossCheckDigest()
        Self.body.withUnsafeBytes { digest.update($0) }
        #expect(digest.byteCount == Int64(Self.body.count))
        #expect(Data(digest.finalize()).base64EncodedString() == Self.md5Base64)
    }
}
