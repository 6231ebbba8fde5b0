/// What one GET asks for, from what the partial holds: the `Range` and `If-Range` it sends and
/// what its answer will be judged against (``AnswerContext``).
///
/// Pure and table-tested: Resume and checkpoints (in the documentation catalog) gives the rules.
/// `If-Range` carries only a strong validator (RFC 9110 §13.1.5); another mirror's validator
/// means nothing for a partial, so a pinned partial continues there with a plain `Range`, and the
/// pin decides.
enum AttemptPlan: Equatable {
    /// Send the GET with these header lines (before the user's), judged by `context`; `note`
    /// says the decision in words (`-v`).
    case ask(headers: [String], context: AnswerContext, note: String?)
    /// The partial cannot be continued: start over from byte 0.
    case startOver(String)

    /// What the next answer, without `Range`, must not contradict again after a restart that
    /// discarded a slice sent for the whole.
    struct Expectation: Hashable, Sendable {
        var validator: Validator
        var totalLength: Int64
    }

    /// The plan for a GET to `mirror` (its whole URL; `mirrorNumber` counts from 1 in the
    /// file's list) of the file whose partial is `state`.
    /// - Parameters:
    ///   - pinned: Whether a pin decides at the end.
    ///   - restartPending: A restart from byte 0 was decided: ask without `Range`.
    ///   - expected: What a restart expects again (``Expectation``), if anything.
    ///   - refresh: An unpinned destination's recorded validator, sent as a condition to the
    ///     mirror it came from on a request from byte 0 (``ConditionalRefresh``).
    ///   - objectStore: The mirror is an `s3://` object. S3 ignores `If-Range` and sends the
    ///     range of whatever object holds the key now, so a resume also sends `If-Match` with
    ///     the validator: a replaced object answers `412` (RFC 9110 §13.1.1), and the download
    ///     starts over.
    static func make(
        _ state: PartialState,
        mirror: String,
        mirrorNumber: Int,
        pinned: Bool,
        restartPending: Bool,
        expected: Expectation?,
        refresh: ConditionalRefresh? = nil,
        objectStore: Bool = false
    ) -> AttemptPlan {
        let identity = "Accept-Encoding: identity"
        let offset = state.offset
        var context = AnswerContext(pinned: pinned)
        context.objectStore = objectStore
        // Without a pin, a partial belongs to the mirror that served it: another mirror is asked
        // from byte 0, and its answer replaces the partial.
        let foreign = offset > 0 && !pinned && state.source.map { $0 != mirror } ?? false
        if offset > 0, foreign {
            let from = state.source.map { Redaction.url($0) } ?? "another mirror"
            return .ask(
                headers: [identity],
                context: context,
                note: "the partial came from \(from): asking from byte 0"
            )
        }
        if offset > 0, restartPending {
            // Asked again from byte 0: an answer for the same representation (same strong
            // validator) must still have its known length, or the server is sending a slice.
            if state.validator?.ifRangeValue != nil, !state.crossMirror {
                context.validator = state.validator
                context.totalLength = state.totalLength
            }
            return .ask(headers: [identity], context: context, note: nil)
        }
        if offset > 0, state.crossMirror {
            context.requestedOffset = offset
            context.totalLength = state.totalLength
            return .ask(
                headers: [identity, "Range: bytes=\(offset)-"],
                context: context,
                note: "resuming at byte \(offset) on mirror \(mirrorNumber) with a plain Range: the pin decides"
            )
        }
        if offset > 0, state.resumable, let ifRange = state.validator?.ifRangeValue {
            context.requestedOffset = offset
            context.validator = state.validator
            context.totalLength = state.totalLength
            context.validatorConfirmed = state.validatorConfirmed
            if state.pieced, !pinned, state.serverDigest == nil { context.uncheckedPieces = state.algorithm }
            context.ifMatch = objectStore
            return .ask(
                headers: [identity, "Range: bytes=\(offset)-", "If-Range: \(ifRange)"]
                    + (objectStore ? ["If-Match: \(ifRange)"] : []),
                context: context,
                note: "resuming at byte \(offset) with If-Range \(ifRange)"
            )
        }
        if offset > 0 {
            // Without any validator only a pin makes a resume safe: plain Range, the pin decides.
            guard state.resumable, pinned, state.validator?.isAbsent ?? false else {
                return .startOver("no strong validator to resume with")
            }
            context.requestedOffset = offset
            context.totalLength = state.totalLength
            context.unvalidatedPartial = true
            return .ask(
                headers: [identity, "Range: bytes=\(offset)-"],
                context: context,
                note: "resuming at byte \(offset) without a validator: the pin decides"
            )
        }
        if let expected {
            context.validator = expected.validator
            context.totalLength = expected.totalLength
        } else if !pinned, let refresh, refresh.applies(to: mirror) {
            context.condition = refresh.validator
            return .ask(
                headers: [identity, refresh.header],
                context: context,
                note: "the destination is as recorded: asking with \(refresh.header)"
            )
        }
        return .ask(headers: [identity], context: context, note: nil)
    }
}
