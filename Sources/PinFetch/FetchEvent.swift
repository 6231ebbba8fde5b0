/// Something that happened during a fetch, for a caller that shows or logs it
/// (``FetchOptions/events``). Paths are destinations; URLs have any password replaced by `***`.
public enum FetchEvent: Sendable {
    /// Bytes arrived (at most five times a second per file).
    case progress(FetchProgress)
    /// The download of `path` starts over from byte 0 because of `reason` (an answer for another
    /// representation, a range the server would not honour, a mismatch after a resume).
    case restarted(path: String, reason: String)
    /// An attempt failed; another follows (``FetchRetry``).
    case retrying(FetchRetry)
    /// Something is wrong that does not fail the download of `path`: a cache that is not to be
    /// trusted (another user could write it), a corrupt cache entry. `message` is one line.
    case warning(path: String, message: String)
    /// A request for `path` goes out (each hop of a redirect too): `method` (`GET`, `HEAD`),
    /// `url` and the header lines pinfetch sets, credentials shown as `***` (`-v`).
    case request(path: String, method: String, url: String, headers: [String])
    /// An answer for `path` came: its status and the header lines that drive decisions
    /// (validators, lengths, ranges, codings, redirects, waits, digests), as `Name: value` (`-v`).
    case response(path: String, status: Int, headers: [String])
    /// What pinfetch decided for `path`, in words: "resuming at byte 400000 with If-Range
    /// \"v1\"", "partial not resumed: the remote representation changed" (`-v`).
    case decision(path: String, message: String)
}

/// A failed attempt and the one that follows it (``FetchEvent/retrying(_:)``).
public struct FetchRetry: Sendable {
    /// The destination of the download.
    public var path: String
    /// Why the attempt failed (one line, naming the URL).
    public var reason: String
    /// Where the next attempt goes, password and signing parameters as `***`.
    public var url: String
    /// Seconds until the next attempt (0 for a mirror not tried yet).
    public var delaySeconds: Double
    /// Which retry this is, from 1, or `nil` when the next attempt goes to a mirror not tried yet
    /// (that is not a retry).
    public var retry: Int?
    /// Retries allowed in all (``FetchOptions/retries``).
    public var retries: Int
    /// The mirror of the next attempt, from 1, and how many there are.
    public var mirror: Int
    public var mirrors: Int
}

/// Where a download stands, for progress display.
public struct FetchProgress: Sendable {
    /// What a download is doing while it reports.
    public enum Phase: Sendable, Equatable {
        /// Another process holds the destination's lock (`<dest>.part.lock`): this one waits
        /// for it, up to ``FetchOptions/lockTimeout`` seconds.
        case waitingForLock
        /// Connecting to the server or the proxy (name lookup, TCP, TLS, a proxy's tunnel).
        case connecting
        /// The request went out on a connection, and its answer's head has not come.
        case waitingForAnswer
        /// The answer's body is arriving.
        case receiving
        /// An attempt failed and the next waits its delay (``FetchOptions/retryDelay``'s
        /// back-off, or the server's `Retry-After`, RFC 9110 §10.2.3): reported about once a
        /// second while it waits, after the ``FetchEvent/retrying(_:)`` that names the delay.
        case waitingToRetry
    }

    /// The destination of the download.
    public var path: String
    /// Bytes of the representation on disk (including a resumed partial).
    public var completedBytes: Int64
    /// The representation's length in bytes, when known.
    public var totalBytes: Int64?
    /// Body bytes received in this run.
    public var receivedBytes: Int64
    /// What the download is doing.
    public var phase: Phase

    public init(
        path: String,
        completedBytes: Int64,
        totalBytes: Int64?,
        receivedBytes: Int64,
        phase: Phase = .receiving
    ) {
        self.path = path
        self.completedBytes = completedBytes
        self.totalBytes = totalBytes
        self.receivedBytes = receivedBytes
        self.phase = phase
    }
}
