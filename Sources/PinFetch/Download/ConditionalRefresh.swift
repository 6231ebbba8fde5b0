/// An unpinned destination whose verified record still describes it, to be refreshed with a
/// conditional `GET` (<doc:ResumeAndCheckpoints#The-verified-record>): the first request to the
/// mirror it came from carries `If-None-Match` with its strong ETag, or `If-Modified-Since`
/// with its strong `Last-Modified` when it had no ETag (RFC 9110 §13.1.2, §13.1.3), and a `304`
/// leaves the file as it is.
///
/// Only a strong validator is sent: a weak ETag's `304` says "equivalent", not "the same bytes"
/// (RFC 9110 §8.8.1), and a `Last-Modified` within a second of its response's `Date` may
/// name two versions (§8.8.2.2) — the same rule as for `If-Range` (``Validator/ifRangeValue``).
struct ConditionalRefresh: Equatable, Sendable {
    /// The URL the recorded bytes came from, without its secrets.
    var url: String
    /// The validator the condition names.
    var validator: Validator
    /// The recorded digest, its algorithm, and the file's size in bytes: the result of a `304`.
    var algorithm: HashAlgorithm
    var digest: [UInt8]
    var size: Int64

    /// The refresh `record` allows, or `nil` when it names no strong validator, no URL or no
    /// digest.
    init?(_ record: VerifiedRecord) {
        guard let validator = record.validator, validator.ifRangeValue != nil, let url = record.url,
            let (algorithm, digest) = HashAlgorithm.allCases.lazy.compactMap({ algorithm in
                record.digest(for: algorithm).map { (algorithm, $0) }
            }).first
        else { return nil }
        self.url = url
        self.validator = validator
        self.algorithm = algorithm
        self.digest = digest
        self.size = record.size
    }

    /// Whether `mirror` (its whole URL) is the one the bytes came from. Only a URL without a
    /// secret can be: the record keeps URLs with their secrets as `***`, and two URLs that
    /// differ only in one (`?token=A`, `?token=B`) may name two files, whose `304` would keep the
    /// other's bytes (the rule of ``Checkpoint/names(_:)``).
    func applies(to mirror: String) -> Bool { Redaction.url(mirror) == mirror && mirror == self.url }

    /// The condition's header line.
    var header: String {
        if let tag = self.validator.entityTag { return "If-None-Match: \(tag)" }
        return "If-Modified-Since: \(self.validator.lastModified ?? "")"
    }
}
