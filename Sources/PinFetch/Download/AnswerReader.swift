/// Reads one GET answer for a ``Download``: asks ``AnswerDecision`` about the final head, has
/// the download prepare the partial for that decision, then streams the body into the partial
/// and its ``HashingPipeline``.
final class AnswerReader: TransferDelegate {
    unowned let download: Download
    /// What the request asked for and what was known when it was sent.
    let context: AnswerContext
    /// The decision about the final head, once it came.
    private(set) var decision: AnswerDecision?
    /// A local failure (disk) that must end the run, not be retried.
    private(set) var localFailure: PinFetchError?
    /// `true` when the body ran past what its head announced: the bytes it wrote cannot be kept.
    private(set) var wroteSuspectBytes = false
    /// Leading body bytes still to drop: a `206` that started before the offset.
    private var skip: Int64 = 0
    /// The offset the body must not pass.
    private var end: Int64?
    /// Hashes the body while it streams, and writes its checkpoints.
    private var pipeline: HashingPipeline?
    private var writer: CheckpointWriter?
    /// A replacing answer not yet begun: the partial is emptied only when its first byte comes.
    private var pendingReplacement: (head: ResponseHead, totalLength: Int64?, provisional: Bool)?

    init(download: Download, context: AnswerContext) {
        self.download = download
        self.context = context
    }

    override func receive(head: ResponseHead) -> Bool {
        let decision = AnswerDecision.decide(head, self.context)
        self.decision = decision
        switch decision {
        case .append(let skip, let end, let totalLength):
            do throws(PinFetchError) {
                try self.download.continueRepresentation(head, totalLength: totalLength)
            } catch {
                self.localFailure = error
                return false
            }
            self.skip = skip
            self.end = end
            (self.pipeline, self.writer) = self.download.startBody()
        case .replace(let end, let totalLength):
            self.pendingReplacement = (head, totalLength, false)
            self.end = end
        case .replaceExpecting(let length):
            self.pendingReplacement = (head, length, true)
            self.end = length
        case .finalize, .restart, .retry, .fail:
            return false
        }
        return true
    }

    /// Starts a replacing answer: empties the partial and starts hashing from byte 0. Called at
    /// its first body byte, or when it ended cleanly without one; until then a failure leaves an
    /// earlier partial as it was, resumable by a later run.
    func beginReplacement() throws(PinFetchError) {
        guard let pending = self.pendingReplacement else { return }
        self.pendingReplacement = nil
        try self.download.beginRepresentation(
            pending.head,
            totalLength: pending.totalLength,
            provisional: pending.provisional
        )
        (self.pipeline, self.writer) = self.download.startBody()
    }

    /// Waits for the body's bytes to be hashed and its checkpoints written; the first
    /// checkpoint failure, if any.
    func finishBody() -> PinFetchError? {
        defer { self.pipeline = nil }
        let failure = self.pipeline?.finish()
        if let writer = self.writer {
            self.download.durableOffset = max(self.download.durableOffset, writer.durableOffset)
        }
        return failure
    }

    override func receive(body: UnsafeRawBufferPointer) -> Bool {
        do throws(PinFetchError) {
            try self.beginReplacement()
        } catch {
            self.localFailure = error
            return false
        }
        var bytes = body
        if self.skip > 0 {
            let dropped = Int(min(self.skip, Int64(bytes.count)))
            bytes = UnsafeRawBufferPointer(rebasing: bytes[dropped...])
            self.skip -= Int64(dropped)
            if bytes.isEmpty { return true }
        }
        if let end = self.end, self.download.state.offset + Int64(bytes.count) > end {
            // The answer was not what its head said: what it wrote (and checkpointed) is suspect.
            self.decision = .restart("more body bytes than the answer announced")
            self.wroteSuspectBytes = true
            return false
        }
        do throws(PinFetchError) {
            guard let pipeline = self.pipeline else { throw PinFetchError(.generic, "internal: body before head") }
            try self.download.append(bytes, to: pipeline)
        } catch {
            self.localFailure = error
            return false
        }
        return true
    }

    override func progress(received: Int64) -> Bool { self.download.progress() }
}
