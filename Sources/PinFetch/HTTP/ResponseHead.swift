/// The status line and header fields of one HTTP response, as libcurl delivered them.
///
/// Header names are kept lower-cased; values are trimmed of surrounding white space. With
/// redirects libcurl delivers one head per hop: the caller keeps only the last one.
struct ResponseHead: Sendable {
    /// The status code, e.g. 206.
    var status: Int
    /// Header fields in arrival order, names lower-cased.
    var fields: [(name: String, value: String)] = []

    /// Parses a status line such as `HTTP/1.1 206 Partial Content` or `HTTP/2 200`.
    init?(statusLine: some StringProtocol) {
        let parts = statusLine.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/"), parts[1].utf8.count == 3,
            parts[1].utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }), let status = Int(parts[1])
        else {
            return nil
        }
        self.status = status
    }

    init(status: Int, fields: [(name: String, value: String)]) {
        self.status = status
        self.fields = fields.map { ($0.name.lowercased(), $0.value) }
    }

    /// Adds one `Name: value` line; lines without a colon (and obsolete folding) are ignored.
    mutating func add(line: some StringProtocol) {
        guard let colon = line.firstIndex(of: ":") else { return }
        let name = line[..<colon].trimmingWhitespace().lowercased()
        guard !name.isEmpty else { return }
        self.fields.append((name, String(line[line.index(after: colon)...].trimmingWhitespace())))
    }

    /// The first value of `name` (lower-case), or `nil`.
    func value(_ name: String) -> String? {
        self.fields.first(where: { $0.name == name })?.value
    }

    /// `Content-Length` in bytes, or `nil` when absent, malformed, or sent twice with different values.
    var contentLength: Int64? {
        let values = Set(self.fields.filter { $0.name == "content-length" }.map(\.value))
        guard values.count == 1, let text = values.first, !text.isEmpty, text.count <= 18,
            text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 })
        else { return nil }
        return Int64(text)
    }

    /// The parsed `Content-Range`, or `nil` when absent or malformed.
    var contentRange: ContentRange? { self.value("content-range").flatMap { ContentRange($0) } }

    /// `true` when a `Content-Encoding` other than `identity` is present (RFC 9110 §8.4): the
    /// bytes are then not the representation's bytes and cannot be ranged over.
    var hasContentCoding: Bool {
        self.fields.contains { field in
            field.name == "content-encoding"
                && field.value.split(separator: ",").contains { $0.trimmingWhitespace().lowercased() != "identity" }
        }
    }

    /// `true` for a `multipart/byteranges` body (RFC 9110 §14.6).
    var isMultipartByteRanges: Bool {
        self.value("content-type")?.lowercased().hasPrefix("multipart/byteranges") ?? false
    }

    /// SHA-256 / SHA-512 digests of the whole representation from `Repr-Digest` (RFC 9530 §3).
    var representationDigests: [HashAlgorithm: [UInt8]] {
        self.value("repr-digest").map { DigestFields.parse($0) } ?? [:]
    }

    /// SHA-256 / SHA-512 digests of this message's content from `Content-Digest` (RFC 9530 §2).
    var contentDigests: [HashAlgorithm: [UInt8]] {
        self.value("content-digest").map { DigestFields.parse($0) } ?? [:]
    }

    /// The representation's validator from `ETag`, `Last-Modified` and `Date`.
    var validator: Validator { Validator(head: self) }
}

extension StringProtocol {
    /// Drops leading and trailing SP, HTAB, CR and LF (note `"\r\n"` is one `Character`).
    func trimmingWhitespace() -> SubSequence {
        func isSpace(_ c: Character) -> Bool { c == " " || c == "\t" || c == "\r" || c == "\n" || c == "\r\n" }
        var text = self[...]
        while let c = text.first, isSpace(c) { text = text.dropFirst() }
        while let c = text.last, isSpace(c) { text = text.dropLast() }
        return text
    }
}
