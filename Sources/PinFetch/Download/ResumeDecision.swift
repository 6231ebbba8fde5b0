/// What to do with the local partial before the first GET, from the checkpoint and the probe.
///
/// Pure: DESIGN.md "The resume decision", step 3, table-tested. The ranged GET that follows a
/// ``resume(from:)`` still carries `If-Range`, so the server has the last word.
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
    }

    /// Remove `.part` and the checkpoint; download from byte 0.
    case startOver(Reason)
    /// Truncate `.part` to `offset` bytes and ask for `Range: bytes=<offset>-` with `If-Range`.
    case resume(from: Int64)
    /// The partial already holds the whole representation: verify it, no GET.
    case finalize

    /// Decides from the checkpoint (`nil` when missing or unusable), the `.part` size in bytes
    /// (`nil` when there is no `.part`), and the probe (`nil` when HEAD told nothing usable).
    static func decide(
        checkpoint: Checkpoint?,
        partialSize: Int64?,
        url: String,
        algorithm: HashAlgorithm,
        probe: Probe?
    ) -> ResumeDecision {
        guard let partialSize else { return .startOver(.noPartial) }
        guard let checkpoint, checkpoint.offset > 0 else { return .startOver(.noCheckpoint) }
        guard checkpoint.url == url else { return .startOver(.differentURL) }
        guard checkpoint.algorithm == algorithm else { return .startOver(.differentAlgorithm) }
        guard checkpoint.validator.ifRangeValue != nil else { return .startOver(.noStrongValidator) }
        guard partialSize >= checkpoint.offset else { return .startOver(.partialShorterThanCheckpoint) }
        guard let probe else { return .resume(from: checkpoint.offset) }
        let same = checkpoint.validator.matches(probe.validator)
        if same == false { return .startOver(.validatorChanged) }
        if let length = probe.length {
            if let total = checkpoint.totalLength, total != length { return .startOver(.lengthChanged) }
            if checkpoint.offset > length { return .startOver(.localLarger) }
            // HEAD is advisory: it confirms a length the checkpoint knew, it never supplies one.
            if checkpoint.offset == length, same == true, checkpoint.totalLength == length { return .finalize }
        }
        return .resume(from: checkpoint.offset)
    }
}
