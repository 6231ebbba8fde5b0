/// Something that happened during a fetch, for a caller that shows or logs it
/// (``FetchOptions/events``). Paths are destinations; URLs have any password replaced by `***`.
public enum FetchEvent: Sendable {
    /// Bytes arrived (at most five times a second per file).
    case progress(FetchProgress)
    /// The download of `path` starts over from byte 0 because of `reason` (an answer for another
    /// representation, a range the server would not honour, a mismatch after a resume).
    case restarted(path: String, reason: String)
    /// An attempt for `path` failed with `reason`; the next goes to `url` after `delaySeconds`
    /// seconds (0 when `url` is a mirror not tried yet).
    case retrying(path: String, url: String, reason: String, delaySeconds: Double)
    /// Something is wrong that does not fail the download of `path`: a cache that is not to be
    /// trusted (another user could write it), a corrupt cache entry. `message` is one line.
    case warning(path: String, message: String)
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
