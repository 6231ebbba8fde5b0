/// What a GET asked for, and what was known of the partial's representation when its answer
/// came: the input of ``AnswerDecision/decide(_:_:)`` besides the answer's head.
struct AnswerContext: Hashable, Sendable {
    /// The `N` of the `Range: bytes=N-` that was sent, or `nil` for a request without `Range`.
    var requestedOffset: Int64?
    /// The validator of the representation the partial holds (or, without `Range`, the one a
    /// restart expects again), or `nil` when none is known or it cannot be compared: after a move
    /// to another mirror, whose validators mean nothing here, the pin decides.
    var validator: Validator?
    /// That representation's length in bytes, when known.
    var totalLength: Int64?
    /// `true` when a pin decides at the end, so a body of unknown extent may be taken.
    var pinned = false
    /// `true` when the partial came from answers without any validator (kept only with a pin and
    /// resumed with a plain `Range`): an answer that now carries one is another representation.
    var unvalidatedPartial = false
    /// `true` when this run's `HEAD` showed ``validator`` (``PartialState/validatorConfirmed``).
    var validatorConfirmed = false
    /// The algorithm hashed, when the partial holds pieces of several answers (a segmented
    /// phase, ``PartialState/pieced``) and neither a pin nor a server digest checks them: a `206`
    /// that brings no digest of its own cannot make that partial a file, so it is not continued.
    var uncheckedPieces: HashAlgorithm?
    /// The validator an `If-None-Match` or `If-Modified-Since` of the request named
    /// (``ConditionalRefresh``), or `nil` for a request without a condition.
    var condition: Validator?
    /// `true` for an `s3://` object: an error's body says which (S3's `<Error><Code>`).
    var objectStore = false
    /// `true` when the request carried `If-Match` with ``validator`` (an object store's resume).
    var ifMatch = false
}

/// What to do with one answer to a GET (<doc:ResumeAndCheckpoints#Answers-to-a-GET>), decided from
/// its head alone.
///
/// Pure: no I/O, no libcurl, no state; table-tested row by row (`AnswerDecisionTests`). The
/// download executes the result. Every rule keeps the promise that a byte is written to the
/// partial only when it is known to be the representation's byte at that offset.
enum AnswerDecision: Hashable, Sendable {
    /// Drop `skip` leading body bytes, write the rest at the requested offset, and expect the
    /// partial to reach `end` bytes (`nil`: the body's framing decides). `totalLength` is the
    /// representation's length in bytes when the answer said it.
    case append(skip: Int64, end: Int64?, totalLength: Int64?)
    /// Empty the partial and take the body as the representation from byte 0, up to `end` bytes
    /// (`nil`: the framing decides); `totalLength` as in ``append(skip:end:totalLength:)``.
    case replace(end: Int64?, totalLength: Int64?)
    /// As ``replace(end:totalLength:)``, for a body framed only by its end (chunked, or closed by
    /// the server) that must reach `length` bytes, the total known for this representation. Until
    /// it does, its bytes prove nothing (a server may be sending only a slice): no checkpoint is
    /// taken, and a clean end short of `length` is decided by ``decideShortBody(length:received:_:)``.
    case replaceExpecting(length: Int64)
    /// The partial already holds the whole representation: verify it.
    case finalize
    /// `304` to the request's condition: the destination holds the representation already.
    case unchanged
    /// Discard the partial and ask again from byte 0, without `Range`.
    case restart(String)
    /// A failure that another attempt may cure (after `retryAfter` seconds when the server said).
    case retry(PinFetchError.Code, String, retryAfter: Double?)
    /// A failure that another attempt at this mirror will not cure.
    case fail(PinFetchError.Code, String)

    /// Decides about the answer whose final head is `head` (after redirects).
    static func decide(_ head: ResponseHead, _ context: AnswerContext) -> AnswerDecision {
        switch head.status {
        case 200:
            return Self.decideWhole(head, context)
        case 206:
            guard let offset = context.requestedOffset else { return Self.decideUnaskedRange(head, context) }
            return Self.decideRange(head, context, offset: offset)
        case 416:
            return Self.decideUnsatisfiable(head, context)
        case 304:
            if let condition = context.condition, context.requestedOffset == nil {
                // A 304 sends the validator a 200 would have (RFC 9110 §15.4.5). Taken only when
                // it names the one asked about: one without it may come from another resource a
                // redirect led to (an older release answering If-Modified-Since).
                guard condition.matches(head.validator) == true else {
                    return .restart("HTTP 304 (Not Modified) that does not name the validator asked about")
                }
                return .unchanged
            }
            // Only a refresh carries If-None-Match or If-Modified-Since, the only conditions a
            // 304 answers (RFC 9110 §15.4.5; If-Range never yields one, §13.1.5): otherwise a
            // confused server or proxy. Once more from byte 0, without Range; a 304 to that is
            // a failure.
            guard context.requestedOffset != nil else {
                return .fail(.protocolViolation, "HTTP 304 (Not Modified) to a GET without a condition")
            }
            return .restart("HTTP 304 (Not Modified) to a ranged GET, which asked no condition it answers")
        case 412 where context.ifMatch:
            // If-Match failed (RFC 9110 §13.1.1): the object was replaced since the partial.
            return .restart("HTTP 412: the object changed since the partial was saved")
        case 401:
            return .fail(.authentication, "HTTP 401 (authentication required)")
        case 407:
            // The proxy's (RFC 9110 §15.5.8): the verdict names it and the fix.
            return .fail(.authentication, "HTTP 407 (proxy authentication required)")
        case 408, 429, 500...599:
            let retryAfter = head.value("retry-after").flatMap { RetryAfter.seconds($0, date: head.value("date")) }
            return .retry(.serverResponse, "HTTP \(head.status)", retryAfter: retryAfter)
        case 400...499:
            return .fail(.serverResponse, "HTTP \(head.status)")
        default:
            return .fail(.protocolViolation, "unexpected HTTP \(head.status)")
        }
    }

    /// A `200` is the whole representation, unless it says or shows otherwise: an object store
    /// may answer a range with `200` and only the slice. A `Content-Range` equal to the requested
    /// range makes it that slice; a body length that contradicts the total known for the same
    /// representation makes it unusable (RFC 9110 §15.3.1, §14.4).
    private static func decideWhole(_ head: ResponseHead, _ context: AnswerContext) -> AnswerDecision {
        if let problem = head.framingError { return .fail(.protocolViolation, problem) }
        if head.hasContentCoding { return .replace(end: nil, totalLength: nil) }  // not resumable
        let length = head.contentLength
        let changed =
            context.validator.map { $0.matches(head.validator) == false }
            ?? (context.unvalidatedPartial && !head.validator.isAbsent)
        // Asked for a range: ask again for the whole. Asked for the whole: the server cannot send it.
        func contradiction(_ reason: String) -> AnswerDecision {
            context.requestedOffset == nil ? .fail(.protocolViolation, reason) : .restart(reason)
        }
        // RFC 9110 gives Content-Range no meaning on a 200; one that parses as a range says what
        // the body is. One that does not parse is ignored, as the RFC says.
        if let range = head.contentRange, let first = range.first, let last = range.last,
            let total = range.completeLength
        {
            let sameTotal = changed || (context.totalLength.map { $0 == total } ?? true)
            let fits = length.map { $0 == last - first + 1 } ?? true
            if fits, first == 0, last + 1 == total, sameTotal { return .replace(end: total, totalLength: total) }
            // Appended as a slice only when its Content-Length says it is exactly that slice (a body
            // framed by its end could be anything until it ends), and with the validator asked for:
            // a 200 answers If-Range when it did not match (RFC 9110 §13.1.5). Between mirrors the
            // pin decides.
            let asked = context.validator.map { $0.matches(head.validator) == true } ?? context.pinned
            if length == last - first + 1, let offset = context.requestedOffset, first == offset, last + 1 == total,
                asked, sameTotal
            {
                return .append(skip: 0, end: total, totalLength: total)
            }
            return contradiction("200 with Content-Range \(first)-\(last)/\(total): not the whole representation")
        }
        // Without Range, only a positively identical representation is known to have `total` bytes.
        let same = context.validator.map { $0.matches(head.validator) == true } ?? false
        if let total = context.totalLength, context.requestedOffset != nil ? !changed : same {
            guard let length else { return .replaceExpecting(length: total) }
            if length != total { return contradiction("200 of \(length) bytes for a representation of \(total) bytes") }
        }
        // A 200 carrying the very strong ETag If-Range named: the server dropped the Range (some
        // CDNs do when If-Range holds an ETag). A strong validator changes whenever the
        // representation's bytes do (RFC 9110 §8.8.1), so its bytes from the offset on continue
        // the partial; starting over would meet the same answer on every retry. Only with a pin,
        // which catches a server whose ETag lies (else the file would join two bodies no answer
        // held), only for an ETag (a date is a weaker claim), and only with the length known and
        // Content-Length equal to it (a body framed by its end may be a slice).
        if let offset = context.requestedOffset, same, context.pinned, head.validator.hasStrongEntityTag,
            let total = context.totalLength, length == total, offset <= total
        {
            return .append(skip: offset, end: total, totalLength: total)
        }
        return .replace(end: length, totalLength: length)
    }

    /// What a ``replaceExpecting(length:)`` body that ended cleanly after `received` bytes, short
    /// of `length`, means: a server that sent a slice for the whole. Restart without `Range`; asked
    /// without `Range` already, exit 7.
    static func decideShortBody(length: Int64, received: Int64, _ context: AnswerContext) -> AnswerDecision {
        let reason = "200 of \(received) bytes for a representation of \(length) bytes"
        return context.requestedOffset == nil ? .fail(.protocolViolation, reason) : .restart(reason)
    }

    /// A `206` to a ranged request is appended only when it is one range of the same
    /// representation, in the identity coding, that starts at or before the offset and reaches
    /// past it; the overlap before the offset is skipped.
    private static func decideRange(_ head: ResponseHead, _ context: AnswerContext, offset: Int64) -> AnswerDecision {
        if head.isMultipartByteRanges { return .restart("206 with a multipart/byteranges body") }
        if head.hasContentCoding { return .restart("206 with a Content-Encoding") }
        if let problem = head.framingError { return .fail(.protocolViolation, problem) }
        guard let range = head.contentRange, let first = range.first, let last = range.last,
            let total = range.completeLength
        else { return .restart("206 without a usable Content-Range (with a complete length)") }
        if let known = context.totalLength, known != total {
            return .restart("206 for a representation of \(total) bytes, not \(known)")
        }
        // A 206 carries the validator a 200 would (RFC 9110 §15.3.7): without the one If-Range
        // asked for, nothing shows the server checked it, and the bytes may be another file's.
        if context.unvalidatedPartial, !head.validator.isAbsent {
            return .restart("206 with a validator the partial was saved without")
        }
        if let known = context.validator, known.matches(head.validator) != true {
            let answered = head.validator
            let reason =
                answered.entityTag == nil && answered.lastModified == nil
                ? "without a validator" : "for another representation (validator changed)"
            return .restart("206 \(reason)")
        }
        guard first <= offset, last >= offset else {
            return .restart("206 range \(first)-\(last) does not continue at byte \(offset)")
        }
        if let length = head.contentLength, length != last - first + 1 {
            return .restart("206 whose Content-Length disagrees with its Content-Range")
        }
        if let algorithm = context.uncheckedPieces, head.representationDigests[algorithm] == nil,
            algorithm != .sha256 || head.amazonSHA256 == nil
        {
            return .restart("206 for a partial of pieces that neither a pin nor a server digest checks")
        }
        return .append(skip: offset - first, end: last + 1, totalLength: total)
    }

    /// A `206` to a request without `Range` is taken as the body from byte 0 when it starts there
    /// and its extent is known: a numeric total, a `Content-Length` the body must meet, or a pin.
    private static func decideUnaskedRange(_ head: ResponseHead, _ context: AnswerContext) -> AnswerDecision {
        let prefix = "206 to a request without Range"
        if head.isMultipartByteRanges { return .fail(.protocolViolation, "\(prefix), as multipart/byteranges") }
        if head.hasContentCoding { return .fail(.protocolViolation, "\(prefix), with a Content-Encoding") }
        if let problem = head.framingError { return .fail(.protocolViolation, problem) }
        guard let range = head.contentRange, let first = range.first, let last = range.last else {
            return .fail(.protocolViolation, "\(prefix), without a usable Content-Range")
        }
        guard first == 0 else { return .fail(.protocolViolation, "\(prefix) starts at byte \(first)") }
        let length = head.contentLength
        if let length, length != last + 1 {
            return .fail(.protocolViolation, "\(prefix) whose Content-Length disagrees with its Content-Range")
        }
        if let total = range.completeLength { return .replace(end: last + 1, totalLength: total) }
        if length != nil { return .replace(end: last + 1, totalLength: last + 1) }
        if context.pinned { return .replace(end: last + 1, totalLength: nil) }
        return .fail(
            .protocolViolation,
            "\(prefix), of unknown total length and with no pin: it cannot be known complete"
        )
    }

    /// A `416` finalizes only when the partial holds exactly the whole representation, and a pin
    /// or the `416`'s own validator says it is the current one.
    private static func decideUnsatisfiable(_ head: ResponseHead, _ context: AnswerContext) -> AnswerDecision {
        guard let offset = context.requestedOffset else {
            return .fail(.protocolViolation, "416 to a request without Range")
        }
        if let known = context.validator, known.matches(head.validator) == false {
            return .restart("416 for a changed representation")
        }
        if context.unvalidatedPartial, !head.validator.isAbsent {
            return .restart("416 with a validator the partial was saved without")
        }
        let total = head.contentRange?.completeLength
        guard total == offset, context.totalLength.map({ $0 == total }) ?? true else {
            return .restart("416: the partial (\(offset) bytes) does not match the remote length")
        }
        // A server that ignores If-Range answers a 416 for a changed representation of the same
        // length too (RFC 9110 §13.1.5 wants the whole new one then). Without a pin, only the
        // partial's validator, on the 416 or on this run's HEAD, says its bytes are the current
        // representation's (nginx's 416 carries none).
        if !context.pinned, !context.validatorConfirmed, context.validator?.matches(head.validator) != true {
            return .restart("416 without the partial's validator, and no pin: the partial may be of an older version")
        }
        return .finalize
    }
}

extension AnswerDecision {
    /// The representation's length in bytes as the answer announced it (at least the end of
    /// its range when the total is `*`), when it did.
    var announcedLength: Int64? {
        switch self {
        case .append(_, let end, let total), .replace(let end, let total): total ?? end
        case .replaceExpecting(let length): length
        case .finalize, .unchanged, .restart, .retry, .fail: nil
        }
    }
}
