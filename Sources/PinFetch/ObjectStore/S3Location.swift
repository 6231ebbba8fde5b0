/// An object of an S3-compatible store, named `s3://BUCKET/KEY` (the AWS CLI's form), and the
/// `https` (or `http`) URL that reaches it through an ``S3Configuration``'s endpoint.
///
/// The key is taken as typed, as the AWS CLI takes it: `%` is a character of the key, not an
/// escape. Each character outside RFC 3986's unreserved set (and `/`) is percent-encoded once in
/// the request's path, which is what SigV4's canonical URI of an S3 request is (AWS, "Signature
/// Version 4 signing", S3 paths are not encoded twice).
package struct S3Location: Hashable, Sendable {
    /// The bucket's name (3 to 63 of `a-z`, `0-9`, `.` and `-`, a letter or digit at each end).
    package let bucket: String
    /// The object's key, as typed (not empty, at most 1024 bytes of UTF-8).
    package let key: String
    /// The region requests are signed for (``S3Configuration/region``).
    package let region: String

    /// Whether `text` is written as an `s3://` URL (the scheme in any case).
    package static func names(_ text: String) -> Bool {
        text.utf8.count > 5 && text.prefix(5).lowercased() == "s3://"
    }

    /// Reads `s3://BUCKET/KEY`.
    /// - Throws: ``PinFetchError/Code/usage`` (exit 2) for a bucket name S3 does not allow, no
    ///   key, a key longer than 1024 bytes, a control character, or a `.` or `..` segment.
    package init(_ text: String, region: String) throws(PinFetchError) {
        let rest = text.dropFirst(5)
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        let bucket = String(rest[..<slash])
        let key = slash < rest.endIndex ? String(rest[rest.index(after: slash)...]) : ""
        // A bucket part with `@` (`s3://user:secret@bucket/…`) may hold a secret: shown as `***@`.
        let printable = String(text.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }.prefix(200))
        let shown = "'\(bucket.contains("@") ? Redaction.malformedURL(printable) : printable)'"
        guard Self.isBucketName(bucket) else {
            throw PinFetchError(
                .usage,
                "\(shown) has no bucket name S3 allows: 3 to 63 lower-case letters, digits, '.' and '-'"
            )
        }
        guard !key.isEmpty else { throw PinFetchError(.usage, "\(shown) names no object: write s3://BUCKET/KEY") }
        guard key.utf8.count <= 1024 else { throw PinFetchError(.usage, "\(shown): the key is longer than 1024 bytes") }
        guard !key.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw PinFetchError(.usage, "\(shown): the key has a control character")
        }
        // A `.` or `..` segment is removed from a URL's path before it is sent (RFC 3986 §5.2.4):
        // `s3://a/../b/k` would reach another bucket, `s3://a/x/..` the bucket's listing.
        guard !key.split(separator: "/", omittingEmptySubsequences: false).contains(where: { $0 == "." || $0 == ".." })
        else {
            throw PinFetchError(
                .usage,
                "\(shown): a key with a '.' or '..' segment would reach another key or bucket; it is refused"
            )
        }
        self.bucket = bucket
        self.key = key
        self.region = region
    }

    /// `s3://BUCKET/KEY`, as messages show it.
    package var text: String { "s3://\(self.bucket)/\(self.key)" }

    /// The URL of the object through `endpoint` (scheme, host and port, perhaps a path):
    /// path-style (`ENDPOINT/BUCKET/KEY`), or virtual-hosted (`BUCKET.HOST/KEY`) when
    /// `virtualHosted` and the bucket has no `.` (a dotted bucket would not match the
    /// endpoint's wildcard certificate).
    package func url(endpoint: String, virtualHosted: Bool) -> String {
        var base = endpoint
        while base.hasSuffix("/") { base.removeLast() }
        let path = Self.encodedKey(self.key)
        if virtualHosted, !self.bucket.contains("."), let schemeEnd = base.firstRange(of: "://") {
            return base[..<schemeEnd.upperBound] + self.bucket + "." + base[schemeEnd.upperBound...] + "/" + path
        }
        return base + "/" + self.bucket + "/" + path
    }

    /// `key` with each byte outside `A-Z a-z 0-9 - . _ ~ /` as `%XX` (upper-case hex).
    static func encodedKey(_ key: String) -> String {
        var result = ""
        for byte in key.utf8 {
            let unreserved =
                (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte)
                || "-._~/".utf8.contains(byte)
            if unreserved {
                result.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                result +=
                    "%" + String(byte >> 4, radix: 16, uppercase: true) + String(byte & 0xF, radix: 16, uppercase: true)
            }
        }
        return result
    }

    /// S3's bucket naming rules (general purpose buckets): 3 to 63 characters of `a-z`, `0-9`,
    /// `.` and `-`, beginning and ending with a letter or digit; no `..`, `.-` or `-.`; not an
    /// IPv4 address; not beginning `xn--` or `sthree-`, not ending `-s3alias` or `--ol-s3`.
    static func isBucketName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard (3...63).contains(bytes.count) else { return false }
        func alphanumeric(_ byte: UInt8) -> Bool { (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte) }
        guard alphanumeric(bytes[0]), alphanumeric(bytes[bytes.count - 1]),
            !["..", ".-", "-."].contains(where: { name.contains($0) }),
            !name.hasPrefix("xn--"), !name.hasPrefix("sthree-"), !name.hasSuffix("-s3alias"), !name.hasSuffix("--ol-s3")
        else { return false }
        let labels = name.split(separator: ".")
        if labels.count == 4, labels.allSatisfy({ $0.utf8.allSatisfy { (0x30...0x39).contains($0) } }) { return false }
        return bytes.allSatisfy { alphanumeric($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-") }
    }
}
