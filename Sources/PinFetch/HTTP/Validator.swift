/// What identifies one representation of a URL: its `ETag` and `Last-Modified` (RFC 9110 §8.8).
///
/// Only a strong validator ties a partial to a representation: `If-Range` carries a strong
/// ETag, or, when the server sent no ETag at all, a `Last-Modified` date that is strong in the
/// sense of §8.8.2.2 (at least one second older than the `Date` of the same response). A weak
/// ETag (`W/"…"`) never goes into `If-Range` (§13.1.5). An ETag is only ever compared with
/// another ETag, never with a digest, whatever it looks like.
struct Validator: Hashable, Sendable, Codable {
    /// The `ETag` value as sent (`"abc"` or `W/"abc"`), or `nil` when absent or malformed.
    var entityTag: String?
    /// The `Last-Modified` value as sent, or `nil` when absent or not an HTTP-date.
    var lastModified: String?
    /// `true` when `lastModified` is a strong validator (§8.8.2.2).
    var lastModifiedIsStrong: Bool

    /// Creates a validator from raw header values; malformed ones count as absent.
    /// - Parameters:
    ///   - entityTag: An `ETag` value; kept only when it is `"…"` or `W/"…"` (§8.8.3).
    ///   - lastModified: A `Last-Modified` value; kept only when it is an HTTP-date.
    ///   - date: The `Date` of the same response, used to decide whether `lastModified` is strong.
    init(entityTag: String?, lastModified: String?, date: String? = nil) {
        self.entityTag = entityTag.flatMap { Self.isWellFormedEntityTag($0) ? $0 : nil }
        let modified = lastModified.flatMap { HTTPDate.parse($0) }
        self.lastModified = modified == nil ? nil : lastModified
        if let modified, let sent = date.flatMap({ HTTPDate.parse($0) }) {
            self.lastModifiedIsStrong = sent - modified >= 1
        } else {
            self.lastModifiedIsStrong = false
        }
    }

    init(head: ResponseHead) {
        self.init(entityTag: head.value("etag"), lastModified: head.value("last-modified"), date: head.value("date"))
    }

    /// `true` when the ETag is present and not weak.
    var hasStrongEntityTag: Bool { self.entityTag.map { !$0.hasPrefix("W/") } ?? false }

    /// The value for `If-Range`, or `nil` when this validator cannot protect a resume.
    ///
    /// A strong ETag; else, only when there is no ETag at all, a strong `Last-Modified`
    /// (RFC 9110 §13.1.5: "MUST NOT generate ... an HTTP-date unless the client has no entity tag").
    var ifRangeValue: String? {
        if let tag = self.entityTag { return self.hasStrongEntityTag ? tag : nil }
        return self.lastModifiedIsStrong ? self.lastModified : nil
    }

    /// `true` when the answer sent no validator at all: neither `ETag` nor `Last-Modified`.
    var isAbsent: Bool { self.entityTag == nil && self.lastModified == nil }

    /// Whether `other` (from a later response) names the same representation as `self`, by the
    /// validator `self` would put in `If-Range`: `true` same, `false` changed, `nil` cannot tell
    /// (`other` lacks that validator).
    func matches(_ other: Validator) -> Bool? {
        if self.hasStrongEntityTag, let tag = self.entityTag {
            guard let theirs = other.entityTag else { return nil }
            return other.hasStrongEntityTag && theirs == tag  // strong comparison, §8.8.3.2
        }
        if self.entityTag == nil, self.lastModifiedIsStrong, let date = self.lastModified {
            if other.hasStrongEntityTag { return false }  // the server changed how it validates
            guard let theirs = other.lastModified else { return nil }
            return HTTPDate.parse(theirs) == HTTPDate.parse(date)
        }
        return false  // a weak or absent validator never ties two responses together
    }

    private enum CodingKeys: String, CodingKey {
        case entityTag, lastModified, lastModifiedIsStrong
    }

    /// Decodes a validator a checkpoint recorded, holding it to the rules a server's is held to:
    /// a malformed `ETag` or a `Last-Modified` that is not an HTTP-date (a forged or damaged
    /// record; a CR LF in it would end up in `If-Range` as another header) is an error, so the
    /// record is not used.
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let entityTag = try container.decodeIfPresent(String.self, forKey: .entityTag)
        let lastModified = try container.decodeIfPresent(String.self, forKey: .lastModified)
        guard entityTag.map(Self.isWellFormedEntityTag) ?? true, lastModified.map({ HTTPDate.parse($0) != nil }) ?? true
        else {
            throw DecodingError.dataCorruptedError(
                forKey: .entityTag,
                in: container,
                debugDescription: "not a validator a server could have sent"
            )
        }
        self.entityTag = entityTag
        self.lastModified = lastModified
        self.lastModifiedIsStrong =
            try container.decode(Bool.self, forKey: .lastModifiedIsStrong) && lastModified != nil
    }

    /// `entity-tag = [ "W/" ] DQUOTE *etagc DQUOTE`, etagc = %x21 / %x23-7E / obs-text (§8.8.3).
    static func isWellFormedEntityTag(_ value: String) -> Bool {
        var bytes = Substring(value).utf8[...]
        if bytes.starts(with: "W/".utf8) { bytes = bytes.dropFirst(2) }
        guard bytes.count >= 2, bytes.first == 0x22, bytes.last == 0x22 else { return false }
        return bytes.dropFirst().dropLast().allSatisfy { $0 == 0x21 || (0x23...0x7E).contains($0) || $0 >= 0x80 }
    }
}
