/// How a fetch behaves; the defaults are the command line's (<doc:CommandLine>).
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
    /// A Bazel-compatible remote cache (`--remote-cache`): a pinned SHA-256 file is
    /// asked for at `<remoteCache>/cas/<hex>` first; `nil` for none.
    public var remoteCache: String?
    /// Whether a file verified after a download from a mirror is stored in the remote cache
    /// (`PUT <remoteCache>/cas/<hex>`, `--remote-cache-upload`); off by default, as a read-only
    /// cache is the safe default.
    public var remoteCacheUpload = false
    /// Header lines for the remote cache only (`--remote-cache-header`); ``headers`` never go there.
    public var remoteCacheHeaders: [String] = []
    /// Seconds the remote cache may take to connect, or stay silent mid-body, before the file is
    /// fetched from its mirrors instead (`--remote-cache-timeout`, 5 by default).
    public var remoteCacheTimeout: Double = 5
    /// A PEM file of certificates to trust for HTTPS in addition to ``caBundleFile`` (or the
    /// system's), or `nil`.
    public var caFile: String? = nil
    /// A PEM bundle trusted instead of the system's (the command line takes it from
    /// `CURL_CA_BUNDLE` or `SSL_CERT_FILE`, as curl does), or `nil` for the system's.
    public var caBundleFile: String? = nil
    /// A directory of certificates named by subject hash (`c_rehash`, OpenSSL's `CApath`) also
    /// trusted (the command line takes it from `SSL_CERT_DIR`), or `nil`.
    public var caDirectory: String? = nil
    /// A PEM client certificate (it may hold the key too) for servers that ask for one (mutual
    /// TLS), or `nil`.
    public var clientCertificateFile: String? = nil
    /// The PEM private key of ``clientCertificateFile`` when it is in a file of its own, or `nil`.
    public var clientKeyFile: String? = nil
    /// `user:password` sent as Basic credentials (RFC 7617) to each mirror's origin, never after
    /// a redirect leaves it; a header `Authorization` given in ``headers`` wins. `nil` for none.
    public var credentials: String? = nil
    /// Programs that give a request's header fields (``CredentialHelper``, Bazel's protocol),
    /// chosen by the host each request goes to; their fields go to that request only, and
    /// never to another origin a redirect leads to (that origin's own helper is asked).
    public var credentialHelpers: [CredentialHelper] = []
    /// Seconds a credential helper may run before it is killed (exit 6).
    public var credentialHelperTimeout: Double = 10
    /// The helpers' answers, kept until they expire; shared by the copies of these options.
    package let credentialHelperAnswers = CredentialHelperAnswers()
    /// The tokens of OCI registries, kept until they expire; shared by the copies of these options.
    package let registryAuthorization = RegistryAuthorization()
    /// A netrc file: the `login` and `password` of the `machine` entry (or `default`) for the host
    /// each request goes to, matched by libcurl; only while a request stays on its mirror's origin.
    /// `nil` for none. Read once when the fetch starts (as are ``caBundleFile``,
    /// ``clientCertificateFile`` and ``clientKeyFile``): a file edited or replaced while it runs,
    /// by a FIFO say, changes nothing.
    public var netrcFile: String? = nil
    /// The proxy every request goes through (`http://`, `https://`, `socks5h://`…, credentials
    /// allowed), or `nil` to follow `http_proxy`, `https_proxy` and `all_proxy` as libcurl does.
    public var proxy: String? = nil
    /// Hosts reached without the proxy: a comma-separated list of host names, domains and
    /// addresses, `*` for all (as `no_proxy`); `nil` to follow `no_proxy`.
    public var noProxy: String? = nil
    /// `USER:PASSWORD` for the proxy (`CURLOPT_PROXYUSERPWD`; curl's `-U`), whichever proxy is
    /// used (``proxy`` or the environment's); never printed.
    public var proxyCredentials: String? = nil
    /// Longest time for each file's whole fetch in seconds, retries and waits included, or
    /// `nil` for no limit. On expiry the file fails as a network error and its partial is kept.
    public var maximumTime: Double? = nil
    /// Most body bytes per second received for each transfer, or `nil` for no limit (kept by
    /// pinfetch as the body is taken, not by libcurl's `CURLOPT_MAX_RECV_SPEED_LARGE`, which lets
    /// what already waits in the socket through).
    public var maximumReceiveRate: Int64? = nil
    /// Transfers at once to one origin (scheme, host, port), so connections to it, at most, for
    /// all the transfers of a batch together (at least 1). Transfers beyond them wait for one to
    /// end; over HTTP/2 they share a connection as streams instead. 8 by default, as browsers.
    public var maximumConnectionsPerHost = 8
    /// Connections at most for one file (`--segments`): 1 fetches it over one stream;
    /// more cut a fresh download of a representation with a strong validator and
    /// `Accept-Ranges: bytes` into pieces of 8 MiB fetched at once, hashed in order.
    public var segments = 1
    /// `--segments auto`: up to 8 connections, only for a file of 64 MiB or more still to fetch
    /// (``segments`` is then 8).
    public var segmentsAutomatic = false
    /// Bytes per piece of a segmented download (`--segment-size`, 8 MiB by default).
    public var segmentPieceSize: Int64 = 8 << 20
    /// Bytes of pieces at most kept in memory ahead of the hash (96 MiB: with the buffers of up to
    /// 16 connections, the process stays under 160 MiB); past it a piece is read back
    /// from the partial when the hash reaches it.
    var segmentMemoryBound = 96 << 20
    /// Redirects followed at most per request.
    public var maximumRedirects = 10
    /// Follow a redirect from `https` to `http` (refused by default: exit 7).
    public var allowInsecureRedirect = false
    /// Seconds to wait for another process's lock on the destination, or `nil` to wait forever.
    public var lockTimeout: Double? = nil
    /// Most body bytes hashed between two durable checkpoints (`fsync` of the partial and of
    /// its state; <doc:ResumeAndCheckpoints#The-rolling-hash-checkpoint>).
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
    /// Give the file the modification time of the answer's `Last-Modified` (an HTTP-date,
    /// RFC 9110 §8.8.2), as `curl -R` and `wget -N` do, so a mirror looks like its source. Only
    /// a file whose bytes were answered in this run gets it; a file already complete or placed
    /// from the cache keeps its own, as does one whose answer had no valid `Last-Modified`.
    public var remoteTime = false
    /// Read a complete destination again even when its verified record says what it holds
    /// (`--reverify`; <doc:ResumeAndCheckpoints#The-verified-record>): a pinned file is hashed,
    /// an unpinned one fetched again without a condition. By default a destination whose
    /// record still describes it is taken as recorded: no read, and without a pin a
    /// conditional `GET` (`If-None-Match`, `If-Modified-Since`; RFC 9110 §13.1).
    public var reverify = false
    /// Never replace a file already at the destination (`--no-clobber`, wget's `-nc`): an
    /// unpinned one is left as it is and reported `already-complete` with its digest (from its
    /// verified record, else read); a pinned one that does not hold the pinned bytes is an
    /// error (``PinFetchError/Code/fileIO``), the file untouched.
    public var noClobber = false
    /// Called from the transfer thread as bytes arrive (five times a second at most).
    public var progress: (@Sendable (FetchProgress) -> Void)? = nil
    /// Asked just before each verified file is renamed into place, the point of no return:
    /// `true` stops that file as a cancellation of the run does (``PinFetchError/Code/cancelled``,
    /// the partial kept for a later run, nothing placed). For a caller whose own stop, such as a
    /// signal taken on a thread of its own, may not have cancelled the task yet on a loaded
    /// machine; `nil` asks nothing.
    public var stopRequested: (@Sendable () -> Bool)? = nil
    /// Called from the transfer thread for each ``FetchEvent``: progress (as ``progress``), a
    /// restart from byte 0 and why, a retry or a move to another mirror and why.
    public var events: (@Sendable (FetchEvent) -> Void)? = nil

    public init() {}
}
