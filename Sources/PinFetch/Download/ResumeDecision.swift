/// What to do with the local partial before the first GET, from the checkpoint and the probe.
///
/// Pure: <doc:ResumeAndCheckpoints#The-resume-decision>, step 3, table-tested. The ranged GET that follows a
/// ``resume(from:)`` still carries `If-Range`, so the server has the last word; a pinned partial
/// from a server that sends no validator at all is resumed with a plain `Range`, and the pin
/// decides at the end.
enum ResumeDecision: Hashable, Sendable {
    /// Why a partial cannot be reused.
    enum Reason: String, Hashable, Sendable {
        case noPartial = "no partial"
        case noCheckpoint = "no usable checkpoint"
        case differentURL = "checkpoint is for another URL"
        case differentAlgorithm = "checkpoint hashes with another algorithm"
        case noStrongValidator = "no strong validator to resume with"
        case partialShorterThanCheckpoint = "partial is shorter than its checkpoint"
        case validatorChanged = "the remote representation changed"
        case lengthChanged = "the remote length changed"
        case localLarger = "the partial is larger than the remote file"
        case validatorAppeared = "the server now sends a validator the partial was saved without"
        case mixedSources = "the partial holds bytes of two mirrors, and only a pin vouches for those"
    }

    /// Remove `.part` and the checkpoint; download from byte 0.
    case startOver(Reason)
    /// Truncate `.part` to `offset` bytes and ask for `Range: bytes=<offset>-` with `If-Range`.
    case resume(from: Int64)
    /// The partial already holds the whole representation: verify it, no GET.
    case finalize

    /// Decides from the checkpoint (`nil` when missing or unusable), the `.part` size in bytes
    /// (`nil` when there is no `.part`), the mirror about to be asked (`url`: the checkpoint must
    /// name it, ``Checkpoint/names(_:)``), the probe (`nil` when HEAD told nothing usable), and
    /// whether a pin decides at the end (`pinned`: a partial without any validator is kept only then).
    static func decide(
        checkpoint: Checkpoint?,
        partialSize: Int64?,
        url: HTTPURL,
        algorithm: HashAlgorithm,
        probe: Probe?,
        pinned: Bool = false
    ) -> ResumeDecision {
        guard let partialSize else { return .startOver(.noPartial) }
        guard let checkpoint, checkpoint.offset > 0 else { return .startOver(.noCheckpoint) }
        // A partial moves to another mirror only with a pin (<doc:Architecture#Mirrors>): that mirror's
        // validator says nothing about it, so only its length is compared.
        let sameSource = checkpoint.names(url)
        guard sameSource || pinned else { return .startOver(.differentURL) }
        guard checkpoint.mixedSources != true || pinned else { return .startOver(.mixedSources) }
        guard checkpoint.algorithm == algorithm else { return .startOver(.differentAlgorithm) }
        // No validator at all: only a pin makes the bytes safe to continue (a weak one says they may differ).
        let unvalidated = checkpoint.validator.isAbsent
        guard checkpoint.validator.ifRangeValue != nil || (unvalidated && pinned) else {
            return .startOver(.noStrongValidator)
        }
        guard partialSize >= checkpoint.offset else { return .startOver(.partialShorterThanCheckpoint) }
        guard let probe else { return .resume(from: checkpoint.offset) }
        let same: Bool?
        if !sameSource {
            same = nil
        } else if unvalidated {
            guard probe.validator.isAbsent else { return .startOver(.validatorAppeared) }
            same = nil
        } else {
            same = checkpoint.validator.matches(probe.validator)
            if same == false { return .startOver(.validatorChanged) }
        }
        if let length = probe.length {
            if let total = checkpoint.totalLength, total != length { return .startOver(.lengthChanged) }
            if checkpoint.offset > length { return .startOver(.localLarger) }
            // HEAD is advisory: it confirms a length the checkpoint knew (a body without
            // Content-Length that ended cleanly records its own, ``Partial/recordComplete()``),
            // it never supplies one: a HEAD that names a shorter length under the same ETag would
            // have a broken-off partial committed. With a pin it may (a body cut right after its
            // last byte), since the pin decides. Either way no ranged GET at the end of the file
            // meets a 416, which some servers break (over HTTP/2, a stream error on every run).
            if checkpoint.offset == length, same == true || unvalidated, checkpoint.totalLength == length {
                return .finalize
            }
            if checkpoint.offset == length, pinned, same != false, checkpoint.totalLength == nil { return .finalize }
        }
        return .resume(from: checkpoint.offset)
    }
}

extension Checkpoint {
    /// Whether `mirror` is the URL that served the bytes. Only a URL with no secret can be: two
    /// URLs that differ only in a secret (`?key=A`, `?key=B`) are stored alike and may name two
    /// files, so a partial of such a URL moves on only with a pin (<doc:Architecture#Mirrors>).
    func names(_ mirror: HTTPURL) -> Bool { self.url == mirror.text }
}
