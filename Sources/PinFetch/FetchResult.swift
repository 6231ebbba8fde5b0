/// The outcome of one fetch: what `--json` prints (<doc:CommandLine#JSON-result>).
public struct FetchResult: Sendable {
    /// How the file came to be at the destination.
    public enum Status: String, Sendable {
        case downloaded, resumed
        case alreadyComplete = "already-complete"
        case failed
        /// Never started: after a failure with fail-fast, after a cancellation, or because an
        /// input it depends on (a checksum file) failed. ``FetchResult/error`` says which, with
        /// the code of that cause.
        case skipped
    }

    /// The URL as given.
    public var url: String
    /// The destination path as given.
    public var path: String
    public var status: Status
    /// Final size in bytes (the bytes on disk when failed).
    public var bytes: Int64
    /// The algorithm of ``digest``.
    public var algorithm: HashAlgorithm
    /// Lower-case hex of the final file's digest, or `nil` when the fetch failed before it.
    public var digest: String?
    /// Bytes of an earlier partial kept in the final file (0 when the run started over).
    public var resumedFrom: Int64
    /// Body bytes received in this run.
    public var downloadedBytes: Int64
    /// Bytes read back from disk to rebuild a hash state.
    public var rehashedBytes: Int64
    /// Times the download started over from byte 0.
    public var restarts: Int
    /// GET attempts made.
    public var attempts: Int
    /// `true` when the file was taken from a cache: the local one (no request) or the remote one.
    public var fromCache = false
    /// Which cache the file came from (`--json` `cache`), `nil` for none.
    public var cache: CacheKind?

    /// A cache a file can come from.
    public enum CacheKind: String, Sendable, Hashable {
        /// `--cache-dir`: a copy on this machine.
        case local
        /// `--remote-cache`: a blob of a shared content-addressed store.
        case remote
    }
    /// Wall time of the fetch in seconds.
    public var elapsedSeconds: Double
    /// The failure, when ``status`` is ``Status/failed``; for ``Status/skipped``, why the file
    /// was not started, with the code of the failure (or cancellation) that stopped it.
    public var error: PinFetchError?
    /// After a failure, the partial kept for a later run (with its checkpoint beside it), or `nil`
    /// when nothing is left. Whoever keeps partials owns their cleanup: `pinfetch gc` removes
    /// abandoned ones.
    public var partial: KeptPartial? = nil
    /// The mirror whose bytes were committed, or the last one tried (password and signing
    /// parameters as `***`); `nil` when no request was made (already complete, from the cache).
    public var source: String? = nil
    /// Each mirror tried, in the order first tried, with how it ended.
    public var mirrors: [MirrorOutcome] = []

    /// How one mirror ended for this file.
    public struct MirrorOutcome: Sendable, Hashable {
        /// The mirror, password and signing parameters as `***`.
        public var url: String
        /// `ok` (its bytes were committed, or its `304` kept a recorded file), `mismatch` (it sent other bytes than the pin), or
        /// the kind of its last failure (``PinFetchError/Code/description``: `network`,
        /// `serverResponse`, …).
        public var outcome: String
    }

    /// A partial left on disk for a later run to resume.
    public struct KeptPartial: Sendable, Hashable {
        /// The `<dest>.part` path.
        public var path: String
        /// Its size in bytes.
        public var bytes: Int64

        /// The partial of `destination`, when there is one with its checkpoint.
        static func found(for destination: String) -> KeptPartial? {
            let sidecars = Sidecars(destination: destination)
            guard FileSystem.exists(sidecars.checkpoint), let size = FileSystem.size(of: sidecars.partial) else {
                return nil
            }
            return KeptPartial(path: sidecars.partial, bytes: size)
        }
    }
}

extension FetchResult {
    /// The result of a file that was never started because of `cause`: ``Status/skipped``, all
    /// counters 0, and an error of `cause`'s code whose message is `"<path>: not started: <reason>"`.
    public static func skipped(_ job: FetchJob, cause: PinFetchError.Code, reason: String) -> FetchResult {
        var result = FetchResult.failed(
            url: job.shownURL,
            path: job.destination,
            algorithm: job.pin?.algorithm ?? .sha256,
            error: PinFetchError(cause, "\(job.destination): not started: \(reason)")
        )
        result.status = .skipped
        return result
    }

    /// A result with nothing done yet: `failed` with `error`, all counters 0.
    package static func failed(
        url: String,
        path: String,
        algorithm: HashAlgorithm,
        error: PinFetchError?
    ) -> FetchResult {
        FetchResult(
            url: url,
            path: path,
            status: .failed,
            bytes: 0,
            algorithm: algorithm,
            digest: nil,
            resumedFrom: 0,
            downloadedBytes: 0,
            rehashedBytes: 0,
            restarts: 0,
            attempts: 0,
            fromCache: false,
            elapsedSeconds: 0,
            error: error
        )
    }
}
