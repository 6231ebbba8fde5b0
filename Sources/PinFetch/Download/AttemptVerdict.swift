/// How one GET ended, decided once, purely from what its ``AnswerReader`` observed and how the
/// transfer (or the segmented phase) ended: the attempt loop acts on it.
///
/// Table-tested (`AttemptVerdictTests`). A body that fell short of its announced end is a
/// network failure worth another attempt; a range answer that brought bytes but not all is
/// continued; an answer that brought nothing new is a protocol failure (RFC 9110 §14.4).
enum AttemptVerdict: Equatable {
    /// The partial holds the whole representation.
    case complete
    /// The answer brought part of what was asked (a `206` that covered less): ask for the rest.
    case moreToFetch
    /// The partial held the whole representation already (`416` at its end).
    case finalize
    /// The destination holds the representation already (`304` to a refresh's condition).
    case unchanged
    /// Start over from byte 0; `discard`: empty the partial now, its bytes are suspect.
    case startOver(String, discard: Bool)
    /// A failure; `retryable` when another attempt may cure it, after `retryAfter` seconds when
    /// the server said.
    case failed(PinFetchError, retryable: Bool, retryAfter: Double?)

    /// How the body ended.
    enum Ending {
        /// One transfer carried it.
        case transfer(TransferOutcome)
        /// A segmented phase did, after the lead's transfer ended with `lead`.
        case segments(Segmentation.End.Reason, lead: TransferOutcome)
    }

    /// What the attempt observed.
    struct Observation {
        /// The answer decision about the final head, if one came.
        var decision: AnswerDecision?
        var ending: Ending
        /// What the request asked for and knew.
        var context: AnswerContext
        /// The partial's offset when the request was sent, and now (bytes).
        var requestedOffset: Int64
        var offset: Int64
        /// The representation's length as the partial knows it now, in bytes.
        var totalLength: Int64?
        /// Body bytes this answer wrote.
        var received: Int64
        /// Whether the partial was emptied for this answer.
        var hasReplaced: Bool
        /// Whether the body ran past its announced end after writing checkpointed bytes.
        var wroteSuspectBytes: Bool
        /// The final head's status, if one came.
        var status: Int?
        /// The mirror as messages name it.
        var label: String
        /// Whether the run was cancelled.
        var cancelled: Bool
        /// What a `407` says: the proxy of the request, and what to do
        /// (``TransportSettings/proxyAuthenticationFailure(for:)``).
        var proxyAuthentication: String? = nil
    }

    /// What a restart without `Range` must not be contradicted on again, after this verdict.
    enum ExpectationChange: Equatable {
        case keep
        case clear
        case set(AttemptPlan.Expectation)
    }

    /// The verdict on `observation`, and what it changes of the expectation for the next answer.
    static func decide(_ observation: Observation) -> (verdict: AttemptVerdict, expectation: ExpectationChange) {
        let o = observation
        let outcome: TransferOutcome
        switch o.ending {
        case .transfer(let transfer):
            outcome = transfer
        case .segments(let reason, let lead):
            switch reason {
            case .complete: outcome = TransferOutcome(code: 0, message: "", category: .ok)
            case .paused(let why, let retryAfter):
                let error = PinFetchError(.serverResponse, "\(o.label): \(why)\(Self.atByte(o.offset))")
                return (.failed(error, retryable: true, retryAfter: retryAfter), .keep)
            case .outOfTime: outcome = TransferOutcome(code: 0, message: "out of time", category: .network)
            case .cancelled: outcome = TransferOutcome(code: 0, message: "cancelled", category: .aborted)
            case .representationChanged(let why): return (.startOver(why, discard: true), .keep)
            case .stopped(let why): outcome = TransferOutcome(code: 0, message: why, category: .network)
            case .endedEarly:
                outcome =
                    lead.category == .ok
                    ? TransferOutcome(code: 0, message: "segments ended early", category: .network) : lead
            case .localFailure(let error):
                return (.failed(error, retryable: false, retryAfter: nil), .keep)
            }
        }
        let ok = outcome.category == .ok
        switch o.decision {
        case .replaceExpecting(let length):
            guard ok else { return (Self.failure(outcome, o), .keep) }
            guard o.received >= length else {
                let short = AnswerDecision.decideShortBody(length: length, received: o.received, o.context)
                guard case .restart(let reason) = short else { return (Self.verdict(short, o), .keep) }
                // The same slice again is a protocol error.
                let expected = o.context.validator.map {
                    ExpectationChange.set(.init(validator: $0, totalLength: length))
                }
                return (.startOver(reason, discard: o.hasReplaced), expected ?? .keep)  // its bytes were a slice
            }
            return (.complete, .clear)
        case .append(_, let end, _), .replace(let end, _):
            guard ok else { return (Self.failure(outcome, o), .keep) }
            if let end, o.offset < end {
                let error = PinFetchError(.network, "\(o.label): body ended at byte \(o.offset) of \(end)")
                return (.failed(error, retryable: true, retryAfter: nil), .clear)
            }
            if let total = o.totalLength, o.offset < total {
                // A 206 that covered less than asked: ask for the rest if it brought anything.
                guard o.offset > o.requestedOffset else {
                    let error = PinFetchError(.protocolViolation, "\(o.label): empty range answer at byte \(o.offset)")
                    return (.failed(error, retryable: true, retryAfter: nil), .clear)
                }
                return (.moreToFetch, .clear)
            }
            return (.complete, .clear)
        case .finalize:
            return (.finalize, .keep)
        case .unchanged:
            return (.unchanged, .keep)
        case .restart, .retry, .fail:
            return (Self.verdict(o.decision!, o), .keep)
        case nil:
            guard ok else { return (Self.failure(outcome, o), .keep) }
            let error = PinFetchError(.protocolViolation, "\(o.label): no usable answer")
            return (.failed(error, retryable: true, retryAfter: nil), .keep)
        }
    }

    /// The verdict for a decision that writes nothing: a restart, a retry or a failure.
    private static func verdict(_ decision: AnswerDecision, _ o: Observation) -> AttemptVerdict {
        switch decision {
        case .restart(let reason):
            return .startOver(reason, discard: o.wroteSuspectBytes)
        case .retry(let code, let reason, let retryAfter):
            let error = PinFetchError(code, "\(o.label): \(reason)", underlying: o.status)
            return .failed(error, retryable: true, retryAfter: retryAfter)
        case .fail(let code, let reason):
            let reason = o.status == 407 ? o.proxyAuthentication ?? reason : reason
            let error = PinFetchError(code, "\(o.label): \(reason)", underlying: o.status)
            return .failed(error, retryable: false, retryAfter: nil)
        case .append, .replace, .replaceExpecting, .finalize, .unchanged:
            return .failed(
                PinFetchError(.generic, "internal: \(decision) is not a failure"),
                retryable: false,
                retryAfter: nil
            )
        }
    }

    /// The failure of a transfer that did not end well: its kind, and whether another attempt
    /// may help (network trouble may pass; a bad certificate will not).
    private static func failure(_ outcome: TransferOutcome, _ o: Observation) -> AttemptVerdict {
        if outcome.category == .aborted, o.cancelled {
            let error = PinFetchError(.cancelled, "\(o.label): cancelled\(Self.atByte(o.offset))")
            return .failed(error, retryable: false, retryAfter: nil)
        }
        let code = outcome.failureCode
        let error = PinFetchError(
            code,
            "\(o.label): \(outcome.message)\(Self.atByte(o.offset))",
            underlying: outcome.code
        )
        return .failed(error, retryable: code == .network, retryAfter: nil)
    }

    /// ` (at byte N)` when bytes of the file are on disk, else nothing: an offset of 0 says nothing.
    static func atByte(_ offset: Int64) -> String { offset > 0 ? " (at byte \(offset))" : "" }
}
