/// How a fetch behaves; the defaults are the command line's (DESIGN.md, "Command line").
public struct FetchOptions: Sendable {
    /// Attempts after the first on a retryable failure; 0 fails fast.
    public var retries: Int = 5
    /// Base of the exponential back-off between attempts, in seconds; 0 retries at once.
    public var retryDelay: Double = 1
    /// Longest wait between two attempts, in seconds, whatever the back-off or `Retry-After` says.
    public var maximumRetryDelay: Double = 60
    /// Seconds allowed for connecting (TCP and TLS), or `nil` for libcurl's default.
    public var connectTimeout: Double? = 30
    /// Seconds without a body byte before an attempt is abandoned and retried, or `nil` for never.
    public var stallTimeout: Double? = 60
    /// Extra request header lines, `Name: value`.
    public var headers: [String] = []
    /// A PEM file of certificates to trust for HTTPS in addition to the system's, or `nil`.
    public var caFile: String? = nil
    /// Redirects followed at most per request.
    public var maximumRedirects = 10
    /// Follow a redirect from `https` to `http` (refused by default: exit 7).
    public var allowInsecureRedirect = false
    /// Seconds to wait for another process's lock on the destination, or `nil` to wait forever.
    public var lockTimeout: Double? = nil
    /// Body bytes between two checkpoints.
    public var checkpointInterval: Int64 = 32 << 20
    /// Seconds between two checkpoints while bytes arrive.
    public var checkpointPeriod: Double = 2
    /// A content-addressed cache of verified files (``DigestCache``), or `nil` for none.
    public var cacheDirectory: String? = nil
    /// Called from the transfer thread as bytes arrive (a few times a second at most).
    public var progress: (@Sendable (FetchProgress) -> Void)? = nil

    public init() {}
}

/// Where a download stands, for progress display.
public struct FetchProgress: Sendable {
    /// The destination of the download.
    public var path: String
    /// Bytes of the representation on disk (including a resumed partial).
    public var completedBytes: Int64
    /// The representation's length in bytes, when known.
    public var totalBytes: Int64?
    /// Body bytes received in this run.
    public var receivedBytes: Int64

    public init(path: String, completedBytes: Int64, totalBytes: Int64?, receivedBytes: Int64) {
        self.path = path
        self.completedBytes = completedBytes
        self.totalBytes = totalBytes
        self.receivedBytes = receivedBytes
    }
}

/// The outcome of one fetch: what `--json` prints (DESIGN.md, "`--json` result").
public struct FetchResult: Sendable {
    /// How the file came to be at the destination.
    public enum Status: String, Sendable {
        case downloaded, resumed
        case alreadyComplete = "already-complete"
        case failed
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
    /// `true` when the file was taken from the cache, without a request.
    public var fromCache = false
    /// Wall time of the fetch in seconds.
    public var elapsedSeconds: Double
    /// The failure, when ``status`` is ``Status/failed``.
    public var error: PinFetchError?
}

extension FetchResult {
    /// A result with nothing done yet: `failed` with `error`, all counters 0.
    static func failed(url: String, path: String, algorithm: HashAlgorithm, error: PinFetchError?) -> FetchResult {
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
