import FoundationEssentials
@preconcurrency import Glibc

/// One fetch of one file to one destination, on one thread, as a short loop over steps
/// (Architecture, in the documentation catalog): name → lock → already there? → the sources
/// before the mirrors (``Source``: local cache, an earlier entry pinned the same, remote cache)
/// → recovery of an earlier partial (``CheckpointRecovery``, ``ResumeDecision``) → attempts over
/// the mirrors (``Attempt``, judged by ``AttemptVerdict``; ``RetryPolicy`` between them) → verify
/// (``DigestCheck``, ``MismatchPolicy``) → place (``Placement``).
///
/// Each step owns its state and returns a value; this type holds the file's identity and the
/// loop. The partial and everything about it is the ``Partial``'s; requests go through
/// ``FileRequests``.
final class Download {
    let job: FetchJob
    /// The batch's destinations (``DestinationClaims``), or `nil` outside a batch.
    let claims: DestinationClaims?
    /// A file an earlier entry of the batch verified against the same pin (``SiblingSource``).
    let sibling: String?
    /// The file to create; with a naming directory, replaced by the `Content-Disposition` name.
    var destination: String
    /// `true` when the server chose the destination's name: it never replaces a file.
    var serverNamed = false
    let requests: FileRequests
    var mirrors: MirrorList
    var partial: Partial
    var meter: ProgressMeter
    /// What the segmented phases of this run may do, and where their pieces came from.
    var segmentPolicy = Segmentation.Policy()
    /// What an answer without `Range` must not contradict again (``AttemptPlan/Expectation``).
    var expected: AttemptPlan.Expectation?
    /// What the result reports besides the partial's own counters.
    var tally = Tally()

    var pin: Pin? { self.job.pin }
    var options: FetchOptions { self.requests.requester.options }
    var control: TransferControl { self.requests.requester.control }
    var deadline: Deadline { self.requests.requester.deadline }
    /// The URL the result names: the first of the file's own mirrors, a password shown as `***`.
    var url: String { self.mirrors.urls[self.mirrors.hashedCount].redacted }
    var sidecars: Sidecars { Sidecars(destination: self.destination) }
    /// Hard bound on restarts from byte 0, so a server that changes on every request ends the run.
    var maximumRestarts: Int { self.options.retries + 2 }

    /// What the result reports that no step keeps.
    struct Tally {
        var attempts = 0
        /// `true` when the destination already held the pinned file, or a source placed it.
        var alreadyComplete = false
        /// The cache it came from, the URL of what was placed, and how asking the remote cache
        /// ended (``SourceAnswer``).
        var cache: FetchResult.CacheKind?
        var source: String?
        var listed: FetchResult.MirrorOutcome?
        /// Bytes received and read back outside the partial (sources, the destination's check).
        var receivedBytes: Int64 = 0
        var rehashedBytes: Int64 = 0
        /// Whether this run took the destination's lock (so its sidecars are this run's to report).
        var heldLock = false
    }

    /// - Throws: ``PinFetchError/Code/usage`` for a URL that is not an absolute `http`/`https` one.
    init(
        _ job: FetchJob,
        options: FetchOptions,
        control: TransferControl,
        easy: EasyHandle,
        transport: TransportSettings,
        claims: DestinationClaims? = nil,
        sibling: String? = nil
    ) throws(PinFetchError) {
        guard !job.mirrors.isEmpty else { throw PinFetchError(.usage, "no URL given") }
        // Hash-addressed mirrors first, for a pinned file: the pin decides.
        let hashed = try (job.pin.map { pin in job.hashedMirrors.map { $0.url(for: pin) } } ?? []).map {
            (text) throws(PinFetchError) in try HTTPURL(text)
        }
        let urls = hashed + (try job.urls.get())
        self.mirrors = MirrorList(urls: urls, hashedCount: hashed.count)
        self.job = job
        self.destination = job.destination
        self.claims = claims
        self.sibling = sibling
        let reporter = Reporter(path: job.destination, events: options.events)
        self.requests = FileRequests(
            requester: Requester(
                mirrors: urls,
                hashedMirrorCount: hashed.count,
                options: options,
                transport: transport,
                control: control,
                deadline: Deadline(maximumTime: options.maximumTime),
                reporter: reporter
            ),
            easy: easy
        )
        self.partial = Partial(
            destination: job.destination,
            pinned: job.pin != nil,
            options: options,
            algorithm: job.pin?.algorithm ?? .sha256,
            mirror: urls[0].text
        )
        self.meter = ProgressMeter(path: job.destination, options: options)
    }

    var requester: Requester { self.requests.requester }
    var reporter: Reporter { self.requests.requester.reporter }

    /// The steps, in order; the digest of the file at the destination.
    func fetch() throws(PinFetchError) -> [UInt8] {
        if let directory = self.job.namingDirectory { try self.nameByContentDisposition(in: directory) }
        let locks = try Preparation(
            destination: self.destination,
            serverNamed: self.job.namingDirectory != nil,
            claims: self.claims,
            lockTimeout: self.options.lockTimeout,
            deadline: self.deadline,
            control: self.control
        ).lock { (error) throws(PinFetchError) -> PinFetchError in
            if error.code == .destinationLocked, self.deadline.isPast { return self.maximumTimeError() }
            // Interrupted while another process held it: nothing was asked for yet.
            if error.code == .cancelled, let stop = self.control.notStarting { return self.requests.notStarted(stop) }
            return error
        }
        defer { for lock in locks.reversed() { lock.release() } }
        self.tally.heldLock = true
        try Preparation.clearLeftovers(self.sidecars)
        if let digest = try self.verifyExistingDestination() { return digest }
        if self.serverNamed, FileSystem.exists(self.destination) {
            throw PinFetchError(
                .fileIO,
                "\(self.destination) exists already: a name the server chose (Content-Disposition) never replaces a file"
                    + (self.pin == nil ? "" : " that does not hold the pinned bytes")
            )
        }
        if let digest = try self.trySources() { return digest }
        try self.takeOverPartial()
        return try self.verifyAndPlace()
    }

    /// The sources asked before the mirrors, in order (Architecture, "Sources").
    var sources: [any Source] {
        [LocalCacheSource()] + (self.sibling.map { [SiblingSource(path: $0)] } ?? []) + [RemoteCacheSource()]
    }

    /// Where verified bytes go (a name the server chose never replaces a file).
    var placement: Placement { Placement(destination: self.destination, replaces: !self.serverNamed) }

    /// The cache, when the caller chose one (``FetchOptions/cacheDirectory``).
    var cache: DigestCache? { self.options.cacheDirectory.map { DigestCache(directory: $0) } }

    /// With a pin, asks each source in turn; the pin's digest once one placed the file.
    private func trySources() throws(PinFetchError) -> [UInt8]? {
        guard let pin = self.pin else { return nil }
        let context = SourceContext(
            pin: pin,
            sidecars: self.sidecars,
            placement: self.placement,
            requester: self.requester,
            easy: self.requests.easy,
            cache: self.cache
        )
        for source in self.sources {
            let answer = try source.place(context)
            self.tally.receivedBytes += answer.receivedBytes
            self.tally.rehashedBytes += answer.rehashedBytes
            if let listed = answer.listed { self.tally.listed = listed }
            guard case .placed(let size) = answer.outcome else { continue }
            try self.partial.discard()  // superseded by the verified file
            self.partial.state.offset = size
            // A copy is already complete; a remote cache's blob was downloaded.
            self.tally.alreadyComplete = answer.cache != .remote
            self.tally.cache = answer.cache
            self.tally.source = answer.source
            return pin.digest
        }
        self.meter.receivedElsewhere = self.tally.receivedBytes
        return nil
    }

    /// With a pin, a regular file already at the destination that matches it is the result: no
    /// request is made (`already-complete`), and a leftover partial is removed. Only a file the
    /// user owns counts, never a symbolic link (a link, or a file another user planted in a
    /// shared directory, could change after pinfetch said "verified"); such a destination is
    /// replaced by the verified file.
    private func verifyExistingDestination() throws(PinFetchError) -> [UInt8]? {
        guard let pin = self.pin, FileSystem.isRegularFile(self.destination, followingLinks: false) else { return nil }
        guard let existing = try? PartialFile(path: self.destination, readOnly: true),
            (try? existing.owner()) == geteuid()
        else { return nil }
        let size = try existing.size()
        let running = RunningDigest(algorithm: pin.algorithm)
        try existing.hash(from: 0, to: size, into: running) { self.requester.shouldStop }
        self.tally.rehashedBytes += size
        let digest = running.finalize()
        guard digest == pin.digest else { return nil }
        try self.partial.discard()
        self.partial.state.offset = size
        self.tally.alreadyComplete = true
        return digest
    }

    /// Decides about a partial left by an earlier run (Resume and checkpoints, "The resume
    /// decision") and downloads what is missing.
    private func takeOverPartial() throws(PinFetchError) {
        let sidecars = self.sidecars
        let records = CheckpointFile.read(sidecars.checkpoint) ?? CheckpointFile.Records()
        let newest = records.durable.first ?? records.light
        // Without a pin, hash on with what the partial was hashed with.
        if self.pin == nil, let algorithm = newest?.algorithm { self.partial.use(algorithm) }
        var recovery: CheckpointRecovery?
        if newest != nil, let file = try? PartialFile(path: sidecars.partial, readOnly: true) {
            recovery = try CheckpointRecovery.recover(records, partial: file, algorithm: self.partial.state.algorithm) {
                [control] in control.isCancelled
            }
        }
        self.partial.rehashedBytes += recovery?.rehashedBytes ?? 0
        if let checkpoint = recovery?.checkpoint, let index = self.mirrors.urls.firstIndex(where: checkpoint.names) {
            self.mirrors.current = index  // continue where the partial came from
        }
        // HEAD only helps decide about a partial with a checkpoint: without one, the partial is
        // discarded whatever HEAD says, and the GET says all there is to know.
        let probe = recovery != nil ? self.requests.probe(self.mirrors.current) : nil
        let decision = ResumeDecision.decide(
            checkpoint: recovery?.checkpoint,
            partialSize: FileSystem.size(of: sidecars.partial),
            url: self.mirrors.urls[self.mirrors.current],
            algorithm: self.partial.state.algorithm,
            probe: probe,
            pinned: self.pin != nil
        )
        if case .startOver(let reason) = decision {
            if reason != .noPartial {
                self.reporter.decide("partial not resumed: \(reason.rawValue); starting from byte 0")
            }
            try self.partial.discard()
            return try self.download()
        }
        // A decision to keep the partial was made from its checkpoint.
        guard let recovery else { throw PinFetchError(.generic, "internal: a partial kept without its checkpoint") }
        if decision == .finalize {
            self.reporter.decide("the partial is as long as the remote file: verifying it without a GET")
            return try self.partial.restore(recovery)
        }
        try self.partial.restore(recovery)
        // A pinned partial whose mirror is not among this run's is resumed on the current one
        // with a plain `Range`, and the pin decides.
        if !recovery.checkpoint.names(self.mirrors.urls[self.mirrors.current]) {
            self.reporter.decide(
                "the partial came from \(recovery.checkpoint.url), not a mirror of this run: the pin decides"
            )
            self.partial.state.crossMirror = true
        }
        try self.download()
    }

    /// With `--content-disposition`: the destination becomes the safe base name the server gives
    /// (``ServerNaming``), inside the naming directory.
    private func nameByContentDisposition(in directory: String) throws(PinFetchError) {
        guard let name = try ServerNaming.name(self.requests, mirror: self.mirrors.current) else { return }
        self.destination = Text.path(directory, name)
        self.serverNamed = true
        let reporter = Reporter(path: self.destination, events: self.options.events)
        let old = self.requests.requester
        self.requests.requester = Requester(
            mirrors: old.mirrors,
            hashedMirrorCount: old.hashedMirrorCount,
            options: old.options,
            transport: old.transport,
            control: old.control,
            deadline: old.deadline,
            reporter: reporter
        )
        self.partial = Partial(
            destination: self.destination,
            pinned: self.pin != nil,
            options: self.options,
            algorithm: self.partial.state.algorithm,
            mirror: self.partial.mirror
        )
        self.meter = ProgressMeter(path: self.destination, options: self.options)
    }

    /// Runs the fetch to its end; never throws: a failure is in the result.
    func execute() -> FetchResult {
        var result = FetchResult.failed(
            url: self.url,
            path: self.destination,
            algorithm: self.partial.state.algorithm,
            error: nil
        )
        do throws(PinFetchError) {
            let digest = try self.fetch()
            result.digest = Pin.hex(digest)
            result.status =
                self.tally.alreadyComplete
                ? .alreadyComplete : self.partial.state.resumedFrom > 0 ? .resumed : .downloaded
        } catch {
            // A step that stopped at the --max-time deadline (hashing a large destination or cache
            // entry, waiting for the lock) says so, as a network failure (exit 4).
            result.error =
                error.code == .cancelled && !self.control.isCancelled && self.deadline.isPast
                ? self.maximumTimeError() : error
        }
        let partial = self.partial
        result.bytes = partial.state.offset
        result.algorithm = partial.state.algorithm
        result.path = self.destination
        result.fromCache = self.tally.cache != nil
        result.cache = self.tally.cache
        result.resumedFrom = result.error == nil ? partial.state.resumedFrom : 0
        result.downloadedBytes = partial.receivedBytes + self.tally.receivedBytes
        result.rehashedBytes = partial.rehashedBytes + self.tally.rehashedBytes
        result.restarts = partial.restarts
        result.attempts = self.tally.attempts
        result.elapsedSeconds = self.deadline.elapsed
        let listed = self.mirrors.listed(failingWith: result.error)
        if !listed.isEmpty {
            result.source = self.mirrors.label
            result.mirrors = listed
        }
        if let url = self.tally.source { result.source = url }
        if let asked = self.tally.listed { result.mirrors.insert(asked, at: 0) }
        // A file that made no request: as if never taken (its partial, if any, is still named).
        if let stop = self.requests.notStartedBecause {
            result.status = .skipped
            result.error = PinFetchError(stop.cause, "\(self.destination): not started: \(stop.reason)")
            result.bytes = 0
            result.digest = nil
            result.attempts = 0
            result.source = nil
            result.mirrors = []
        }
        // Only the partial this run held the lock of: another process's is not this file's to name.
        if result.error != nil, self.tally.heldLock { result.partial = .found(for: self.destination) }
        return result
    }
}

/// The mirrors of one file, hash-addressed ones first, and how each one tried so far ended.
struct MirrorList {
    /// Validated, in order of preference: ``hashedCount`` hash-addressed mirrors, then the file's own.
    let urls: [HTTPURL]
    let hashedCount: Int
    /// The mirror requests go to now.
    var current = 0
    /// How each mirror tried so far ended, in the order first tried (`--json` `mirrors`): the
    /// latest word counts.
    private(set) var outcomes: [(index: Int, outcome: String)] = []
    /// Mirrors the current download does not go to (they sent other bytes than the pin).
    var excluded: Set<Int> = []

    var count: Int { self.urls.count }

    /// The current mirror as messages show it: a password in the URL is `***`.
    var label: String { self.urls[self.current].redacted }

    /// Records how mirror `index` ended so far.
    mutating func note(_ index: Int, _ outcome: String) {
        if let position = self.outcomes.firstIndex(where: { $0.index == index }) {
            self.outcomes[position].outcome = outcome
        } else {
            self.outcomes.append((index, outcome))
        }
    }

    /// Records that the current mirror is being tried, unless it was before.
    mutating func noteTried() {
        if !self.outcomes.contains(where: { $0.index == self.current }) { self.note(self.current, "tried") }
    }

    /// The outcomes for `--json` `mirrors`: a mirror whose attempt ended in the run's failure
    /// `error` (a full disk, a rename refused) has that failure as its outcome, not `tried`.
    func listed(failingWith error: PinFetchError?) -> [FetchResult.MirrorOutcome] {
        var outcomes = self.outcomes
        if let error, let last = outcomes.lastIndex(where: { $0.index == self.current }),
            outcomes[last].outcome == "tried"
        {
            outcomes[last].outcome = error.code.description
        }
        return outcomes.map { FetchResult.MirrorOutcome(url: self.urls[$0.index].redacted, outcome: $0.outcome) }
    }
}
