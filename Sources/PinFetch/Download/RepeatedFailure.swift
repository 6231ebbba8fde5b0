/// A partial must not make every run fail the same way (a server that breaks its answer to one
/// `Range`, a `304` or a stream error at the end of a file): the run that fails with such a
/// partial records how (``Checkpoint/failure``), and when the next run's attempt at the same
/// offset fails the same way without a byte of progress, it asks for the whole file instead of
/// retrying the same request (<doc:ResumeAndCheckpoints#Answers-to-a-GET>). The partial stays
/// until an answer replaces it.
///
/// Pure, table-tested (`RepeatedFailureTests`). Only failures of an answer count: the server
/// took the request and broke or refused its answer. A host that cannot be reached, a timeout,
/// a cancellation, a full disk or a `404` say nothing about the partial.
enum RepeatedFailure {
    /// libcurl codes of an answer that broke: `CURLE_WEIRD_SERVER_REPLY` (8), `CURLE_HTTP2` (16),
    /// `CURLE_PARTIAL_FILE` (18), `CURLE_GOT_NOTHING` (52), `CURLE_RECV_ERROR` (56),
    /// `CURLE_HTTP2_STREAM` (92).
    static let brokenAnswerCodes: Set<Int> = [8, 16, 18, 52, 56, 92]

    /// How `error` is recorded for the next run, or `nil` when it is not a failure of an answer.
    static func signature(of error: PinFetchError) -> String? {
        let underlying = error.underlying ?? 0
        switch error.code {
        case .protocolViolation: break
        case .network where Self.brokenAnswerCodes.contains(underlying): break
        case .serverResponse where underlying >= 500 || underlying == 416: break
        default: return nil
        }
        return "\(error.code)/\(underlying)"
    }

    /// The record of `error` ending a run at `offset` bytes, or `nil` (nothing to record).
    static func record(_ error: PinFetchError, at offset: Int64) -> Checkpoint.Failure? {
        guard offset > 0, let signature = Self.signature(of: error) else { return nil }
        return Checkpoint.Failure(offset: offset, signature: signature)
    }

    /// Whether an attempt that failed with `error` at `offset`, having received nothing, fails as
    /// the last run did (`previous`).
    static func repeats(
        _ previous: Checkpoint.Failure?,
        _ error: PinFetchError,
        at offset: Int64,
        madeProgress: Bool
    )
        -> Bool
    {
        guard let previous, !madeProgress, offset > 0 else { return false }
        return previous == Self.record(error, at: offset)
    }
}
