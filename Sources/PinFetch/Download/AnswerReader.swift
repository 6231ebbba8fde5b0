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
    /// Leading body bytes still to drop: a `206` that started before the offset.
    private var skip: Int64 = 0
    /// The offset the body must not pass.
    private var end: Int64?
    /// Hashes the body while it streams, and writes its checkpoints.
    private var pipeline: HashingPipeline?
    private var writer: CheckpointWriter?

    init(download: Download, context: AnswerContext) {
        self.download = download
        self.context = context
    }

    override func receive(head: ResponseHead) -> Bool {
        let decision = AnswerDecision.decide(head, self.context)
        self.decision = decision
        do throws(PinFetchError) {
            switch decision {
            case .append(let skip, let end, let totalLength):
                try self.download.continueRepresentation(head, totalLength: totalLength)
                self.skip = skip
                self.end = end
            case .replace(let end, let totalLength):
                try self.download.beginRepresentation(head, totalLength: totalLength)
                self.end = end
            case .finalize, .restart, .retry, .fail:
                return false
            }
        } catch {
            self.localFailure = error
            return false
        }
        (self.pipeline, self.writer) = self.download.startBody()
        return true
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
        var bytes = body
        if self.skip > 0 {
            let dropped = Int(min(self.skip, Int64(bytes.count)))
            bytes = UnsafeRawBufferPointer(rebasing: bytes[dropped...])
            self.skip -= Int64(dropped)
            if bytes.isEmpty { return true }
        }
        if let end = self.end, self.download.state.offset + Int64(bytes.count) > end {
            self.decision = .retry(.protocolViolation, "more body bytes than announced", retryAfter: nil)
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
