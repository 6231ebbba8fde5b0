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
    /// Most body bytes hashed between two durable checkpoints (`fsync` of the partial and of
    /// its state; DESIGN.md, "The rolling hash checkpoint").
    public var durableCheckpointInterval: Int64 = 64 << 20
    /// Most seconds between two durable checkpoints while the partial grows.
    public var durableCheckpointPeriod: Double = 10
    /// Most body bytes hashed between two light checkpoints (state recorded, no `fsync`): what a
    /// killed process loses at most, plus the bytes still being hashed.
    public var lightCheckpointInterval: Int64 = 2 << 20
    /// Most seconds between two light checkpoints while the partial grows, stalls included.
    public var lightCheckpointPeriod: Double = 0.5
    /// The largest file to accept, in bytes, or `nil` for any (`--max-filesize`, as curl's): an
    /// answer announcing more fails before its body, and a body that runs past it stops there;
    /// both are ``PinFetchError/Code/protocolViolation`` (exit 7), and the partial is removed.
    public var maximumFileSize: Int64? = nil
    /// The directory of a content-addressed cache of verified files, or `nil` (the default)
    /// for none. A pinned download whose digest has an entry there makes no request: the entry
    /// is copied (a reflink where the file system can; never a hard link), hashed again, and
    /// renamed onto the destination. After a verified pinned download, a copy is stored
    /// (mode 0444) under `<cacheDirectory>/<algorithm>/<hex>`. A cache directory not owned by
    /// the user or writable by others, and an entry that is not a regular file owned by the
    /// user, are ignored with a ``FetchEvent/warning(path:message:)``.
    public var cacheDirectory: String? = nil
    /// Called from the transfer thread as bytes arrive (five times a second at most).
    public var progress: (@Sendable (FetchProgress) -> Void)? = nil
    /// Called from the transfer thread for each ``FetchEvent``: progress (as ``progress``), a
    /// restart from byte 0 and why, a retry or a move to another mirror and why.
    public var events: (@Sendable (FetchEvent) -> Void)? = nil

    public init() {}
}
