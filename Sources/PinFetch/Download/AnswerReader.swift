import FoundationEssentials

/// Reads one GET answer into a ``Partial``: asks ``AnswerDecision`` about the final head, has the
/// partial prepare for that decision, then streams the body into it and its ``HashingPipeline``,
/// over several connections when the ``Segmentation`` cuts it into pieces.
///
/// It reports what it observed (its fields, read once the transfer returned); the attempt
/// decides from them, once (``AttemptVerdict``).
final class AnswerReader: TransferDelegate {
    let partial: Partial
    /// What the request asked for and what was known when it was sent (without the refresh's
    /// condition after a redirect, which drops it: ``Requester/conditionFields``).
    private(set) var context: AnswerContext
    /// The mirror as messages name it.
    let label: String
    private let segmentation: Segmentation
    private let meter: ProgressMeter
    private let control: TransferControl
    /// The decision about the final head, once it came.
    private(set) var decision: AnswerDecision?
    /// The start of an object store's error body (at most ``S3ErrorBody/limit`` bytes), read
    /// when its head was an error, so the failure can say which (``finalDecision``).
    private var errorBody: [UInt8]?

    /// ``decision``, with what an object store's error body said about a failure (S3's code and
    /// message; a `403` is an authentication failure).
    var finalDecision: AnswerDecision? {
        guard let decision, let body = self.errorBody, let status = self.head?.status else { return decision }
        // Only a region other than the one signed for is the reason (S3 may name the bucket's own on any answer).
        if let region = self.head?.value("x-amz-bucket-region"), region != S3Configuration.process.region,
            case .fail(_, let message) = decision,
            region.utf8.allSatisfy({ (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D })
        {
            // S3's PermanentRedirect (301) and AuthorizationHeaderMalformed (400) for another region.
            let said = S3ErrorBody(body).map { ", S3 \($0.code)" } ?? ""
            return .fail(.serverResponse, "\(message)\(said): the bucket is in \(region) (set AWS_REGION=\(region))")
        }
        if let error = S3ErrorBody(body) { return error.applied(to: decision, status: status) }
        guard status == 403, case .fail(_, let message) = decision else { return decision }
        // A 403 without S3's error body: a store that says nothing more (an unsigned request).
        let unsigned = S3CredentialChain.process.known == nil
        return .fail(
            .authentication,
            message + (unsigned ? ", and the request was unsigned: no AWS credentials were found" : "")
        )
    }
    /// Where redirects led the answer (``PartialState/location``), once it came.
    private(set) var location: String?
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
    /// Body bytes this answer wrote to the partial.
    private(set) var received: Int64 = 0
    /// For a range answer framed only by its end (chunked, or closed by the server): where the
    /// partial stood before it. Its bytes are not checkpointed, and are cut off again unless the
    /// body reaches the end its `Content-Range` announced (a lying body shows only by running past it).
    private(set) var rollback: Partial.RollbackPoint?
    /// The segmented fetch this answer leads (`--segments`), and the piece it streams now.
    private(set) var segments: SegmentedFetch?
    private(set) var leadPiece = 0
    /// The lead's current quarter second: when it began, and the pipeline's wait for the hash then.
    private var leadWindow: (start: ContinuousClock.Instant, waited: Duration)?

    init(
        partial: Partial,
        context: AnswerContext,
        label: String,
        segmentation: Segmentation,
        meter: ProgressMeter,
        control: TransferControl
    ) {
        self.partial = partial
        self.context = context
        self.label = label
        self.segmentation = segmentation
        self.meter = meter
        self.control = control
    }

    override func prepareForNextResponse(redirect: Bool = true) {
        // The same request again (fresh credentials) keeps its conditions; a redirect drops them.
        if redirect { self.context.condition = nil }
        self.errorBody = nil  // an earlier hop's error body is never the next answer's
        super.prepareForNextResponse(redirect: redirect)
    }

    override func receive(head: ResponseHead) -> Bool {
        var decision = AnswerDecision.decide(head, self.context)
        // A validated partial continues only with the resource its validator came from: a
        // redirect that now leads elsewhere (or now, or no longer) names another one, whose
        // validator may be the same (nginx derives its ETag from size and time) and says
        // nothing about the partial.
        let location = self.redirected ? self.requestURL.map { Redaction.resource($0) } : nil
        self.location = location
        if self.context.validator != nil, self.context.requestedOffset != nil,
            location != self.partial.state.location
        {
            switch decision {
            case .append, .finalize:
                decision = .restart(
                    "the URL now leads to \(location.map { SafeFileName.quoted($0) } ?? "no redirect"), "
                        + "not to the resource the partial came from"
                )
            default: break
            }
        }
        self.decision = decision
        if let announced = decision.announcedLength,
            let failure = self.partial.sizeRefusal(announced, label: self.label)
        {
            self.localFailure = failure
            return false
        }
        switch decision {
        case .append(let skip, let end, let totalLength):
            do throws(PinFetchError) {
                try self.partial.continueRepresentation(head, totalLength: totalLength)
            } catch {
                self.localFailure = error
                return false
            }
            self.skip = skip
            self.end = end
            let framed = head.contentLength != nil
            if !framed { self.rollback = self.partial.rollbackPoint() }
            (self.pipeline, self.writer) = self.partial.startBody(checkpointed: framed)
            // A resumed answer (206 from the offset) may be cut into pieces too.
            if skip == 0, framed { self.beginSegments(head, totalLength: totalLength) }
        case .replace(let end, let totalLength):
            self.pendingReplacement = (head, totalLength, false)
            self.end = end
        case .replaceExpecting(let length):
            self.pendingReplacement = (head, length, true)
            self.end = length
        case .retry, .fail:
            guard self.context.objectStore, head.status >= 300 else { return false }
            self.errorBody = []  // read to its end or the limit: it says what went wrong
        case .finalize, .unchanged, .restart:
            return false
        }
        return true
    }

    private func beginSegments(_ head: ResponseHead, totalLength: Int64?) {
        guard let pipeline = self.pipeline, let file = self.partial.file else { return }
        // What checks a file put together from several answers: the pin, or the server's digest
        // of the whole representation (RFC 9530 `Repr-Digest`, S3's, GCS's MD5 over this body).
        let checked =
            self.partial.pinned || self.partial.state.serverDigest != nil || self.partial.crossCheck != nil
        guard
            let fetch = self.segmentation.begin(
                for: head,
                totalLength: totalLength,
                partial: file,
                offset: self.partial.state.offset,
                writtenAhead: self.partial.writtenAhead,
                checked: checked,
                pipeline: pipeline,
                writer: self.writer
            )
        else {
            // One stream writes over what an earlier phase left ahead: no longer kept.
            if self.partial.writtenAhead != nil {
                self.partial.writtenAhead = nil
                self.writer?.recordSpans(nil)
            }
            return
        }
        if fetch.mirrors.count > 1 { self.partial.state.mixedSources = true }
        self.partial.state.pieced = true
        self.segments = fetch
        self.leadPiece = fetch.leadPiece
    }

    /// `true` when the answer replaces the partial with an empty representation: a `replace`
    /// that ended cleanly without a body byte (a `replaceExpecting` never does: it is short).
    var replacesWithEmptyBody: Bool {
        guard case .replace = self.decision else { return false }
        return self.pendingReplacement != nil
    }

    /// `true` once the partial was emptied for this answer.
    var hasReplaced: Bool {
        switch self.decision {
        case .replace, .replaceExpecting: self.pendingReplacement == nil
        default: false
        }
    }

    /// `true` when a provisional range body fell short of its announced end: cut it off again.
    var isIncompleteProvisional: Bool {
        guard self.rollback != nil, let end = self.end else { return false }
        return self.partial.state.offset < end
    }

    /// Starts a replacing answer: empties the partial and starts hashing from byte 0. Called at
    /// its first body byte, or when it ended cleanly without one; until then a failure leaves an
    /// earlier partial as it was, resumable by a later run.
    func beginReplacement() throws(PinFetchError) {
        guard let pending = self.pendingReplacement else { return }
        self.pendingReplacement = nil
        try self.partial.beginRepresentation(
            pending.head,
            totalLength: pending.totalLength,
            provisional: pending.provisional,
            location: self.location
        )
        (self.pipeline, self.writer) = self.partial.startBody()
        if !pending.provisional { self.beginSegments(pending.head, totalLength: pending.totalLength) }
    }

    /// Waits for the body's bytes to be hashed and its checkpoints written; the first
    /// checkpoint failure, if any.
    func finishBody() -> PinFetchError? {
        defer { self.pipeline = nil }
        let failure = self.pipeline?.finish()
        if let writer = self.writer {
            self.partial.durableOffset = max(self.partial.durableOffset, writer.durableOffset)
        }
        return failure
    }

    override func receive(body: UnsafeRawBufferPointer) -> Bool {
        if self.errorBody != nil {
            self.errorBody! += body.prefix(S3ErrorBody.limit - self.errorBody!.count)
            return self.errorBody!.count < S3ErrorBody.limit
        }
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
        let offset = self.partial.state.offset
        if let end = self.end, offset + Int64(bytes.count) > end {
            // The answer was not what its head said: what it wrote (and checkpointed) is suspect.
            self.decision = .restart("more body bytes than the answer announced")
            self.wroteSuspectBytes = self.rollback == nil  // a provisional body is cut off anyway
            return false
        }
        if let failure = self.partial.sizeRefusal(offset + Int64(bytes.count), label: self.label) {
            self.localFailure = failure  // a body without a length that runs past --max-filesize
            return false
        }
        do throws(PinFetchError) {
            guard let pipeline = self.pipeline else { throw PinFetchError(.generic, "internal: body before head") }
            if let segments = self.segments { return try self.lead(bytes, segments, pipeline) }
            try self.partial.append(bytes, to: pipeline)
            self.received += Int64(bytes.count)
        } catch {
            self.localFailure = error
            return false
        }
        return true
    }

    /// The lead stream of a segmented fetch: writes its piece, and goes on into the next one only
    /// while nobody has it; `false` (the transfer ends) where another fetcher's piece begins.
    private func lead(
        _ body: UnsafeRawBufferPointer,
        _ segments: SegmentedFetch,
        _ pipeline: HashingPipeline
    ) throws(PinFetchError) -> Bool {
        if !segments.helpersStarted { self.startHelpersIfTheyHelp(segments, pipeline) }
        guard let file = self.partial.file else { throw PinFetchError(.generic, "internal: body before head") }
        if let failure = pipeline.error { throw failure }
        var bytes = body
        while !bytes.isEmpty {
            let end = segments.range(of: self.leadPiece).upperBound
            let offset = self.partial.state.offset
            if offset == end {
                guard segments.claim(self.leadPiece + 1, for: 0) else { return false }
                self.leadPiece += 1
                continue
            }
            let count = Int(min(Int64(bytes.count), end - offset))
            // Through the piece's gate: a stream that raced this lagging piece may have written
            // these bytes already.
            let progress = try segments.write(
                UnsafeRawBufferPointer(rebasing: bytes[..<count]),
                at: offset,
                piece: self.leadPiece,
                to: file
            )
            self.partial.advance(by: Int64(count))
            self.received += Int64(count)
            bytes = UnsafeRawBufferPointer(rebasing: bytes[count...])
            // Made whole by the racing stream, or it is ahead: the rest of this piece would only
            // be dropped, and the racing stream brings it.
            if progress == .whole, self.partial.state.offset < end { return false }
            if progress == .behind, self.received >= SegmentedFetch.raceWarmUp { return false }
        }
        return segments.stop == nil
    }

    /// More connections only help while the network, not the hash, sets the pace: the helpers
    /// start after a quarter second in which the lead waited for the hash less than 1 % of the
    /// time (on a fast loopback the lead waits now and then, the hash is the limit, and more
    /// streams only cost CPU; a server that limits each connection never makes it wait).
    private func startHelpersIfTheyHelp(_ segments: SegmentedFetch, _ pipeline: HashingPipeline) {
        let now = ContinuousClock.now
        guard let window = self.leadWindow else {
            self.leadWindow = (now, pipeline.waitedForHashing)
            return
        }
        let elapsed = now - window.start
        guard elapsed >= .milliseconds(250) else { return }
        let waited = pipeline.waitedForHashing
        if (waited - window.waited) * 100 < elapsed { return segments.startHelpers() }
        self.leadWindow = (now, waited)
    }

    override func progress(received: Int64) -> Bool {
        guard !self.control.isCancelled else { return false }
        let phase: FetchProgress.Phase =
            self.head != nil ? .receiving : self.connected ? .waitingForAnswer : .connecting
        self.meter.report(self.partial, phase: phase)
        return true
    }

    /// Also when a racing stream made the lead's piece whole before the lead got there.
    override var isCancelled: Bool {
        if self.control.isCancelled { return true }
        guard let segments = self.segments else { return false }
        return self.partial.state.offset < segments.range(of: self.leadPiece).upperBound
            && segments.isWritten(self.leadPiece)
    }
}

/// Tells the caller's hooks (``FetchOptions/progress``, ``FetchOptions/events``) how far one
/// file's fetch is, at most five times a second.
final class ProgressMeter {
    let path: String
    let options: FetchOptions
    /// Body bytes this run received outside the partial (a remote cache's blob).
    var receivedElsewhere: Int64 = 0
    private var last = Date.distantPast
    private var phase: FetchProgress.Phase?

    init(path: String, options: FetchOptions) {
        self.path = path
        self.options = options
    }

    /// Reports where `partial` stands and what the transfer is doing, unless that was done
    /// less than 0.2 s ago in the same phase.
    func report(_ partial: Partial, phase: FetchProgress.Phase = .receiving) {
        self.report(
            FetchProgress(
                path: self.path,
                completedBytes: partial.state.offset,
                totalBytes: partial.state.totalLength,
                receivedBytes: partial.receivedBytes + self.receivedElsewhere,
                phase: phase
            )
        )
    }

    /// Reports that another process holds the destination's lock, and this one waits.
    func reportWaitingForLock() {
        self.report(
            FetchProgress(path: self.path, completedBytes: 0, totalBytes: nil, receivedBytes: 0, phase: .waitingForLock)
        )
    }

    private func report(_ progress: FetchProgress) {
        guard self.options.progress != nil || self.options.events != nil else { return }
        let now = Date()
        guard now.timeIntervalSince(self.last) >= 0.2 || progress.phase != self.phase else { return }
        self.last = now
        self.phase = progress.phase
        self.options.progress?(progress)
        self.options.events?(.progress(progress))
    }
}
