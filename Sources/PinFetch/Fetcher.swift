import FoundationEssentials
@preconcurrency import Glibc
import Synchronization

/// Downloads URLs to files, resuming partials and verifying pins (<doc:Architecture>).
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
    ///   <doc:CommandLine#Exit-status> lists them.
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

    /// Fetches many files, at most `parallelism` at once (<doc:Architecture#Many-files>).
    ///
    /// At most `parallelism` files transfer at once; a file gives up its place when its commit
    /// (`fsync`, rename, the directory's `fsync`) begins, so as many again may be committing.
    /// Each worker runs on its own thread with one libcurl handle; their transfers share one event loop and its connections (``FetchOptions/maximumConnectionsPerHost``
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
        let transfers = max(1, min(parallelism, 64))
        let batch = Batch(
            jobs: jobs,
            options: self.options,
            control: control,
            failFast: failFast,
            transfers: transfers,
            onResult: onResult
        )
        // As many workers again as transfers: those commit files while the others transfer.
        let workers = max(1, min(2 * transfers, jobs.count))
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
    public var mirrors: [String] { didSet { self.urls = Self.parse(self.mirrors) } }
    /// ``mirrors`` parsed, once, whenever they are set: the first that is not an absolute
    /// `http`/`https` URL is the failure (``PinFetchError/Code/usage``).
    package private(set) var urls: Result<[HTTPURL], PinFetchError>
    /// The file path to create or replace.
    public var destination: String
    /// The expected digest, or `nil` to compute and report one.
    public var pin: Pin?
    /// When set, the file is named by the server's `Content-Disposition` (RFC 6266), reduced to
    /// a safe base name inside this directory; `destination` is used when it names none.
    public var namingDirectory: String?
    /// Hash-addressed mirrors asked before ``mirrors`` when the file is pinned; not
    /// the file's identity (a result's `url` stays the first of ``mirrors``).
    public var hashedMirrors: [HashedMirror] = []

    /// A job for `mirrors`. A registry blob (`oci://…@sha256:HEX`) among them is pinned by its
    /// digest when `pin` is `nil`; a SHA-256 `pin` or another blob's digest that disagrees makes
    /// the job fail as bad input (exit 2) when it runs.
    public init(mirrors: [String], destination: String, pin: Pin? = nil, namingDirectory: String? = nil) {
        self.mirrors = mirrors
        self.urls = Self.parse(mirrors)
        self.destination = destination
        self.pin = pin
        self.namingDirectory = namingDirectory
        self.pinRegistryBlobs()
    }

    /// A job of URLs parsed already (at the command line's boundary): not parsed again.
    package init(urls: [HTTPURL], destination: String, pin: Pin? = nil, namingDirectory: String? = nil) {
        self.mirrors = urls.map(\.given)
        self.urls = .success(urls)
        self.destination = destination
        self.pin = pin
        self.namingDirectory = namingDirectory
        self.pinRegistryBlobs()
    }

    /// The digest of a registry blob is the job's pin (``init(mirrors:destination:pin:namingDirectory:)``).
    private mutating func pinRegistryBlobs() {
        guard case .success(let urls) = self.urls else { return }
        for blob in urls.compactMap(\.oci) {
            guard let digest = blob.pin else { continue }
            guard let pin = self.pin else {
                self.pin = digest
                continue
            }
            if pin.algorithm == .sha256, pin != digest {
                self.urls = .failure(
                    PinFetchError(.usage, "\(blob.text) is addressed by its digest, and the pin given is another")
                )
                return
            }
        }
    }
}

extension FetchJob {
    /// The first mirror as a result names it: encoded, a password as `***` (the text as given when
    /// it does not parse).
    var shownURL: String {
        guard let first = self.mirrors.first else { return "" }
        return (try? self.urls.get().first)?.redacted ?? first
    }

    private static func parse(_ mirrors: [String]) -> Result<[HTTPURL], PinFetchError> {
        Result { () throws(PinFetchError) in try mirrors.map { (text) throws(PinFetchError) in try HTTPURL(text) } }
    }
}

/// Cancellation shared between the caller and the transfer thread; libcurl sees it in its
/// progress callback and stops with `CURLE_ABORTED_BY_CALLBACK`. Also `--fail-fast`'s stop: once
/// a file of the batch failed, a file that has not made a request yet makes none.
final class TransferControl: Sendable {
    private let cancelled = Atomic<Bool>(false)
    private let failFastCause = Mutex<PinFetchError.Code?>(nil)
    /// Signalled on ``cancel()``: what ``wait(seconds:)`` waits for.
    private let cancellation = Condition()
    /// Set once the remote cache was down, slow or silent: the rest of the run does not ask it
    /// (a dead cache would otherwise cost its timeout for every file).
    let remoteCacheOff = Atomic<Bool>(false)
    func cancel() {
        self.cancellation.lock()
        self.cancelled.store(true, ordering: .relaxed)
        self.cancellation.broadcast()
        self.cancellation.unlock()
    }

    var isCancelled: Bool { self.cancelled.load(ordering: .relaxed) }

    /// Waits `seconds` (a back-off, a server's `Retry-After`), or less if the run is cancelled.
    func wait(seconds: Double) {
        let deadline = ContinuousClock.now + .milliseconds(Int64(max(0, seconds) * 1000))
        self.cancellation.lock()
        defer { self.cancellation.unlock() }
        while !self.isCancelled {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return }
            self.cancellation.wait(
                seconds: Double(left.components.seconds) + Double(left.components.attoseconds) / 1e18
            )
        }
    }

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
