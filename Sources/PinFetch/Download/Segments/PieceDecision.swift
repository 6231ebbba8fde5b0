/// What to do with the answer to one piece's ranged GET in a segmented phase, decided from its
/// head alone.
///
/// Pure, and table-tested like ``AnswerDecision``: a piece is taken only when its `206` is one
/// range that starts where the piece was asked from and ends inside it, for the same
/// representation (the validator `If-Range` named, RFC 9110 §13.1.5 and §15.3.7; the same
/// complete length), in the identity coding. Another mirror than the lead's is asked without
/// `If-Range`: its validator cannot be compared, so its length and range decide, and the pin
/// decides the bytes.
enum PieceDecision: Equatable, Sendable {
    /// What the piece's request asked for, and of which representation.
    struct Request: Hashable, Sendable {
        /// The validator of the representation the phase fetches (the lead's answer's).
        var validator: Validator
        /// That representation's length in bytes.
        var length: Int64
        /// The bytes asked for.
        var wanted: Range<Int64>
        /// Whether the request went to another mirror than the lead's.
        var otherMirror = false
    }

    /// Take the body: its bytes are the representation's from `wanted.lowerBound` on.
    /// `slowDown`: the answer carried `Retry-After`, so the server asks for fewer connections.
    case take(slowDown: Bool)
    /// The server refused the piece with a `429` or `503` (RFC 6585 §4, RFC 9110 §15.6.4), and
    /// its `Retry-After` in seconds, if any.
    case refused(status: Int, retryAfter: Double?)
    /// Not usable: the phase stops for this reason.
    case stop(SegmentedFetch.Stop)

    static func decide(_ head: ResponseHead, _ request: Request) -> PieceDecision {
        let validator = head.validator
        if head.status == 200, request.otherMirror {
            return .stop(.failed("another mirror answered a ranged request with HTTP 200"))
        }
        if head.status == 200 {
            // If-Range failed (another representation), or the server ignores Range.
            let same = request.validator.matches(validator) == true && head.contentLength == request.length
            return .stop(
                same
                    ? .failed("the server answered a ranged request with the whole file (200)")
                    : .representationChanged("a piece's answer was for another representation (200, validator changed)")
            )
        }
        let retryAfter = head.value("retry-after").flatMap { RetryAfter.seconds($0, date: head.value("date")) }
        if head.status == 429 || head.status == 503 { return .refused(status: head.status, retryAfter: retryAfter) }
        guard head.status == 206 else { return .stop(.failed("a piece's answer was HTTP \(head.status)")) }
        switch request.otherMirror ? true : request.validator.matches(validator) {
        case true?: break
        case false?: return .stop(.representationChanged("a piece's 206 carries another validator"))
        case nil:
            // No validator to compare: it cannot tie the piece to the file, nor show another one.
            return .stop(.failed("a piece's 206 carries no validator"))
        }
        guard !head.hasContentCoding, !head.isMultipartByteRanges, let range = head.contentRange,
            range.first == request.wanted.lowerBound, let last = range.last, last < request.wanted.upperBound,
            last >= request.wanted.lowerBound
        else { return .stop(.failed("a piece's 206 does not cover the range asked for")) }
        guard let total = range.completeLength else {
            return .stop(.failed("a piece's 206 does not say the file's length"))
        }
        guard total == request.length else {
            guard !request.otherMirror else {
                return .stop(.failed("another mirror's 206 names another length (\(total) bytes)"))
            }
            return .stop(.representationChanged("a piece's 206 names another length"))
        }
        return .take(slowDown: head.value("retry-after") != nil)
    }
}
