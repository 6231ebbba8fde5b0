import Foundation
@preconcurrency import Glibc

/// One fetch of one URL to one destination, on one thread: the resume decision, the GET
/// attempts with retries, checkpoints, and the verified commit (DESIGN.md).
///
/// Invariants: `offset` bytes of `<dest>.part` are covered by `digest` whenever no body is
/// streaming; a checkpoint on disk never describes more bytes than were `fsync`ed; nothing
/// reaches `destination` unverified.
///
/// `@unchecked Sendable`: a run belongs to its transfer thread. While a body streams, a
/// ``HashingPipeline`` owns `digest` and writes checkpoints from its own threads, reading only
/// what the response head fixed before the first body byte (`validator`, `totalLength`,
/// `partial`); ``HashingPipeline/finish()`` hands everything back before the run reads it.
final class FetchRun: @unchecked Sendable {
    /// The URL the result names: the first mirror.
    let url: String
    /// Mirrors of one file, in order of preference (DESIGN.md, "Mirrors").
    let mirrors: [String]
    /// The mirror requests go to now.
    private var mirrorIndex = 0
    private var currentURL: String { self.mirrors[self.mirrorIndex] }
    /// The mirror whose validator `validator` is (it goes into the checkpoint).
    private var validatorSource: String?
    /// The partial came from another mirror: ask for the rest with `Range` and no `If-Range`;
    /// only done with a pin, which decides at the end.
    private var crossMirror = false
    /// The file to create; with a naming directory, replaced by the `Content-Disposition` name.
    private(set) var destination: String
    /// Name the file by `Content-Disposition` inside this directory (`--content-disposition`).
    private let namingDirectory: String?
    let pin: Pin?
    let options: FetchOptions
    let control: TransferControl
    /// The pin's algorithm; without a pin, SHA-256 unless the server offers only SHA-512.
    private(set) var algorithm: HashAlgorithm
    var partialPath: String { self.destination + ".part" }
    var checkpointPath: String { self.destination + ".part.state" }
    var lockPath: String { self.destination + ".part.lock" }
    private let easy: EasyHandle
    private let started = Date()

    private(set) var digest: RunningDigest
    private var partial: PartialFile?
    /// Bytes of `.part` covered by `digest`.
    private(set) var offset: Int64 = 0
    /// The validator of the representation the partial holds.
    private(set) var validator: Validator?
    /// The representation's length in bytes, when known.
    private(set) var totalLength: Int64?
    /// `true` when the partial can be resumed: strong validator, no content coding.
    private(set) var resumable = false
    /// `true` when the partial's bytes came from more than one response.
    private var spliced = false
    /// Offset of the last checkpoint written (its bytes are durable).
    private var lastCheckpointOffset: Int64 = 0
    private var lastProgressTime = Date.distantPast

    private var resumedFrom: Int64 = 0
    private(set) var downloadedBytes: Int64 = 0
    private var rehashedBytes: Int64 = 0
    private(set) var restarts = 0
    private var attempts = 0
    /// The server's digest of the representation for `algorithm` and the field it came in, from
    /// the answers that delivered the partial's bytes.
    private var serverDigest: (field: String, digest: [UInt8])?
    /// The mirror probed and what it said.
    private var probeResult: (mirror: Int, probe: Probe?)?
    /// The final head of the HEAD probe, whatever its status.
    private var probeHead: ResponseHead?
    /// `true` when the file came from the cache.
    private var fromCache = false
    /// `true` when the destination already held the pinned file.
    private var alreadyComplete = false
    /// PEM trust anchors for HTTPS: the system bundle plus `--cacert`, or `nil` for libcurl's default.
    private let caBundle: [UInt8]?

    fileprivate var isCrossMirror: Bool { self.crossMirror }

    /// Hard bound on restarts from byte 0, so a server that changes on every request ends the run.
    private var maximumRestarts: Int { self.options.retries + 2 }

    init(
        mirrors: [String],
        namingDirectory: String? = nil,
        destination: String,
        pin: Pin?,
        options: FetchOptions,
        control: TransferControl,
        easy: EasyHandle,
        caBundle: [UInt8]?
    ) {
        self.url = mirrors.first ?? ""
        self.mirrors = mirrors.isEmpty ? [""] : mirrors
        self.namingDirectory = namingDirectory
        self.destination = destination
        self.pin = pin
        self.options = options
        self.control = control
        self.algorithm = pin?.algorithm ?? .sha256
        self.digest = RunningDigest(algorithm: self.algorithm)
        self.easy = easy
        self.caBundle = caBundle
    }

    /// Runs the fetch to its end; never throws: a failure is in the result.
    func execute() -> FetchResult {
        var result = FetchResult.failed(url: self.url, path: self.destination, algorithm: self.algorithm, error: nil)
        do throws(PinFetchError) {
            let digest = try self.fetch()
            result.digest = Pin.hex(digest)
            result.status = self.alreadyComplete ? .alreadyComplete : self.resumedFrom > 0 ? .resumed : .downloaded
        } catch {
            result.error = error
        }
        result.bytes = self.offset
        result.algorithm = self.algorithm
        result.path = self.destination
        result.fromCache = self.fromCache
        result.resumedFrom = result.error == nil ? self.resumedFrom : 0
        result.downloadedBytes = self.downloadedBytes
        result.rehashedBytes = self.rehashedBytes
        result.restarts = self.restarts
        result.attempts = self.attempts
        result.elapsedSeconds = Date().timeIntervalSince(self.started)
        return result
    }

    // MARK: - The fetch

    private func fetch() throws(PinFetchError) -> [UInt8] {
        for mirror in self.mirrors { try validateURL(mirror) }
        if let directory = self.namingDirectory {
            _ = self.probe()
            if let value = self.probeHead?.value("content-disposition"),
                let name = SafeFileName.fromContentDisposition(value)
            {
                self.destination = (directory as NSString).appendingPathComponent(name)
            }
        }
        try FileSystem.createDirectories(FileSystem.directory(of: self.destination))
        let lock = try DestinationLock(path: self.lockPath, timeout: self.options.lockTimeout) { [control] in
            control.isCancelled
        }
        defer { lock.release() }
        // A run killed while writing a checkpoint or placing a cache entry leaves a temporary;
        // holding the lock, no one else is writing them.
        try FileSystem.remove(self.checkpointPath + ".tmp")
        try FileSystem.remove(self.partialPath + ".cache")
        if let digest = try self.verifyExistingDestination() { return digest }
        if let digest = try self.useCacheEntry() { return digest }

        var checkpoint = FileSystem.readSmallFile(self.checkpointPath, limit: Checkpoint.maximumSize)
            .flatMap { Checkpoint(decoding: $0) }
        if let source = checkpoint?.url, let index = self.mirrors.firstIndex(of: source) {
            self.mirrorIndex = index  // continue where the partial came from
        }
        // HEAD only helps decide about a partial with a checkpoint: without one, the partial is
        // discarded whatever HEAD says, and the GET says all there is to know.
        let probe = checkpoint != nil && FileSystem.exists(self.partialPath) ? self.probe() : nil
        if self.pin == nil, let algorithm = checkpoint?.algorithm, algorithm != self.algorithm {
            self.algorithm = algorithm  // hash on with what the partial was hashed with
            self.digest = RunningDigest(algorithm: algorithm)
        }
        var restored: RunningDigest?
        if let record = checkpoint, record.algorithm == self.algorithm,
            record.hashStateSize == RunningDigest.stateSize(of: self.algorithm),
            record.libraryVersion == RunningDigest.libraryVersion
        {
            restored = RunningDigest(algorithm: self.algorithm, restoring: record.hashState, offset: record.offset)
            if restored == nil { checkpoint = nil }  // inconsistent: never trusted
        }
        // A partial replaced or edited since its checkpoint no longer holds the bytes the hash
        // state covers: hash what it holds now (the pin then decides), instead of trusting it.
        if let recorded = checkpoint?.partialIdentity,
            let current = try? PartialFile(path: self.partialPath, readOnly: true).identity(),
            !recorded.mayDescribe(current)
        {
            restored = nil
        }
        let decision = ResumeDecision.decide(
            checkpoint: checkpoint,
            partialSize: FileSystem.size(of: self.partialPath),
            url: self.currentURL,
            algorithm: self.algorithm,
            probe: probe
        )
        switch decision {
        case .startOver:
            try self.discardPartial()
            try self.download()
        case .resume:
            try self.restore(checkpoint!, digest: restored)
            try self.download()
        case .finalize:
            try self.restore(checkpoint!, digest: restored)
        }

        var startedOverAfterMismatch = false
        while true {
            let digest = self.digest.finalize()
            guard let mismatch = self.mismatch(of: digest) else {
                try self.commit()
                self.options.cacheDirectory.map { DigestCache(directory: $0) }?
                    .store(self.destination, algorithm: self.algorithm, digest: digest)
                return digest
            }
            // A spliced partial that mismatches may hold bytes of two representations: one
            // clean download from byte 0 decides (DESIGN.md, "Finalize").
            if self.spliced, !startedOverAfterMismatch {
                startedOverAfterMismatch = true
                try self.startOver()
                if self.mirrors.count > 1 { self.mirrorIndex = (self.mirrorIndex + 1) % self.mirrors.count }
                try self.download()
                continue
            }
            try self.discardPartial()
            throw PinFetchError(.digestMismatch, mismatch)
        }
    }

    /// Why `digest` is not acceptable, or `nil`: it must equal the pin, and the server's own
    /// `Repr-Digest` / `Content-Digest` for the algorithm when it sent one (RFC 9530).
    private func mismatch(of digest: [UInt8]) -> String? {
        let got = "\(self.algorithm.rawValue):\(Pin.hex(digest))"
        if let pin = self.pin, pin.digest != digest {
            return "checksum mismatch for \(self.destination): expected \(pin), got \(got)"
        }
        if let (field, served) = self.serverDigest, served != digest {
            return "checksum mismatch for \(self.destination): the server's \(field) says "
                + "\(self.algorithm.rawValue):\(Pin.hex(served)), got \(got)"
        }
        return nil
    }

    /// With a pin, a regular file already at the destination that matches it is the result: no
    /// request is made (`already-complete`), and a leftover partial is removed. Returns `nil`
    /// when there is no such file; a file that does not match is replaced atomically later.
    private func verifyExistingDestination() throws(PinFetchError) -> [UInt8]? {
        guard let pin = self.pin, FileSystem.isRegularFile(self.destination) else { return nil }
        let existing = try PartialFile(path: self.destination, readOnly: true)
        let size = try existing.size()
        let running = RunningDigest(algorithm: pin.algorithm)
        try self.rehash(existing, upTo: size, into: running)
        let digest = running.finalize()
        guard digest == pin.digest else { return nil }
        try self.discardPartial()
        self.offset = size
        self.alreadyComplete = true
        return digest
    }

    /// With a pin and a cache, an entry for the pin is placed beside the destination (hard link,
    /// else copy), hashed there, and only then renamed onto it; no request is made. A corrupt
    /// entry is removed and `nil` returned, so the download goes on (and stores a good entry).
    /// A partial is left alone until the cached file is in place.
    private func useCacheEntry() throws(PinFetchError) -> [UInt8]? {
        guard let pin = self.pin, let directory = self.options.cacheDirectory else { return nil }
        let entry = DigestCache(directory: directory).path(for: pin.algorithm, digest: pin.digest)
        guard FileSystem.isRegularFile(entry) else { return nil }
        let placedPath = self.partialPath + ".cache"
        guard DigestCache.linkOrCopy(entry, to: placedPath) else { return nil }
        let placed = try PartialFile(path: placedPath)
        let size = try placed.size()
        let digest = RunningDigest(algorithm: pin.algorithm)
        try self.rehash(placed, upTo: size, into: digest)  // the placed bytes: nothing changes in between
        guard digest.finalize() == pin.digest else {
            try FileSystem.remove(placedPath)
            unlink(entry)
            return nil
        }
        try placed.synchronize()
        try FileSystem.renameDurably(placedPath, to: self.destination)
        try self.discardPartial()  // superseded by the verified file
        self.offset = size
        self.alreadyComplete = true
        self.fromCache = true
        return pin.digest
    }

    /// HEAD the URL (advisory): `nil` unless a `2xx` without a content coding came back.
    /// The first call asks; later calls on the same mirror return what it learned.
    private func probe() -> Probe? {
        if let (mirror, probe) = self.probeResult, mirror == self.mirrorIndex { return probe }
        let probe = self.headProbe()
        self.probeResult = (self.mirrorIndex, probe)
        return probe
    }

    private func headProbe() -> Probe? {
        let delegate = TransferDelegate()
        defer { self.probeHead = delegate.head }
        let headers = ["Accept-Encoding: identity"] + self.options.headers
        guard let outcome = try? self.perform(.head, headers: headers, delegate: delegate), outcome.category == .ok,
            let head = delegate.head, (200..<300).contains(head.status), !head.hasContentCoding
        else { return nil }
        return Probe(length: head.contentLength, validator: head.validator)
    }

    /// Takes over a partial at `checkpoint.offset`: the checkpoint's hash state when it could
    /// be restored, else the partial's first `offset` bytes hashed again from disk.
    private func restore(_ checkpoint: Checkpoint, digest restored: RunningDigest?) throws(PinFetchError) {
        let partial = try PartialFile(path: self.partialPath)
        try partial.truncate(to: checkpoint.offset)  // bytes past it were never covered durably
        self.partial = partial
        if let restored {
            self.digest = restored
        } else {
            self.digest = RunningDigest(algorithm: self.algorithm)
            try self.rehash(partial, upTo: checkpoint.offset, into: self.digest)
        }
        self.offset = checkpoint.offset
        self.validator = checkpoint.validator
        self.validatorSource = checkpoint.url
        self.totalLength = checkpoint.totalLength
        self.resumable = true
        self.spliced = true
        self.resumedFrom = checkpoint.offset
        self.lastCheckpointOffset = checkpoint.offset
    }

    /// Feeds the first `end` bytes of `partial` to `digest`, counting them in `rehashedBytes`.
    private func rehash(_ partial: PartialFile, upTo end: Int64, into digest: RunningDigest) throws(PinFetchError) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        var position: Int64 = 0
        while position < end {
            let slice = UnsafeMutableRawBufferPointer(
                rebasing: buffer[..<Int(min(Int64(buffer.count), end - position))]
            )
            let count = try partial.read(into: slice, at: position)
            guard count > 0 else { throw PinFetchError(.fileIO, "\(partial.path) ended at byte \(position)") }
            digest.update(UnsafeRawBufferPointer(rebasing: slice[..<count]))
            position += Int64(count)
        }
        self.rehashedBytes += end
    }

    // MARK: - Attempts and retries

    private enum AttemptResult {
        case complete
        case moreToFetch
        case finalize
        case startOver(String)
        case failed(PinFetchError, retryable: Bool, retryAfter: Double?)
    }

    /// GETs until the partial holds the whole representation, with retries and back-off.
    private func download() throws(PinFetchError) {
        var retriesUsed = 0
        var backoffStep = 0
        var tried = Set<Int>()
        var dead = Set<Int>()
        while true {
            if self.control.isCancelled { try self.stopForCancellation() }
            self.attempts += 1
            let before = self.offset
            let result: AttemptResult
            do {
                result = try self.attempt()
            } catch {
                try self.keepForLaterRun(after: error)  // e.g. a full disk: cut back to the checkpoint
                throw error
            }
            switch result {
            case .complete, .finalize:
                return
            case .moreToFetch:
                continue
            case .startOver(let reason):
                guard self.restarts < self.maximumRestarts else {
                    try self.discardPartial()
                    throw PinFetchError(.protocolViolation, "gave up after \(self.restarts) restarts: \(reason)")
                }
                try self.startOver()
            case .failed(let error, let retryable, let retryAfter):
                if self.offset > before { backoffStep = 0 }  // progress: back off from the start again
                if error.code == .cancelled { try self.stopForCancellation() }
                tried.insert(self.mirrorIndex)
                if !retryable { dead.insert(self.mirrorIndex) }
                // A mirror not tried yet is an alternative, not a retry; local failures end the run.
                let next = self.nextMirror(excluding: dead)
                let untried = next.map { !tried.contains($0) } ?? false
                guard let next, error.code != .fileIO, error.code != .usage,
                    untried || retriesUsed < self.options.retries
                else {
                    try self.keepForLaterRun(after: error)
                    throw error
                }
                if !untried { retriesUsed += 1 }
                if next != self.mirrorIndex {
                    try self.switchMirror(to: next)
                } else if self.resumable {
                    try self.saveCheckpoint()
                } else if self.offset > 0 {
                    try self.startOver()  // nothing ties these bytes to the next answer
                }
                if !untried {
                    self.sleep(seconds: self.retryDelay(step: backoffStep, retryAfter: retryAfter))
                    backoffStep += 1
                }
            }
        }
    }

    /// The next mirror after the current one, cyclically, that has not failed for good.
    private func nextMirror(excluding dead: Set<Int>) -> Int? {
        (1...self.mirrors.count).lazy.map { (self.mirrorIndex + $0) % self.mirrors.count }.first { !dead.contains($0) }
    }

    /// Moves to mirror `index`. A partial is kept only with a pin (resumed there with a plain
    /// `Range`, the pin deciding at the end); without one it starts over (DESIGN.md, "Mirrors").
    private func switchMirror(to index: Int) throws(PinFetchError) {
        if self.offset > 0 {
            if self.pin != nil {
                if self.resumable { try self.saveCheckpoint() }
                self.crossMirror = true
            } else {
                try self.startOver()
            }
        }
        self.mirrorIndex = index
    }

    private func attempt() throws(PinFetchError) -> AttemptResult {
        var headers = ["Accept-Encoding: identity"]
        let requestedOffset = self.offset
        if requestedOffset > 0, self.crossMirror {
            headers += ["Range: bytes=\(requestedOffset)-"]  // another mirror's validator means nothing here
        } else if requestedOffset > 0 {
            guard self.resumable, let ifRange = self.validator?.ifRangeValue else {
                return .startOver("no strong validator to resume with")
            }
            headers += ["Range: bytes=\(requestedOffset)-", "If-Range: \(ifRange)"]
        }
        headers += self.options.headers
        let delegate = AttemptDelegate(run: self, requestedOffset: requestedOffset)
        let outcome = try self.perform(.get, headers: headers, delegate: delegate)
        if let failure = delegate.finishBody() ?? delegate.localFailure { throw failure }
        switch delegate.plan {
        case .write(let expectedEnd):
            guard outcome.category == .ok else { return self.failure(from: outcome) }
            if let end = expectedEnd, self.offset < end {
                return .failed(
                    PinFetchError(.network, "\(self.currentURL): body ended at byte \(self.offset) of \(end)"),
                    retryable: true,
                    retryAfter: nil
                )
            }
            if let total = self.totalLength, self.offset < total {
                // A 206 that covered less than asked: ask for the rest if it brought anything.
                guard self.offset > requestedOffset else {
                    return .failed(
                        PinFetchError(
                            .protocolViolation,
                            "\(self.currentURL): empty range answer at byte \(self.offset)"
                        ),
                        retryable: true,
                        retryAfter: nil
                    )
                }
                return .moreToFetch
            }
            return .complete
        case .startOver(let reason):
            return .startOver(reason)
        case .finalize:
            return .finalize
        case .fail(let error, let retryable, let retryAfter):
            return .failed(error, retryable: retryable, retryAfter: retryAfter)
        case .none:
            guard outcome.category == .ok else { return self.failure(from: outcome) }
            return .failed(
                PinFetchError(.protocolViolation, "\(self.currentURL): no usable answer"),
                retryable: true,
                retryAfter: nil
            )
        }
    }

    /// The attempt's failure for a transfer that did not end well: its kind, and whether
    /// another attempt may help (network trouble may pass; a bad certificate will not).
    private func failure(from outcome: TransferOutcome) -> AttemptResult {
        if outcome.category == .aborted, self.control.isCancelled {
            let error = PinFetchError(.cancelled, "\(self.currentURL): cancelled at byte \(self.offset)")
            return .failed(error, retryable: false, retryAfter: nil)
        }
        let (code, retryable): (PinFetchError.Code, Bool) =
            switch outcome.category {
            case .network: (.network, true)
            case .tls: (.tlsVerification, false)
            case .authentication: (.authentication, false)
            case .protocolViolation: (.protocolViolation, false)
            case .ok, .aborted, .other: (.generic, false)
            }
        let message = "\(self.currentURL): \(outcome.message) (at byte \(self.offset))"
        return .failed(PinFetchError(code, message, underlying: outcome.code), retryable: retryable, retryAfter: nil)
    }

    /// Performs one request from the original URL, following redirects itself (at most
    /// ``FetchOptions/maximumRedirects``), so each attempt re-resolves an expired signed target.
    /// Credentials given with `-H` (`Authorization`, `Cookie`, `Proxy-Authorization`) are dropped
    /// once a hop leaves the original origin (scheme, host, port); an `https` → `http` hop is
    /// refused unless ``FetchOptions/allowInsecureRedirect``. A refused or broken redirect comes
    /// back as a `protocolViolation` outcome.
    private func perform(
        _ method: TransferRequest.Method,
        headers: [String],
        delegate: TransferDelegate
    ) throws(PinFetchError) -> TransferOutcome {
        var current = self.currentURL
        var headers = headers
        var hops = 0
        while true {
            let request = TransferRequest(
                url: current,
                method: method,
                headers: headers,
                connectTimeout: self.options.connectTimeout,
                stallTimeout: self.options.stallTimeout,
                caBundle: self.caBundle
            )
            let outcome = try self.easy.perform(request, delegate: delegate)
            guard let location = delegate.redirectLocation else { return outcome }
            func refuse(_ reason: String) -> TransferOutcome {
                TransferOutcome(code: 0, message: reason, category: .protocolViolation)
            }
            hops += 1
            guard hops <= self.options.maximumRedirects else {
                return refuse("more than \(self.options.maximumRedirects) redirects")
            }
            guard let base = URL(string: current), let next = URL(string: location, relativeTo: base)?.absoluteURL,
                let scheme = next.scheme?.lowercased(), next.host?.isEmpty == false
            else { return refuse("redirect to a malformed Location") }
            guard scheme == "http" || scheme == "https" else { return refuse("redirect to a \(scheme): URL refused") }
            if base.scheme?.lowercased() == "https", scheme == "http", !self.options.allowInsecureRedirect {
                return refuse("redirect from https to http refused (--allow-insecure-redirect allows it)")
            }
            if Origin(next) != Origin(URL(string: self.currentURL)) {
                headers.removeAll { line in
                    let name = line.prefix { $0 != ":" }.trimmingWhitespace().lowercased()
                    return ["authorization", "cookie", "proxy-authorization"].contains(name)
                }
            }
            current = next.absoluteString
            delegate.prepareForNextResponse()
        }
    }

    /// Exponential back-off with jitter: `retryDelay * 2^step`, drawn in its upper half, and at
    /// least what `Retry-After` asked for; never more than `maximumRetryDelay` seconds.
    private func retryDelay(step: Int, retryAfter: Double?) -> Double {
        let exponential = min(self.options.maximumRetryDelay, self.options.retryDelay * pow(2, Double(min(step, 30))))
        let jittered = exponential > 0 ? Double.random(in: (exponential / 2)...exponential) : 0
        return min(self.options.maximumRetryDelay, max(jittered, retryAfter ?? 0))
    }

    private func sleep(seconds: Double) {
        let deadline = Date().addingTimeInterval(seconds)
        while !self.control.isCancelled, Date() < deadline {
            usleep(UInt32(min(50_000, max(0, deadline.timeIntervalSinceNow) * 1_000_000)))
        }
    }

    // MARK: - The partial, checkpoints and the commit

    /// Called by the attempt for a `200`: this answer is the whole representation.
    fileprivate func beginRepresentation(from head: ResponseHead) throws(PinFetchError) {
        if self.offset > 0 {
            try self.startOver()  // the server sent the whole representation again
        } else if self.partial == nil {
            try self.resetPartial()
        }
        self.validator = head.validator
        self.validatorSource = self.currentURL
        self.totalLength = head.hasContentCoding ? nil : head.contentLength
        self.serverDigest = nil
        if self.pin == nil {
            // Nothing hashed yet: hash with what the server can check (SHA-256 unless it offers only SHA-512).
            let offered = head.representationDigests.merging(head.contentDigests) { first, _ in first }
            let algorithm: HashAlgorithm = offered[.sha256] == nil && offered[.sha512] != nil ? .sha512 : .sha256
            if algorithm != self.algorithm {
                self.algorithm = algorithm
                self.digest = RunningDigest(algorithm: algorithm)
            }
        }
        self.noteServerDigest(from: head, wholeContent: !head.hasContentCoding)
        self.resumable = !head.hasContentCoding && head.validator.ifRangeValue != nil
    }

    /// Called by the attempt for an accepted `206`.
    fileprivate func continueRepresentation(_ head: ResponseHead, totalLength: Int64?) throws(PinFetchError) {
        if self.partial == nil { self.partial = try PartialFile(path: self.partialPath) }
        if let totalLength { self.totalLength = totalLength }
        self.noteServerDigest(from: head, wholeContent: false)
        if self.crossMirror {
            // From now on the partial continues this mirror's representation; the pin decides.
            self.crossMirror = false
            self.validator = head.validator
            self.validatorSource = self.currentURL
            self.resumable = head.validator.ifRangeValue != nil && !head.hasContentCoding
        }
        self.spliced = true
    }

    /// Starts streaming a body at `offset`: hashing (and checkpoints, when the partial can be
    /// resumed) move to a ``HashingPipeline`` until ``HashingPipeline/finish()``.
    fileprivate func startBody() -> HashingPipeline {
        let checkpoint: HashingPipeline.Checkpoint? =
            self.resumable
            ? { @Sendable [self] offset, state throws(PinFetchError) in try self.writeCheckpoint(offset, state) } : nil
        return HashingPipeline(
            digest: self.digest,
            offset: self.offset,
            checkpointInterval: self.options.checkpointInterval,
            checkpointPeriod: self.options.checkpointPeriod,
            checkpoint: checkpoint
        )
    }

    /// Writes body bytes at `offset` and hands them to `pipeline` for hashing.
    fileprivate func append(_ bytes: UnsafeRawBufferPointer, to pipeline: HashingPipeline) throws(PinFetchError) {
        guard let partial = self.partial else { throw PinFetchError(.generic, "internal: body before head") }
        if let failure = pipeline.error { throw failure }
        try partial.write(bytes, at: self.offset)
        pipeline.submit(bytes)
        self.offset += Int64(bytes.count)
        self.downloadedBytes += Int64(bytes.count)
    }

    /// Keeps the server's digest for `algorithm`: `Repr-Digest` describes the whole representation
    /// in any answer; `Content-Digest` only when the content is the whole representation (a `200`
    /// without a content coding).
    private func noteServerDigest(from head: ResponseHead, wholeContent: Bool) {
        if let digest = head.representationDigests[self.algorithm] {
            self.serverDigest = ("Repr-Digest", digest)
        } else if wholeContent, let digest = head.contentDigests[self.algorithm] {
            self.serverDigest = ("Content-Digest", digest)
        }
    }

    /// Reports progress and answers whether to go on.
    fileprivate func progress() -> Bool {
        guard !self.control.isCancelled else { return false }
        if let report = self.options.progress {
            let now = Date()
            if now.timeIntervalSince(self.lastProgressTime) >= 0.2 {
                self.lastProgressTime = now
                report(
                    FetchProgress(
                        path: self.destination,
                        completedBytes: self.offset,
                        totalBytes: self.totalLength,
                        receivedBytes: self.downloadedBytes
                    )
                )
            }
        }
        return true
    }

    /// Takes a checkpoint at `offset` from the run's thread (no body streaming).
    private func saveCheckpoint() throws(PinFetchError) {
        guard self.resumable, self.offset > 0 else { return }
        try self.writeCheckpoint(self.offset, self.digest.serializedState())
    }

    /// Write order (DESIGN.md): data `fsync` → checkpoint to a temporary file → `fsync` → `rename`.
    /// `state` is the digest after exactly `offset` bytes; at least that many are written.
    private func writeCheckpoint(_ offset: Int64, _ state: [UInt8]) throws(PinFetchError) {
        guard let validator = self.validator, let partial = self.partial, offset > 0 else { return }
        try partial.synchronize()
        let checkpoint = Checkpoint(
            url: self.validatorSource ?? self.currentURL,
            validator: validator,
            totalLength: self.totalLength,
            offset: offset,
            algorithm: self.algorithm,
            hashState: state,
            hashStateSize: RunningDigest.stateSize(of: self.algorithm),
            libraryVersion: RunningDigest.libraryVersion,
            partialIdentity: try partial.identity()
        )
        try FileSystem.replaceAtomically(self.checkpointPath, with: checkpoint.encoded())
        self.lastCheckpointOffset = offset
    }

    /// Empties the partial (keeping the file open) and forgets its representation.
    private func resetPartial() throws(PinFetchError) {
        try FileSystem.remove(self.checkpointPath)  // first: a checkpoint never outlives its bytes
        if let partial = self.partial {
            try partial.truncate(to: 0)
        } else {
            self.partial = try PartialFile(path: self.partialPath)
            try self.partial!.truncate(to: 0)
        }
        self.digest.reset()
        self.offset = 0
        self.serverDigest = nil
        self.crossMirror = false
        self.validatorSource = nil
        self.validator = nil
        self.totalLength = nil
        self.resumable = false
        self.spliced = false
        self.resumedFrom = 0
        self.lastCheckpointOffset = 0
    }

    /// Starts the download over from byte 0 (counted in `restarts`).
    private func startOver() throws(PinFetchError) {
        self.restarts += 1
        try self.resetPartial()
    }

    /// Removes `.part` and its checkpoint.
    private func discardPartial() throws(PinFetchError) {
        try FileSystem.remove(self.checkpointPath)
        try FileSystem.remove(self.partialPath)
        self.partial = nil
        self.digest.reset()
        self.offset = 0
        self.spliced = false
        self.resumedFrom = 0
    }

    /// After a final failure: keep a resumable partial behind a durable checkpoint (cut back to
    /// the last durable one when the disk failed), and remove one that no later run could trust.
    private func keepForLaterRun(after error: PinFetchError) throws(PinFetchError) {
        guard self.resumable, self.offset > 0 else {
            if self.partial != nil || self.offset > 0 { try self.discardPartial() }
            return
        }
        if error.code == .fileIO {
            if self.lastCheckpointOffset > 0, let partial = self.partial {
                try? partial.truncate(to: self.lastCheckpointOffset)
                // The cut is ours: let the checkpoint describe the partial as it is now, or the
                // next run would take it for edited and hash it again.
                if var checkpoint = FileSystem.readSmallFile(self.checkpointPath, limit: Checkpoint.maximumSize)
                    .flatMap({ Checkpoint(decoding: $0) }),
                    checkpoint.offset == self.lastCheckpointOffset,
                    let identity = try? partial.identity()
                {
                    checkpoint.partialIdentity = identity
                    try? FileSystem.replaceAtomically(self.checkpointPath, with: checkpoint.encoded())
                }
            } else {
                try? self.discardPartial()
            }
            return
        }
        try self.saveCheckpoint()
    }

    private func stopForCancellation() throws(PinFetchError) -> Never {
        let error = PinFetchError(.cancelled, "\(self.currentURL): cancelled at byte \(self.offset)")
        try self.keepForLaterRun(after: error)
        throw error
    }

    /// `fsync` → `rename(.part, destination)` → `fsync` the directory → remove the checkpoint.
    private func commit() throws(PinFetchError) {
        if self.partial == nil { self.partial = try PartialFile(path: self.partialPath) }  // a zero-byte body
        try self.partial!.synchronize()
        try FileSystem.renameDurably(self.partialPath, to: self.destination)
        self.partial = nil
        try FileSystem.remove(self.checkpointPath)
    }
}

/// Reads one GET answer for a ``FetchRun``: decides from the head whether the body may be
/// written (DESIGN.md, "Answer to the ranged GET"), then streams it into the partial.
private final class AttemptDelegate: TransferDelegate {
    enum Plan {
        case none
        /// Write the body; the partial must reach `expectedEnd` bytes (when known).
        case write(expectedEnd: Int64?)
        case startOver(String)
        case finalize
        case fail(PinFetchError, retryable: Bool, retryAfter: Double?)
    }

    unowned let run: FetchRun
    let requestedOffset: Int64
    private(set) var plan = Plan.none
    /// A local failure (disk) that must end the run, not be retried.
    private(set) var localFailure: PinFetchError?
    /// Leading body bytes to drop: a `206` that started before the offset.
    private var skip: Int64 = 0
    /// Hashes the body while it streams.
    private var pipeline: HashingPipeline?
    private var expectedEnd: Int64?

    init(run: FetchRun, requestedOffset: Int64) {
        self.run = run
        self.requestedOffset = requestedOffset
    }

    override func receive(head: ResponseHead) -> Bool {
        self.plan = self.decide(head)
        guard case .write(let end) = self.plan else { return false }
        self.expectedEnd = end
        self.pipeline = self.run.startBody()
        return true
    }

    /// Waits for the body's bytes to be hashed and its checkpoints written; the first
    /// checkpoint failure, if any.
    func finishBody() -> PinFetchError? {
        defer { self.pipeline = nil }
        return self.pipeline?.finish()
    }

    private func decide(_ head: ResponseHead) -> Plan {
        let url = self.run.url
        switch head.status {
        case 200:
            do throws(PinFetchError) {
                try self.run.beginRepresentation(from: head)
            } catch {
                self.localFailure = error
                return .none
            }
            return .write(expectedEnd: head.hasContentCoding ? nil : head.contentLength)
        case 206:
            return self.decidePartialContent(head)
        case 416:
            guard self.requestedOffset > 0 else {
                return .fail(
                    PinFetchError(.protocolViolation, "\(url): 416 to a request without Range"),
                    retryable: false,
                    retryAfter: nil
                )
            }
            let total = head.contentRange?.completeLength
            if !self.run.isCrossMirror, self.run.validator.map({ $0.matches(head.validator) == false }) ?? false {
                return .startOver("416 for a changed representation")
            }
            guard total == self.requestedOffset, self.run.totalLength.map({ $0 == total }) ?? true else {
                return .startOver("416: the partial (\(self.requestedOffset) bytes) does not match the remote length")
            }
            return .finalize
        case 401, 407:
            return .fail(
                PinFetchError(
                    .authentication,
                    "\(url): HTTP \(head.status) (authentication required)",
                    underlying: head.status
                ),
                retryable: false,
                retryAfter: nil
            )
        case 408, 429, 500...599:
            return .fail(
                PinFetchError(.serverResponse, "\(url): HTTP \(head.status)", underlying: head.status),
                retryable: true,
                retryAfter: head.value("retry-after").flatMap { RetryAfter.seconds($0, date: head.value("date")) }
            )
        case 400...499:
            return .fail(
                PinFetchError(.serverResponse, "\(url): HTTP \(head.status)", underlying: head.status),
                retryable: false,
                retryAfter: nil
            )
        default:
            return .fail(
                PinFetchError(.protocolViolation, "\(url): unexpected HTTP \(head.status)", underlying: head.status),
                retryable: false,
                retryAfter: nil
            )
        }
    }

    /// A `206` is appended only when it is one range of the same representation, in the
    /// identity coding, that starts at or before the offset and reaches past it.
    private func decidePartialContent(_ head: ResponseHead) -> Plan {
        let offset = self.requestedOffset
        guard offset > 0 else {
            return .fail(
                PinFetchError(.protocolViolation, "\(self.run.url): 206 to a request without Range"),
                retryable: false,
                retryAfter: nil
            )
        }
        if head.isMultipartByteRanges { return .startOver("206 with a multipart/byteranges body") }
        if head.hasContentCoding { return .startOver("206 with a Content-Encoding") }
        guard let range = head.contentRange, let first = range.first, let last = range.last,
            range.completeLength != nil
        else {
            return .startOver("206 without a usable Content-Range (with a complete length)")
        }
        if let known = self.run.totalLength, let total = range.completeLength, known != total {
            return .startOver("206 for a representation of another length")
        }
        let answered = head.validator
        if !self.run.isCrossMirror, answered.entityTag != nil || answered.lastModified != nil,
            self.run.validator.map({ $0.matches(answered) == false }) ?? true
        {
            return .startOver("206 for another representation (validator changed)")
        }
        guard first <= offset, last >= offset else {
            return .startOver("206 range \(first)-\(last) does not continue at byte \(offset)")
        }
        if let length = head.contentLength, length != last - first + 1 {
            return .startOver("206 whose Content-Length disagrees with its Content-Range")
        }
        do throws(PinFetchError) {
            try self.run.continueRepresentation(head, totalLength: range.completeLength)
        } catch {
            self.localFailure = error
            return .none
        }
        self.skip = offset - first
        return .write(expectedEnd: last + 1)
    }

    override func receive(body: UnsafeRawBufferPointer) -> Bool {
        var bytes = body
        if self.skip > 0 {
            let dropped = Int(min(self.skip, Int64(bytes.count)))
            bytes = UnsafeRawBufferPointer(rebasing: bytes[dropped...])
            self.skip -= Int64(dropped)
            if bytes.isEmpty { return true }
        }
        if let end = self.expectedEnd, self.run.offset + Int64(bytes.count) > end {
            self.plan = .fail(
                PinFetchError(.protocolViolation, "\(self.run.url): more body bytes than announced"),
                retryable: true,
                retryAfter: nil
            )
            return false
        }
        do throws(PinFetchError) {
            guard let pipeline = self.pipeline else { throw PinFetchError(.generic, "internal: body before head") }
            try self.run.append(bytes, to: pipeline)
        } catch {
            self.localFailure = error
            return false
        }
        return true
    }

    override func progress(received: Int64) -> Bool { self.run.progress() }
}

/// The origin of a URL (RFC 6454): scheme, host and port, with the scheme's default port filled in.
struct Origin: Hashable {
    let scheme: String
    let host: String
    let port: Int

    init?(_ url: URL?) {
        guard let url, let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased() else { return nil }
        self.scheme = scheme
        self.host = host
        self.port = url.port ?? (scheme == "https" ? 443 : 80)
    }
}
