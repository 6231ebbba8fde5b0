import FoundationEssentials
@preconcurrency import Glibc
import Synchronization

/// Downloads URLs to files, resuming partials and verifying pins (DESIGN.md).
///
/// ```swift
/// let result = try await Fetcher().fetch(url, to: "app.tar.gz", verifying: try Pin(sha256Hex: hex))
/// ```
public struct Fetcher: Sendable {
    /// Retries, timeouts, headers and progress for every fetch of this fetcher.
    public var options: FetchOptions

    public init(options: FetchOptions = FetchOptions()) {
        self.options = options
    }

    /// Downloads `url` to `destination`, resuming a partial, and verifies it against `pin`.
    ///
    /// The hash context is saved every few MiB in `<destination>.part.state`, so a rerun sends
    /// `Range: bytes=<offset>-` with `If-Range` (strong validators only, RFC 9110 §13.1.5) and
    /// rereads nothing. The file appears at `destination` only once its digest matches.
    /// Runs on its own thread: the cooperative pool is never blocked. Task cancellation stops
    /// the transfer and keeps a checkpoint.
    ///
    /// - Parameters:
    ///   - url: An absolute `http` or `https` URL.
    ///   - destination: The file path to create or replace.
    ///   - pin: The expected digest, or `nil` to compute (SHA-256) and report one.
    /// - Returns: The size in bytes, the digest, `resumedFrom` (a byte offset) and counters.
    /// - Throws: ``PinFetchError``: ``PinFetchError/Code/usage`` for a malformed URL,
    ///   ``PinFetchError/Code/digestMismatch`` when the bytes do not match `pin`,
    ///   ``PinFetchError/Code/network`` when the retries are used up, and the other codes as
    ///   DESIGN.md's exit statuses list them.
    public func fetch(
        _ url: String,
        to destination: String,
        verifying pin: Pin? = nil
    ) async throws(PinFetchError) -> FetchResult {
        let result = await self.run(url, to: destination, verifying: pin)
        if let error = result.error { throw error }
        return result
    }

    /// Like ``fetch(_:to:verifying:)`` but never throws: a failure is in ``FetchResult/error``
    /// with ``FetchResult/status`` `failed`, and the counters say how far it got (for `--json`).
    public func run(_ url: String, to destination: String, verifying pin: Pin? = nil) async -> FetchResult {
        await self.run([FetchJob(mirrors: [url], destination: destination, pin: pin)]).first!
    }

    /// Fetches many files, at most `parallelism` at once (DESIGN.md, "Many files").
    ///
    /// Each of the `parallelism` workers runs on its own thread with one libcurl handle; their
    /// transfers share one event loop and its connections (``FetchOptions/maximumConnectionsPerHost``
    /// per host; with HTTP/2 one connection per origin carries them all). One failing file does not stop the
    /// others unless `failFast`: then files not yet started are reported ``FetchResult/Status/skipped``
    /// without a request, as are files not yet started when the task is cancelled.
    ///
    /// - Parameters:
    ///   - jobs: The files; each gets exactly one result, in the same order.
    ///   - parallelism: Downloads at once (1...64).
    ///   - failFast: Start no new file after the first failure.
    ///   - onResult: Called from a worker thread as each file ends, with its index in `jobs`.
    /// - Returns: One result per job, in the order of `jobs`.
    public func run(
        _ jobs: [FetchJob],
        parallelism: Int = 1,
        failFast: Bool = false,
        onResult: (@Sendable (Int, FetchResult) -> Void)? = nil
    ) async -> [FetchResult] {
        let control = TransferControl()
        let batch = Batch(jobs: jobs, options: self.options, control: control, failFast: failFast, onResult: onResult)
        let workers = max(1, min(parallelism, 64, jobs.count))
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<[FetchResult], Never>) in
                batch.start(workers: workers) { results in continuation.resume(returning: results) }
            }
        } onCancel: {
            control.cancel()
            batch.cancelTransfers()
        }
    }
}

/// One file of a batch: its mirrors, where it goes, and its pin.
public struct FetchJob: Sendable, Hashable {
    /// URLs of the same file, in order of preference (at least one).
    public var mirrors: [String]
    /// The file path to create or replace.
    public var destination: String
    /// The expected digest, or `nil` to compute and report one.
    public var pin: Pin?
    /// When set, the file is named by the server's `Content-Disposition` (RFC 6266), reduced to
    /// a safe base name inside this directory; `destination` is used when it names none.
    public var namingDirectory: String?
    /// Hash-addressed mirrors asked before ``mirrors`` when the file is pinned (issue 16); not
    /// the file's identity (a result's `url` stays the first of ``mirrors``).
    public var hashedMirrors: [HashedMirror] = []

    public init(mirrors: [String], destination: String, pin: Pin? = nil, namingDirectory: String? = nil) {
        self.mirrors = mirrors
        self.destination = destination
        self.pin = pin
        self.namingDirectory = namingDirectory
    }
}

extension FetchJob {
    /// The first mirror as a result names it: encoded, a password as `***` (the text as given when
    /// it does not parse).
    var shownURL: String {
        guard let first = self.mirrors.first else { return "" }
        return (try? HTTPURL(first))?.redacted ?? first
    }
}

/// The shared state of one ``Fetcher/run(_:parallelism:failFast:onResult:)`` call: a queue of
/// job indices that worker threads take from, and the results they leave.
private final class Batch: Sendable {
    private struct State {
        var next = 0
        var results: [FetchResult?]
        var running: Int
        /// The code of the first failure, once there was one.
        var firstFailure: PinFetchError.Code?
        var done: (@Sendable ([FetchResult]) -> Void)?
    }

    let jobs: [FetchJob]
    let options: FetchOptions
    let control: TransferControl
    let failFast: Bool
    let onResult: (@Sendable (Int, FetchResult) -> Void)?
    private let state: Mutex<State>
    /// Trust anchors (`--cacert` read once) and the rest of the transport, for every file of the batch.
    private let transport: Result<TransportSettings, PinFetchError>
    /// The batch's destinations, so a server-chosen name never lands on another file of it.
    private let claims: DestinationClaims
    /// The event loop every transfer of the batch runs on, started by ``start(workers:done:)``.
    private let engine: Result<TransferEngine, PinFetchError>

    init(
        jobs: [FetchJob],
        options: FetchOptions,
        control: TransferControl,
        failFast: Bool,
        onResult: (@Sendable (Int, FetchResult) -> Void)?
    ) {
        self.jobs = jobs
        self.options = options
        self.control = control
        self.failFast = failFast
        self.onResult = onResult
        self.transport = Result { () throws(PinFetchError) in try TransportSettings(options) }
        self.state = Mutex(State(results: Array(repeating: nil, count: jobs.count), running: 0))
        self.claims = DestinationClaims(jobs.filter { $0.namingDirectory == nil }.map(\.destination))
        self.engine =
            jobs.isEmpty
            ? .failure(PinFetchError(.generic, "internal: no transfer engine for an empty batch"))
            : Result { () throws(PinFetchError) in
                try TransferEngine(
                    maximumConnectionsPerHost: options.maximumConnectionsPerHost,
                    defersRelease: failFast
                )
            }
    }

    func start(workers: Int, done: @escaping @Sendable ([FetchResult]) -> Void) {
        guard !self.jobs.isEmpty else { return done([]) }
        self.state.withLock {
            $0.done = done
            $0.running = workers
        }
        for _ in 0..<workers {
            Threads.detach(name: "pinfetch.fetch") { [self] in self.work() }
        }
    }

    private func work() {
        var easy: EasyHandle?
        while let (index, skip) = self.take() {
            let job = self.jobs[index]
            var result: FetchResult
            let stop: (PinFetchError.Code, String)? =
                self.control.isCancelled
                ? (.cancelled, "the run was interrupted") : skip.map { ($0, "an earlier file failed (fail-fast)") }
            if let (cause, reason) = stop {
                result = .skipped(job, cause: cause, reason: reason)
                // A file not taken still names the partial an earlier run left for it.
                if job.namingDirectory == nil { result.partial = .found(for: job.destination) }
            } else {
                let sibling = self.sibling(of: index)
                if sibling.waited, let stop = self.control.notStarting {
                    result = .skipped(job, cause: stop.cause, reason: stop.reason)
                    if job.namingDirectory == nil { result.partial = .found(for: job.destination) }
                } else {
                    result = self.fetch(job, easy: &easy, sibling: sibling.path)
                }
            }
            self.finish(index, result)
            easy?.acknowledge()  // after a failure's stop (fail-fast): its connection goes to no new file
        }
        easy = nil  // freed before the engine stops
        let results: [FetchResult]? = self.state.withLock { state in
            state.running -= 1
            guard state.running == 0 else { return nil }
            return state.results.map { $0! }
        }
        guard let results else { return }
        try? self.engine.get().stop()
        self.state.withLock { $0.done }?(results)
    }

    /// For a pinned entry, the earliest entry before it with the same pin (and another
    /// destination): waits until that one ended, and gives its file when it was verified, so this
    /// entry is a copy of it rather than a second download of the same bytes. `waited` says
    /// whether there was one to wait for (a stop may have come meanwhile).
    private func sibling(of index: Int) -> (path: String?, waited: Bool) {
        let job = self.jobs[index]
        guard let pin = job.pin,
            let first = self.jobs[..<index].firstIndex(where: { $0.pin == pin && $0.destination != job.destination })
        else { return (nil, false) }
        while true {
            let ended = self.state.withLock { $0.results[first] }
            if let ended {
                let verified = ended.error == nil && ended.status != .skipped && ended.status != .failed
                return (verified && ended.path != job.destination ? ended.path : nil, true)
            }
            if self.control.isCancelled || self.control.notStarting != nil { return (nil, true) }
            usleep(20_000)
        }
    }

    private func fetch(_ job: FetchJob, easy: inout EasyHandle?, sibling: String?) -> FetchResult {
        do throws(PinFetchError) {
            if easy == nil { easy = try EasyHandle(engine: try self.engine.get()) }
            let handle = easy!
            let download = try Download(
                job,
                options: self.options,
                control: self.control,
                easy: handle,
                transport: try self.transport.get(),
                claims: self.claims
            )
            download.sibling = sibling
            return download.execute()
        } catch {
            return .failed(
                url: job.shownURL,
                path: job.destination,
                algorithm: job.pin?.algorithm ?? .sha256,
                error: error
            )
        }
    }

    /// Ends every transfer of the batch at once, and those its workers start later.
    func cancelTransfers() {
        try? self.engine.get().cancelAll()
    }

    /// The next job index, and the code of the failure to skip it for (fail-fast) or `nil`;
    /// `nil` when none is left.
    private func take() -> (Int, PinFetchError.Code?)? {
        self.state.withLock { state in
            guard state.next < self.jobs.count else { return nil }
            defer { state.next += 1 }
            return (state.next, self.failFast ? state.firstFailure : nil)
        }
    }

    private func finish(_ index: Int, _ result: FetchResult) {
        let firstFailure: PinFetchError.Code? = self.state.withLock { state in
            state.results[index] = result
            guard let error = result.error, state.firstFailure == nil else { return nil }
            state.firstFailure = error.code
            return error.code
        }
        if self.failFast, let firstFailure, result.status != .skipped {
            // Files waiting for a connection to their host have not started either.
            self.control.stopStarting(after: firstFailure)
            try? self.engine.get().dropUnstarted()
        }
        self.onResult?(index, result)
    }
}

/// Cancellation shared between the caller and the transfer thread; libcurl sees it in its
/// progress callback and stops with `CURLE_ABORTED_BY_CALLBACK`. Also `--fail-fast`'s stop: once
/// a file of the batch failed, a file that has not made a request yet makes none.
final class TransferControl: Sendable {
    private let cancelled = Atomic<Bool>(false)
    private let failFastCause = Mutex<PinFetchError.Code?>(nil)
    /// Set once the remote cache was down, slow or silent: the rest of the run does not ask it
    /// (a dead cache would otherwise cost its timeout for every file).
    let remoteCacheOff = Atomic<Bool>(false)
    func cancel() { self.cancelled.store(true, ordering: .relaxed) }
    var isCancelled: Bool { self.cancelled.load(ordering: .relaxed) }

    /// Files not started yet start no request from now on (`--fail-fast`, after a failure of `cause`).
    func stopStarting(after cause: PinFetchError.Code) {
        self.failFastCause.withLock { $0 = $0 ?? cause }
    }

    /// Why a file that made no request yet must not make one, or `nil` while it may: the run was
    /// interrupted, or (`--fail-fast`) an earlier file failed.
    var notStarting: (cause: PinFetchError.Code, reason: String)? {
        if self.isCancelled { return (.cancelled, "the run was interrupted") }
        return self.failFastCause.withLock { $0 }.map { ($0, "an earlier file failed (fail-fast)") }
    }
}

/// Validates an absolute `http`/`https` URL with a host, so bad input is refused before anything
/// is created (DESIGN.md: exit 2 creates nothing). The rules are `HTTPURL`'s, so the two always
/// agree on which URLs are valid.
/// - Throws: ``PinFetchError/Code/usage`` naming what is wrong: a control character, white space at
///   either end, a scheme other than `http`/`https`, no host or a bad one, or a port outside 1...65535.
@_spi(CLI) public func validateURL(_ text: String) throws(PinFetchError) {
    _ = try HTTPURL(text)
}
