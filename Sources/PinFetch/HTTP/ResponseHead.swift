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

    /// Every value of `name` (lower-case), in arrival order.
    func values(_ name: String) -> [String] {
        self.fields.filter { $0.name == name }.map(\.value)
    }

    /// The first value of `name` (lower-case), or `nil`.
    func value(_ name: String) -> String? {
        self.fields.first(where: { $0.name == name })?.value
    }

    /// The body's length in bytes from `Content-Length`, or `nil` when there is none to trust:
    /// absent, overridden by a `Transfer-Encoding` (RFC 9112 §6.3: the chunked framing wins, the
    /// length is ignored), or malformed or conflicting (then ``framingError`` says why).
    var contentLength: Int64? {
        guard case .success(let length) = self.declaredLength else { return nil }
        return length
    }

    /// Why the `Content-Length` fields cannot frame the body, or `nil` when they can (or there
    /// are none): values that are not decimal, or that disagree. Identical values, as two fields
    /// or as one list `N, N`, are one length (RFC 9110 §8.6, RFC 9112 §6.3 step 5).
    var framingError: String? {
        guard case .failure(let problem) = self.declaredLength else { return nil }
        return problem.reason
    }

    /// `true` when a `Transfer-Encoding` field is present (the body is framed by it, not by length).
    var hasTransferCoding: Bool { self.fields.contains { $0.name == "transfer-encoding" } }

    private struct FramingProblem: Error {
        var reason: String
    }

    private var declaredLength: Result<Int64?, FramingProblem> {
        guard !self.hasTransferCoding else { return .success(nil) }
        let values = self.fields.filter { $0.name == "content-length" }
            .flatMap { $0.value.split(separator: ",", omittingEmptySubsequences: false) }
            .map { String($0.trimmingWhitespace()) }
        guard !values.isEmpty else { return .success(nil) }
        for text in values {
            guard !text.isEmpty, text.count <= 18, text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else {
                return .failure(FramingProblem(reason: "malformed Content-Length '\(text.prefix(40))'"))
            }
        }
        let lengths = values.map { Int64($0)! }
        guard Set(lengths).count == 1 else {
            let listed = lengths.map(String.init).joined(separator: ", ")
            return .failure(FramingProblem(reason: "conflicting Content-Length values (\(listed))"))
        }
        return .success(lengths[0])
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

    /// What a digest field gives when the server states two different digests for one
    /// algorithm (``DigestFields``, ``amazonSHA256``, ``googleMD5``): an empty digest, which no
    /// bytes hash to.
    static let contradiction: [UInt8] = []

    /// SHA-256 / SHA-512 digests of the whole representation from `Repr-Digest` (RFC 9530 §3),
    /// all of its field lines combined (RFC 9110 §5.3: one list, joined with commas).
    var representationDigests: [HashAlgorithm: [UInt8]] {
        DigestFields.parse(self.values("repr-digest").joined(separator: ", "))
    }

    /// SHA-256 / SHA-512 digests of this message's content from `Content-Digest` (RFC 9530 §2),
    /// all of its field lines combined.
    var contentDigests: [HashAlgorithm: [UInt8]] {
        DigestFields.parse(self.values("content-digest").joined(separator: ", "))
    }

    /// The representation's validator from `ETag`, `Last-Modified` and `Date`.
    var validator: Validator { Validator(head: self) }
}
