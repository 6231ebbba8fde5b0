import FoundationEssentials
@preconcurrency import Glibc

/// One fetch of one file to one destination, on one thread, in the order it happens
/// (DESIGN.md): name → lock → already there? → cache (local, a file of the batch pinned the
/// same, remote) → probe → resume decision → attempts
/// (``AnswerDecision`` for each answer, ``RetryPolicy`` between them) → verify → commit.
///
/// The decisions are pure values elsewhere; this type executes them. Its extensions, one file
/// per step: `Probe.swift`, `Attempts.swift`, `AnswerReader.swift`, `Redirects.swift`,
/// `PartialLifecycle.swift`, `Commit.swift`.
///
/// Invariants: `state.offset` bytes of `<dest>.part` are covered by `digest` whenever no body
/// is streaming; a checkpoint on disk never describes more bytes than were `fsync`ed; nothing
/// reaches `destination` unverified.
final class Download {
    /// The URL the result names: the first mirror, a password in it shown as `***`.
    let url: String
    /// Mirrors of one file, in order of preference (DESIGN.md, "Mirrors"), validated.
    let mirrors: [HTTPURL]
    /// The mirror requests go to now.
    var mirrorIndex = 0
    /// How each mirror tried so far ended, in the order first tried (`--json` `mirrors`).
    var mirrorOutcomes: [(index: Int, outcome: String)] = []
    var currentURL: String { self.mirrors[self.mirrorIndex].text }
    /// The current mirror as messages show it: a password in the URL is `***`.
    var currentLabel: String { self.mirrors[self.mirrorIndex].redacted }
    /// The file to create; with a naming directory, replaced by the `Content-Disposition` name.
    var destination: String
    /// Name the file by `Content-Disposition` inside this directory (`--content-disposition`).
    let namingDirectory: String?
    let pin: Pin?
    let options: FetchOptions
    let control: TransferControl
    let easy: EasyHandle
    /// PEM trust anchors for HTTPS: the system bundle plus `--cacert`, or `nil` for libcurl's default.
    let transport: TransportSettings
    let started = Date()
    /// The batch's destinations (``DestinationClaims``), or `nil` outside a batch.
    let claims: DestinationClaims?
    /// `true` when the server chose the destination's name (`Content-Disposition`): it never
    /// replaces a file, and never one another file of the batch has.
    var serverNamed = false
    var sidecars: Sidecars { Sidecars(destination: self.destination) }

    /// What the partial holds.
    var state: PartialState
    var digest: RunningDigest
    var partial: PartialFile?
    /// Offset of the last checkpoint written (its bytes are durable).
    var durableOffset: Int64 = 0
    /// After a restart that discarded a slice sent for the whole: the representation the next
    /// answer, without `Range`, must not contradict again (``AnswerContext``).
    var expectedAgain: (validator: Validator, totalLength: Int64)?
    /// A restart from byte 0 was decided: the next GET goes without `Range`, and the partial is
    /// emptied only once its answer is taken (so a failure before that keeps it resumable).
    var restartPending = false
    /// Where the partial stood when another mirror's bytes were first appended to it (a pinned
    /// cross-mirror resume): what a mismatch goes back to instead of byte 0.
    var handOver: HandOver?
    var lastProgressTime = Date.distantPast

    var downloadedBytes: Int64 = 0
    /// The offset up to which the kernel was asked to start writing the partial back
    /// (``PartialFile/startWriteback(from:count:)``); set where a body starts.
    var writebackOffset: Int64 = 0
    var rehashedBytes: Int64 = 0
    var restarts = 0
    var attempts = 0
    /// The mirror probed and what it said; the final head of that HEAD, whatever its status.
    var probeResult: (mirror: Int, probe: Probe?, head: ResponseHead?)?
    var fromCache = false
    /// The remote cache blob the file came from (redacted), once it did.
    var remoteCacheURL: String?
    /// How asking the remote cache ended, when it answered anything but a miss: listed first in
    /// `--json` `mirrors` (`ok`, `mismatch`, or the kind of failure).
    var remoteCacheOutcome: FetchResult.MirrorOutcome?
    /// How many of ``mirrors`` are hash-addressed ones (first in the list).
    let hashedMirrorCount: Int
    /// The `Last-Modified` of the representation this run's answers delivered, in seconds since
    /// the epoch (``FetchOptions/remoteTime``).
    var remoteModified: Int64?
    /// GCS's `x-goog-hash` MD5 of the object and the MD5 of this run's body from byte 0, while
    /// one answer delivers it whole (``CrossCheckDigest``); `nil` otherwise.
    var crossCheck: (expected: [UInt8], digest: CrossCheckDigest)?
    /// The file turned out larger than ``FetchOptions/maximumFileSize``: its partial goes.
    var oversized = false
    /// `true` when the destination already held the pinned file.
    var alreadyComplete = false
    /// Whether a request of this file reached libcurl; until then `--fail-fast` or an interrupt
    /// leaves the file ``FetchResult/Status/skipped`` (DESIGN.md: "a file never started").
    var madeRequest = false
    /// Set when a piece of a segmented fetch answered for another representation: start over.
    var segmentRestart: String?
    /// Set once a segmented phase stopped early: the rest of this run uses one stream.
    var segmentsStopped = false
    /// Where a segmented fetch of this run took pieces from, once helpers brought any: a
    /// mismatch is then named for it, and the file asked for over one stream.
    enum PieceSources { case severalConnections, severalMirrors }
    var piecesFrom: PieceSources?
    /// Mirrors the current ``download(excluding:)`` does not go to (they sent other bytes).
    var excludedMirrors: Set<Int> = []
    /// Whether a segmented fetch of a pinned file may take pieces from the other mirrors: until
    /// a digest mismatch, after which one mirror's bytes decide.
    var piecesFromOtherMirrors = true
    /// Helpers at most for later segmented phases of this run, once the server refused pieces
    /// (`429`, `503`): what it still served then.
    var segmentHelperCeiling: Int?
    /// Set when every connection of a segmented phase was refused (`429`, `503`): the attempt
    /// fails, to be retried after the server's `Retry-After` (seconds), its pieces kept.
    var segmentsPaused: (reason: String, retryAfter: Double?)?
    /// Spans of the partial past `state.offset` written by a segmented fetch and kept for a
    /// resume (recorded in durable checkpoints); `nil` for a partial written in order.
    var writtenAhead: WrittenSpans?
    /// Whether this run took the destination's lock (so its sidecars are this run's to report).
    var heldLock = false
    /// Why the file was not started, once it stopped for that.
    var notStartedBecause: (cause: PinFetchError.Code, reason: String)?
    /// A file an earlier entry of the batch verified against the same pin: copied rather than
    /// downloaded again (``useSibling()``).
    var sibling: String?

    /// Hard bound on restarts from byte 0, so a server that changes on every request ends the run.
    var maximumRestarts: Int { self.options.retries + 2 }

    /// - Throws: ``PinFetchError/Code/usage`` for a URL that is not an absolute `http`/`https` one.
    init(
        _ job: FetchJob,
        options: FetchOptions,
        control: TransferControl,
        easy: EasyHandle,
        transport: TransportSettings,
        claims: DestinationClaims? = nil
    ) throws(PinFetchError) {
        guard !job.mirrors.isEmpty else { throw PinFetchError(.usage, "no URL given") }
        var mirrors: [HTTPURL] = []
        // Hash-addressed mirrors first, for a pinned file (issue 16): the pin decides.
        let hashed = job.pin.map { pin in job.hashedMirrors.map { $0.url(for: pin) } } ?? []
        for text in hashed { mirrors.append(try HTTPURL(text)) }
        mirrors += try job.urls.get()
        self.mirrors = mirrors
        self.hashedMirrorCount = hashed.count
        self.url = mirrors[hashed.count].redacted
        self.namingDirectory = job.namingDirectory
        self.destination = job.destination
        self.pin = job.pin
        self.options = options
        self.control = control
        self.state = PartialState(algorithm: job.pin?.algorithm ?? .sha256)
        self.digest = RunningDigest(algorithm: self.state.algorithm)
        self.easy = easy
        self.transport = transport
        self.claims = claims
    }

    /// Runs the fetch to its end; never throws: a failure is in the result.
    func execute() -> FetchResult {
        var result = FetchResult.failed(
            url: self.url,
            path: self.destination,
            algorithm: self.state.algorithm,
            error: nil
        )
        do throws(PinFetchError) {
            let digest = try self.fetch()
            result.digest = Pin.hex(digest)
            result.status =
                self.alreadyComplete ? .alreadyComplete : self.state.resumedFrom > 0 ? .resumed : .downloaded
        } catch {
            // A step that stopped at the --max-time deadline (hashing a large destination or cache
            // entry, waiting for the lock) says so, as a network failure (exit 4).
            result.error =
                error.code == .cancelled && !self.control.isCancelled && self.pastDeadline
                ? self.maximumTimeError() : error
        }
        result.bytes = self.state.offset
        result.algorithm = self.state.algorithm
        result.path = self.destination
        result.fromCache = self.fromCache
        result.cache = self.remoteCacheURL != nil ? .remote : self.fromCache ? .local : nil
        result.resumedFrom = result.error == nil ? self.state.resumedFrom : 0
        result.downloadedBytes = self.downloadedBytes
        result.rehashedBytes = self.rehashedBytes
        result.restarts = self.restarts
        result.attempts = self.attempts
        result.elapsedSeconds = Date().timeIntervalSince(self.started)
        // A mirror whose attempt ended in a local failure (a full disk, a rename refused) has
        // that failure as its outcome, not `tried`.
        if let error = result.error, let last = self.mirrorOutcomes.lastIndex(where: { $0.index == self.mirrorIndex }),
            self.mirrorOutcomes[last].outcome == "tried"
        {
            self.mirrorOutcomes[last].outcome = error.code.description
        }
        if !self.mirrorOutcomes.isEmpty {
            result.source = self.mirrors[self.mirrorIndex].redacted
            result.mirrors = self.mirrorOutcomes.map {
                FetchResult.MirrorOutcome(url: self.mirrors[$0.index].redacted, outcome: $0.outcome)
            }
        }
        if let url = self.remoteCacheURL { result.source = url }
        if let asked = self.remoteCacheOutcome { result.mirrors.insert(asked, at: 0) }
        // A file that made no request: as if never taken (its partial, if any, is still named).
        if let stop = self.notStartedBecause {
            result.status = .skipped
            result.error = PinFetchError(stop.cause, "\(self.destination): not started: \(stop.reason)")
            result.bytes = 0
            result.digest = nil
            result.attempts = 0
            result.source = nil
            result.mirrors = []
        }
        // Only the partial this run held the lock of: another process's is not this file's to name.
        if result.error != nil, self.heldLock { result.partial = .found(for: self.destination) }
        return result
    }

    private func fetch() throws(PinFetchError) -> [UInt8] {
        if self.namingDirectory != nil { try self.nameByContentDisposition() }
        let name = Text.lastPathComponent(self.destination)
        if name.utf8.count > SafeFileName.maximumNameBytes {
            // Every sidecar must fit in NAME_MAX too; found before anything is created.
            throw PinFetchError(
                self.namingDirectory == nil ? .usage : .fileIO,
                "\(SafeFileName.quoted(name)) \(SafeFileName.tooLong(name.utf8.count))"
            )
        }
        if let refusal = DestinationType.refusal(self.destination) {
            // Bad input when the user named it; a name the server chose fails that file alone.
            throw PinFetchError(self.namingDirectory == nil ? .usage : .fileIO, refusal)
        }
        // A name decided now (by the server, or the URL's when the server gave none) is claimed
        // now: the later claimant of a path fails.
        if self.namingDirectory != nil, self.claims?.claim(self.destination) == false {
            throw PinFetchError(
                .fileIO,
                "\(self.destination): another file of this batch has this name, or keeps a sidecar under it (Content-Disposition)"
            )
        }
        try FileSystem.createDirectories(FileSystem.directory(of: self.destination))
        let sidecars = self.sidecars
        // --max-time bounds the wait for another process's lock too.
        let lockTimeout = [self.options.lockTimeout, self.remainingTime.map { max(0, $0) }].compactMap { $0 }.min()
        // Its own lock, then those of the destinations whose sidecar it is (names shorten, so
        // two processes never wait for each other in a cycle).
        var locks: [DestinationLock] = []
        defer { for lock in locks.reversed() { lock.release() } }
        for path in [sidecars.lock] + Sidecars.owners(of: self.destination).map({ Sidecars(destination: $0).lock }) {
            do throws(PinFetchError) {
                locks.append(try DestinationLock(path: path, timeout: lockTimeout) { [control] in control.isCancelled })
            } catch {
                if error.code == .destinationLocked, self.pastDeadline { throw self.maximumTimeError() }
                // Interrupted while another process held it: nothing was asked for yet.
                if error.code == .cancelled, let stop = self.control.notStarting { throw self.notStarted(stop) }
                throw error
            }
        }
        self.heldLock = true
        // A run of a version before the checkpoint slots, killed while writing a checkpoint, left
        // a temporary; holding the lock, no one else writes it. Only one that is pinfetch's goes
        // (a placement left by a killed run goes when the cache is used again: it is made afresh).
        if let head = FileSystem.readSmallFile(sidecars.checkpointTemporary, limit: CheckpointFile.maximumSize),
            CheckpointSlots.looksLikeStateFile(head)
        {
            try FileSystem.remove(sidecars.checkpointTemporary)
        }
        if FileSystem.exists(sidecars.checkpoint), !FileSystem.isRegularFile(sidecars.checkpoint, followingLinks: false)
        {
            throw PinFetchError(
                .fileIO,
                "\(sidecars.checkpoint) is not a regular file: pinfetch keeps its checkpoint there; remove it"
            )
        }
        if let digest = try self.verifyExistingDestination() { return digest }
        if self.serverNamed, FileSystem.exists(self.destination) {
            throw PinFetchError(
                .fileIO,
                "\(self.destination) exists already: a name the server chose (Content-Disposition) never replaces a file"
                    + (self.pin == nil ? "" : " that does not hold the pinned bytes")
            )
        }
        if let digest = try self.useCacheEntry() { return digest }
        if let digest = try self.useSibling() { return digest }
        if let digest = try self.useRemoteCache() { return digest }
        try self.takeOverPartial()

        return try self.verifyAndCommit()
    }

    /// Decides about a partial left by an earlier run (DESIGN.md, "The resume decision") and
    /// downloads what is missing.
    private func takeOverPartial() throws(PinFetchError) {
        let sidecars = self.sidecars
        let records = CheckpointFile.read(sidecars.checkpoint) ?? CheckpointFile.Records()
        let newest = records.durable.first ?? records.light
        if self.pin == nil, let algorithm = newest?.algorithm, algorithm != self.state.algorithm {
            self.state.algorithm = algorithm  // hash on with what the partial was hashed with
            self.digest = RunningDigest(algorithm: algorithm)
        }
        var recovery: CheckpointRecovery?
        if newest != nil, let partial = try? PartialFile(path: sidecars.partial, readOnly: true) {
            recovery = try CheckpointRecovery.recover(records, partial: partial, algorithm: self.state.algorithm) {
                [control] in control.isCancelled
            }
        }
        self.rehashedBytes += recovery?.rehashedBytes ?? 0
        if let checkpoint = recovery?.checkpoint, let index = self.mirrors.firstIndex(where: checkpoint.names) {
            self.mirrorIndex = index  // continue where the partial came from
        }
        // HEAD only helps decide about a partial with a checkpoint: without one, the partial is
        // discarded whatever HEAD says, and the GET says all there is to know.
        let probe = recovery != nil ? self.probe() : nil
        let decision = ResumeDecision.decide(
            checkpoint: recovery?.checkpoint,
            partialSize: FileSystem.size(of: sidecars.partial),
            url: self.mirrors[self.mirrorIndex],
            algorithm: self.state.algorithm,
            probe: probe,
            pinned: self.pin != nil
        )
        switch decision {
        case .startOver(let reason):
            if reason != .noPartial { self.decide("partial not resumed: \(reason.rawValue); starting from byte 0") }
            try self.discardPartial()
            try self.download()
        case .resume:
            try self.restore(recovery!)
            self.resumeOnAnotherMirror(recovery!.checkpoint)
            try self.download()
        case .finalize:
            self.decide("the partial is as long as the remote file: verifying it without a GET")
            try self.restore(recovery!)
        }
    }

    /// What every request of this file needs, as one value (a segment's helper takes a copy).
    var requester: Requester {
        Requester(
            mirrors: self.mirrors,
            hashedMirrorCount: self.hashedMirrorCount,
            options: self.options,
            transport: self.transport,
            control: self.control,
            deadline: Deadline(started: self.started, maximumTime: self.options.maximumTime),
            reporter: Reporter(path: self.destination, events: self.options.events)
        )
    }

    /// What a segmented phase of the current answer may do, from this run's policy.
    var segmentation: Segmentation {
        Segmentation(
            requester: self.requester,
            engine: self.easy.engine,
            mirror: self.mirrorIndex,
            pinned: self.pin != nil,
            policy: Segmentation.Policy(
                stopped: self.segmentsStopped,
                helperCeiling: self.segmentHelperCeiling,
                fromOtherMirrors: self.piecesFromOtherMirrors,
                excludedMirrors: self.excludedMirrors
            )
        )
    }

    /// A segmented phase for the answer whose body begins now at the offset, or `nil`
    /// (``Segmentation/begin(for:totalLength:partial:offset:writtenAhead:pipeline:writer:)``).
    func beginSegments(
        for head: ResponseHead,
        totalLength: Int64?,
        pipeline: HashingPipeline,
        writer: CheckpointWriter?
    ) -> SegmentedFetch? {
        guard let partial = self.partial,
            let fetch = self.segmentation.begin(
                for: head,
                totalLength: totalLength,
                partial: partial,
                offset: self.state.offset,
                writtenAhead: self.writtenAhead,
                pipeline: pipeline,
                writer: writer
            )
        else { return nil }
        if fetch.mirrors.count > 1 { self.state.mixedSources = true }
        return fetch
    }

    /// One request of this file on its own handle, to the current mirror (``Requester``). Until
    /// the file made a request, `--fail-fast` or an interrupt stops it as not started.
    func request(
        _ method: TransferRequest.Method,
        headers: [String],
        delegate: TransferDelegate,
        freshConnection: Bool = false
    ) throws(PinFetchError) -> TransferOutcome {
        if !self.madeRequest, let stop = self.control.notStarting { throw self.notStarted(stop) }
        let outcome = try self.requester.perform(
            method,
            headers: headers,
            delegate: delegate,
            mirror: self.mirrorIndex,
            on: self.easy,
            freshConnection: freshConnection,
            opensFile: !self.madeRequest
        )
        if outcome.category == .notStarted {
            throw self.notStarted(self.control.notStarting ?? (.cancelled, "the run was interrupted"))
        }
        self.madeRequest = true
        return outcome
    }

    /// Stops a file that made no request yet, for `stop` (``TransferControl/notStarting``).
    func notStarted(_ stop: (cause: PinFetchError.Code, reason: String)) -> PinFetchError {
        self.notStartedBecause = stop
        return PinFetchError(stop.cause, "\(self.destination): not started: \(stop.reason)")
    }

    /// Hands `event` to the caller's hook (``FetchOptions/events``), if any.
    func report(_ event: FetchEvent) {
        self.options.events?(event)
    }

    /// Records how mirror `index` ended so far (the latest word counts; the order is first tried).
    func note(_ index: Int, _ outcome: String) {
        if let position = self.mirrorOutcomes.firstIndex(where: { $0.index == index }) {
            self.mirrorOutcomes[position].outcome = outcome
        } else {
            self.mirrorOutcomes.append((index, outcome))
        }
    }

    /// Reports a decision in words (``FetchEvent/decision(path:message:)``, `-v`).
    func decide(_ message: String) {
        self.report(.decision(path: self.destination, message: message))
    }

    /// Reports a problem that does not fail the download (``FetchEvent/warning(path:message:)``).
    func warn(_ message: String) {
        self.report(.warning(path: self.destination, message: message))
    }

    /// Reports progress and answers whether to go on.
    func progress() -> Bool {
        guard !self.control.isCancelled else { return false }
        guard self.options.progress != nil || self.options.events != nil else { return true }
        let now = Date()
        guard now.timeIntervalSince(self.lastProgressTime) >= 0.2 else { return true }
        self.lastProgressTime = now
        let progress = FetchProgress(
            path: self.destination,
            completedBytes: self.state.offset,
            totalBytes: self.state.totalLength,
            receivedBytes: self.downloadedBytes
        )
        self.options.progress?(progress)
        self.report(.progress(progress))
        return true
    }
}
