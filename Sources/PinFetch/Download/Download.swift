import FoundationEssentials
@preconcurrency import Glibc

/// One fetch of one file to one destination, on one thread, as a short loop over steps
/// (Architecture, in the documentation catalog): name → lock → already there? → each source in
/// turn (``Source``: local cache, an earlier entry pinned the same, remote cache, then the
/// mirrors, ``MirrorSource``) until one placed the file.
///
/// Each step owns its state and returns a value; this type holds the file's identity and the
/// loop. The partial and everything about it is the mirrors' (``MirrorSource``); requests go
/// through ``FileRequests``.
final class Download {
    let job: FetchJob
    /// The batch's destinations (``DestinationClaims``), or `nil` outside a batch.
    let claims: DestinationClaims?
    /// A file an earlier entry of the batch verified against the same pin (``SiblingSource``).
    let sibling: String?
    /// The batch transfer slot this file holds, given up when its commit begins.
    let slot: TransferSlot?
    /// The file to create; with a naming directory, replaced by the `Content-Disposition` name.
    var destination: String
    /// `true` when the server chose the destination's name: it never replaces a file.
    var serverNamed = false
    let requests: FileRequests
    /// The last source, made again when the server names the file.
    var mirrorSource: MirrorSource
    /// What the result reports besides the mirrors' own counters.
    var tally = Tally()

    var pin: Pin? { self.job.pin }
    var options: FetchOptions { self.requests.requester.options }
    var control: TransferControl { self.requests.requester.control }
    var deadline: Deadline { self.requests.requester.deadline }
    var mirrors: MirrorList { self.mirrorSource.mirrors }
    /// The URL the result names: the first of the file's own mirrors, a password shown as `***`.
    var url: String { self.mirrors.urls[self.mirrors.hashedCount].redacted }
    var sidecars: Sidecars { Sidecars(destination: self.destination) }

    /// What the result reports that no step keeps.
    struct Tally {
        /// How the file came to be at the destination (``SourceAnswer/status``).
        var status: FetchResult.Status?
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
        sibling: String? = nil,
        slot: TransferSlot? = nil
    ) throws(PinFetchError) {
        guard !job.mirrors.isEmpty else { throw PinFetchError(.usage, "no URL given") }
        // Hash-addressed mirrors first, for a pinned file: the pin decides.
        // Not for a weak pin: bytes that match an MD5 or SHA-1 need not be the publisher's.
        let strong = job.pin.flatMap { $0.algorithm.isWeak ? nil : $0 }
        let hashed = try (strong.map { pin in job.hashedMirrors.map { $0.url(for: pin) } } ?? []).map {
            (text) throws(PinFetchError) in try HTTPURL(text)
        }
        let urls = hashed + (try job.urls.get())
        self.job = job
        self.destination = job.destination
        self.claims = claims
        self.sibling = sibling
        self.slot = slot
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
        self.mirrorSource = MirrorSource(
            mirrors: MirrorList(urls: urls, hashedCount: hashed.count),
            pin: job.pin,
            requests: self.requests,
            placement: Placement(
                destination: job.destination,
                replaces: true,
                stopRequested: options.stopRequested,
                slot: slot
            )
        )
    }

    var requester: Requester { self.requests.requester }
    var reporter: Reporter { self.requests.requester.reporter }

    /// The steps, in order; the digest of the file at the destination.
    func fetch() throws(PinFetchError) -> [UInt8] {
        if let pin = self.pin, pin.algorithm.isWeak {
            self.reporter.warn(pin.algorithm.weakWarning(for: Text.lastPathComponent(self.destination)))
        }
        if let directory = self.job.namingDirectory { try self.nameByContentDisposition(in: directory) }
        let locks = try Preparation(
            destination: self.destination,
            serverNamed: self.job.namingDirectory != nil,
            claims: self.claims,
            lockTimeout: self.options.lockTimeout,
            deadline: self.deadline,
            control: self.control,
            waiting: { [meter = self.mirrorSource.meter] in meter.reportWaitingForLock() }
        ).lock { (error) throws(PinFetchError) -> PinFetchError in
            if error.code == .destinationLocked, self.deadline.isPast { return self.mirrorSource.maximumTimeError() }
            // Interrupted while another process held it: nothing was asked for yet.
            if error.code == .cancelled, let stop = self.control.notStarting { return self.requests.notStarted(stop) }
            return error
        }
        defer { for lock in locks.reversed() { lock.release() } }
        self.tally.heldLock = true
        try Preparation.clearLeftovers(self.sidecars)
        if let digest = try self.verifyExistingDestination() { return digest }
        if self.options.noClobber, FileSystem.exists(self.destination) { return try self.keptUnderNoClobber() }
        if self.serverNamed, FileSystem.exists(self.destination) {
            throw PinFetchError(
                .fileIO,
                "\(self.destination) exists already: a name the server chose (Content-Disposition) never replaces a file"
                    + (self.pin == nil ? "" : " that does not hold the pinned bytes")
            )
        }
        return try self.trySources()
    }

    /// The sources, in the order they are asked (Architecture, "Sources"): without a pin, or
    /// with a weak one (``HashAlgorithm/isWeak``: a cache's or an earlier file's bytes that
    /// match it need not be the publisher's), only the mirrors.
    var sources: [any Source] {
        guard let pin = self.pin, !pin.algorithm.isWeak else { return [self.mirrorSource] }
        return [LocalCacheSource()] + (self.sibling.map { [SiblingSource(path: $0)] } ?? []) + [
            RemoteCacheSource(), self.mirrorSource,
        ]
    }

    /// Where verified bytes go (a name the server chose never replaces a file).
    var placement: Placement {
        Placement(
            destination: self.destination,
            replaces: !self.serverNamed,
            stopRequested: self.requester.options.stopRequested,
            slot: self.slot
        )
    }

    /// Asks each source in turn; the digest of the file once one placed it.
    /// - Throws: What the last source, the mirrors, threw; a local failure or a cancellation
    ///   from any source.
    private func trySources() throws(PinFetchError) -> [UInt8] {
        var context = SourceContext(
            pin: self.pin,
            sidecars: self.sidecars,
            placement: self.placement,
            requester: self.requester,
            easy: self.requests.easy,
            cache: self.mirrorSource.cache,
            originLength: { [requests] in requests.probe(0)?.length }
        )
        for source in self.sources {
            let answer = try source.place(context)
            self.tally.receivedBytes += answer.receivedBytes
            self.tally.rehashedBytes += answer.rehashedBytes
            context.receivedBefore = self.tally.receivedBytes
            if let listed = answer.listed { self.tally.listed = listed }
            guard case .placed(let size, let digest) = answer.outcome else { continue }
            if !(source is MirrorSource) { try self.mirrorSource.superseded(size: size) }
            self.tally.status = answer.status
            self.tally.cache = answer.cache
            self.tally.source = answer.source
            return digest
        }
        throw PinFetchError(.generic, "internal: the mirrors neither placed the file nor failed")
    }

    /// With a pin, a regular file already at the destination that matches it is the result: no
    /// request is made (`already-complete`), and a leftover partial is removed. Only a file the
    /// user owns counts, never a symbolic link (a link, or a file another user planted in a
    /// shared directory, could change after pinfetch said "verified"); such a destination is
    /// replaced by the verified file. A file whose verified record still describes it
    /// (``VerifiedRecord``) is taken as recorded, without reading it; one that is hashed and
    /// matches gets a record. Without a pin, such a record makes the mirrors ask with a
    /// condition (``ConditionalRefresh``).
    private func verifyExistingDestination() throws(PinFetchError) -> [UInt8]? {
        guard FileSystem.isRegularFile(self.destination, followingLinks: false) else { return nil }
        guard let existing = try? PartialFile(path: self.destination, readOnly: true),
            (try? existing.owner()) == geteuid()
        else { return nil }
        let record = self.options.reverify ? nil : VerifiedRecord.read(existing)
        guard let pin = self.pin else {
            self.mirrorSource.refresh = record.flatMap(ConditionalRefresh.init)
            return nil
        }
        if let recorded = record?.digest(for: pin.algorithm) {
            guard pin.matches(recorded) else { return nil }  // known to hold other bytes
            self.reporter.decide("\(self.destination) is as recorded when it was verified: not read again")
            return try self.alreadyComplete(recorded, size: record!.size)
        }
        let size = try existing.size()
        let running = RunningDigest(algorithm: pin.algorithm)
        try existing.hash(from: 0, to: size, into: running) { self.requester.shouldStop }
        self.tally.rehashedBytes += size
        let digest = running.finalize()
        guard pin.matches(digest) else { return nil }
        // A record that still describes the file keeps its other algorithms' digests.
        var digests = [pin.algorithm: digest]
        for algorithm in HashAlgorithm.allCases where algorithm != pin.algorithm {
            if let other = record?.digest(for: algorithm) { digests[algorithm] = other }
        }
        if existing.isStill(at: self.destination) {
            VerifiedRecord.record(on: existing, digests: digests, validator: record?.validator, url: record?.url)
        }
        return try self.alreadyComplete(digest, size: size)
    }

    /// `--no-clobber` (``FetchOptions/noClobber``) with something at the destination that is
    /// not the pinned file: an unpinned file stays as it is, reported with its digest (its
    /// record's when the record still describes it, else read once); anything else is an error
    /// and stays too.
    /// - Throws: ``PinFetchError/Code/fileIO`` for a pinned destination that does not hold the
    ///   pinned bytes, or one that is not a regular file pinfetch can read.
    private func keptUnderNoClobber() throws(PinFetchError) -> [UInt8] {
        let left = "--no-clobber leaves it (remove it, or run without --no-clobber)"
        guard self.pin == nil else {
            throw PinFetchError(.fileIO, "\(self.destination) exists and does not hold the pinned bytes: \(left)")
        }
        guard FileSystem.isRegularFile(self.destination, followingLinks: false),
            let existing = try? PartialFile(path: self.destination, readOnly: true)
        else {
            throw PinFetchError(.fileIO, "\(self.destination) exists and is not a regular file: \(left)")
        }
        let algorithm = self.mirrorSource.partial.state.algorithm
        let owned = (try? existing.owner()) == geteuid()
        let record = owned && !self.options.reverify ? VerifiedRecord.read(existing) : nil
        if let record, let recorded = record.digest(for: algorithm) {
            self.reporter.decide("\(self.destination) exists (--no-clobber): left as it is, as recorded")
            return try self.alreadyComplete(recorded, size: record.size)
        }
        let size = try existing.size()
        let running = RunningDigest(algorithm: algorithm)
        try existing.hash(from: 0, to: size, into: running) { self.requester.shouldStop }
        self.tally.rehashedBytes += size
        self.reporter.decide("\(self.destination) exists (--no-clobber): left as it is")
        return try self.alreadyComplete(running.finalize(), size: size)
    }

    private func alreadyComplete(_ digest: [UInt8], size: Int64) throws(PinFetchError) -> [UInt8] {
        try self.mirrorSource.superseded(size: size)
        self.tally.status = .alreadyComplete
        return digest
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
        self.mirrorSource = MirrorSource(
            mirrors: self.mirrorSource.mirrors,
            pin: self.pin,
            requests: self.requests,
            placement: self.placement
        )
    }

    /// Runs the fetch to its end; never throws: a failure is in the result.
    func execute() -> FetchResult {
        var result = FetchResult.failed(
            url: self.url,
            path: self.destination,
            algorithm: self.mirrorSource.partial.state.algorithm,
            error: nil
        )
        do throws(PinFetchError) {
            let digest = try self.fetch()
            result.digest = Pin.hex(digest)
            result.status = self.tally.status ?? .downloaded
        } catch {
            // A step that stopped at the --max-time deadline (hashing a large destination or cache
            // entry, waiting for the lock) says so, as a network failure (exit 4).
            result.error =
                error.code == .cancelled && !self.control.isCancelled && self.deadline.isPast
                ? self.mirrorSource.maximumTimeError() : error
        }
        let partial = self.mirrorSource.partial
        result.bytes = partial.state.offset
        result.algorithm = partial.state.algorithm
        result.path = self.destination
        result.fromCache = self.tally.cache != nil
        result.cache = self.tally.cache
        result.resumedFrom = result.error == nil ? partial.state.resumedFrom : 0
        result.downloadedBytes = partial.receivedBytes + self.tally.receivedBytes
        result.rehashedBytes = partial.rehashedBytes + self.tally.rehashedBytes
        result.restarts = partial.restarts
        result.attempts = self.mirrorSource.attempts
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
