import FoundationEssentials
@preconcurrency import Glibc

/// The file's mirrors, hash-addressed ones first, then the URLs given: the last source of a
/// file, and the only one for a file without a pin (Architecture, "Sources").
///
/// The mirrors are one source, not one each, because one partial spans them: a resume may go on
/// at another mirror, pieces may come from several, and a mismatch cuts one mirror's tail off
/// and goes back to the prefix another vouched for (``MismatchPolicy``). Its steps: recovery of
/// an earlier partial (``CheckpointRecovery``, ``ResumeDecision``), attempts (``Attempt``,
/// judged by ``AttemptVerdict``; ``RetryPolicy`` between them), verification (``DigestCheck``,
/// ``MismatchPolicy``) and placement (``Placement``). It owns the partial and every counter of
/// it the result reports; the download reads them once it returned or threw.
final class MirrorSource: Source {
    var mirrors: MirrorList
    var partial: Partial
    var meter: ProgressMeter
    /// What the segmented phases of this run may do, and where their pieces came from.
    var segmentPolicy = Segmentation.Policy()
    /// What an answer without `Range` must not contradict again (``AttemptPlan/Expectation``).
    var expected: AttemptPlan.Expectation?
    /// GETs made so far.
    var attempts = 0
    /// Mirrors other than the current one whose pieces the partial took (a segmented phase).
    var pieceMirrors: Set<Int> = []
    /// An unpinned destination to refresh with a conditional first `GET` (``ConditionalRefresh``);
    /// cleared once an answer decided a restart.
    var refresh: ConditionalRefresh?
    /// The server answered the condition with `304`: the destination stays as it is.
    var unchanged = false
    /// Mirrors whose pieces were in a partial that did not match the pin: once one mirror's
    /// bytes alone match it, theirs were the wrong ones (`--json` `mirrors`: `mismatch`).
    var suspects: Set<Int> = []
    let requests: FileRequests
    let pin: Pin?
    let destination: String
    let placement: Placement

    /// - Parameters:
    ///   - mirrors: The file's mirrors, validated, ``MirrorList/hashedCount`` hash-addressed ones first.
    ///   - placement: Where verified bytes go.
    init(mirrors: MirrorList, pin: Pin?, requests: FileRequests, placement: Placement) {
        self.mirrors = mirrors
        self.pin = pin
        self.requests = requests
        self.placement = placement
        self.destination = placement.destination
        let options = requests.requester.options
        self.partial = Partial(
            destination: placement.destination,
            pinned: pin != nil,
            options: options,
            algorithm: pin?.algorithm ?? .sha256,
            mirror: mirrors.urls[0].text
        )
        self.meter = ProgressMeter(path: placement.destination, options: options)
    }

    var requester: Requester { self.requests.requester }
    var reporter: Reporter { self.requester.reporter }
    var options: FetchOptions { self.requester.options }
    var control: TransferControl { self.requester.control }
    var deadline: Deadline { self.requester.deadline }
    var sidecars: Sidecars { Sidecars(destination: self.destination) }
    /// The cache, when the caller chose one (``FetchOptions/cacheDirectory``).
    var cache: DigestCache? { self.options.cacheDirectory.map { DigestCache(directory: $0) } }
    /// Hard bound on restarts from byte 0, so a server that changes on every request ends the run.
    var maximumRestarts: Int { self.options.retries + 2 }

    /// Recovers what an earlier run left, downloads what is missing, verifies and places it.
    /// - Throws: What ended the mirrors' turn: every mirror failed, sent other bytes than the
    ///   pin (``PinFetchError/Code/digestMismatch``), or a local failure or cancellation.
    func place(_ context: SourceContext) throws(PinFetchError) -> SourceAnswer {
        self.meter.receivedElsewhere = context.receivedBefore
        try self.takeOverPartial()
        if self.unchanged, let refresh {
            self.mirrors.note(self.mirrors.current, "ok")  // it answered: the recorded bytes stand
            try self.superseded(size: refresh.size)
            self.partial.use(refresh.algorithm)
            return SourceAnswer(outcome: .placed(size: refresh.size, digest: refresh.digest), status: .alreadyComplete)
        }
        let digest = try self.verifyAndPlace()
        let status: FetchResult.Status = self.partial.state.resumedFrom > 0 ? .resumed : .downloaded
        return SourceAnswer(outcome: .placed(size: self.partial.state.offset, digest: digest), status: status)
    }

    /// Another source placed the file, or the destination held it already: the partial an
    /// earlier run left is superseded and goes; the result reports `size` bytes.
    func superseded(size: Int64) throws(PinFetchError) {
        try self.partial.discard()
        self.partial.state.offset = size
    }

    /// Decides about a partial left by an earlier run (Resume and checkpoints, "The resume
    /// decision") and downloads what is missing. The `HEAD` comes before any byte of the partial
    /// is read again: a representation that changed would make that read wasted.
    private func takeOverPartial() throws(PinFetchError) {
        let sidecars = self.sidecars
        let records = CheckpointFile.read(sidecars.checkpoint) ?? CheckpointFile.Records()
        let newest = records.durable.first ?? records.light
        // Without a pin, hash on with what the partial was hashed with.
        if self.pin == nil, let algorithm = newest?.algorithm { self.partial.use(algorithm) }
        let partialSize = FileSystem.size(of: sidecars.partial)
        if let newest, let index = self.mirrors.urls.firstIndex(where: newest.names) {
            self.mirrors.current = index  // continue where the partial came from
        }
        // HEAD only helps decide about a partial with a checkpoint: without one, the partial is
        // discarded whatever HEAD says, and the GET says all there is to know.
        var probe = newest != nil && partialSize != nil ? self.requests.probe(self.mirrors.current) : nil
        if let newest, case .startOver(let reason) = self.decide(newest, partialSize, probe),
            ![.noCheckpoint, .partialShorterThanCheckpoint].contains(reason)
        {
            return try self.startOver(reason, newest)
        }
        var recovery: CheckpointRecovery?
        if newest != nil, let file = try? PartialFile(path: sidecars.partial, readOnly: true) {
            var state = stat()
            let written = lstat(sidecars.checkpoint, &state) == 0 ? VerifiedRecord.nanoseconds(state.st_mtim) : nil
            recovery = try CheckpointRecovery.recover(
                records,
                partial: file,
                algorithm: self.partial.state.algorithm,
                stateWritten: written
            ) { [control] in control.isCancelled }
        }
        self.partial.rehashedBytes += recovery?.rehashedBytes ?? 0
        if let checkpoint = recovery?.checkpoint, let index = self.mirrors.urls.firstIndex(where: checkpoint.names),
            index != self.mirrors.current
        {
            self.mirrors.current = index  // an older record, of another mirror
            probe = self.requests.probe(index)
        }
        let decision = self.decide(recovery?.checkpoint, partialSize, probe)
        if case .startOver(let reason) = decision { return try self.startOver(reason, recovery?.checkpoint ?? newest) }
        // A decision to keep the partial was made from its checkpoint.
        guard let recovery else { throw PinFetchError(.generic, "internal: a partial kept without its checkpoint") }
        if decision == .finalize {
            self.reporter.decide("the partial is as long as the remote file: verifying it without a GET")
            return try self.partial.restore(recovery)
        }
        try self.partial.restore(recovery)
        if let probe, recovery.checkpoint.names(self.mirrors.urls[self.mirrors.current]) {
            self.partial.state.validatorConfirmed = recovery.checkpoint.validator.matches(probe.validator) == true
        }
        // A pinned partial whose mirror is not among this run's is resumed on the current one
        // with a plain `Range`, and the pin decides.
        if !recovery.checkpoint.names(self.mirrors.urls[self.mirrors.current]) {
            self.reporter.decide(
                "the partial came from \(Redaction.url(recovery.checkpoint.url)), not a mirror of this run: the pin decides"
            )
            self.partial.state.crossMirror = true
        }
        try self.download()
    }

    private func decide(_ checkpoint: Checkpoint?, _ partialSize: Int64?, _ probe: Probe?) -> ResumeDecision {
        ResumeDecision.decide(
            checkpoint: checkpoint,
            partialSize: partialSize,
            url: self.mirrors.urls[self.mirrors.current],
            algorithm: self.partial.state.algorithm,
            probe: probe,
            pinned: self.pin != nil
        )
    }

    /// Downloads from byte 0 for `reason`, and says why a partial left by an earlier run is not
    /// resumed (unless quiet: bytes downloaded again are worth knowing about).
    private func startOver(_ reason: ResumeDecision.Reason, _ checkpoint: Checkpoint? = nil) throws(PinFetchError) {
        if reason == .differentURL, let checkpoint {
            // The common case is a URL whose query changed (a new signature, a cache buster):
            // only a pin vouches for bytes of another URL (<doc:Architecture#Mirrors>).
            self.reporter.report(
                .restarted(
                    path: self.destination,
                    reason: "the partial came from \(Redaction.url(checkpoint.url)), not"
                        + " \(self.mirrors.urls[self.mirrors.current].redacted); without a pin it is"
                        + " not resumed from another URL (a --sha256 pin would)"
                )
            )
        } else if reason != .noPartial {
            self.reporter.report(
                .restarted(path: self.destination, reason: "the partial is not resumed: \(reason.rawValue)")
            )
        }
        // A partial of another URL is still sound for that URL: it stays until an answer
        // replaces it, so a URL that never answers costs none of it (Architecture, "Mirrors").
        // Without a partial there is nothing to discard: the download's reset removes any
        // checkpoint and makes the partial anew.
        if reason != .differentURL, reason != .noPartial { try self.partial.discard() }
        try self.download()
    }
}
