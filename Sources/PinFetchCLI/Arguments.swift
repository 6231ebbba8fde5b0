import FoundationEssentials
public import PinFetch

/// The parsed command line (the command-line article).
public struct Arguments: Sendable {
    /// What the invocation asks for.
    public enum Action: Sendable, Equatable { case fetch, help, version }

    public var action: Action = .fetch
    /// The URLs on the command line: mirrors of one file.
    public var urls: [String] = []
    /// `-o`: the destination, or `nil` for the last segment of the URL path.
    public var output: String?
    /// `-P`: the directory outputs go in (default `.`).
    public var directory: String?
    /// `-i`: a manifest (or, with `--base-url`, a checksum file) of many files.
    public var inputFile: String?
    /// `--base-url` (repeatable): turns an `-i` checksum file into a manifest; several are
    /// mirrors of one release directory, in order of preference.
    public var baseURLs: [String] = []
    /// `--checksum-file`: a SHA256SUMS-style file (path or URL); the entry is chosen by file name.
    public var checksumFile: String?
    /// `--signature`: the checksum file's detached signature (path or URL).
    public var signature: String?
    /// `--trusted-key` (repeatable): key files the checksum file's signature must be by.
    public var trustedKeys: [String] = []
    /// `--hashed-mirror` (repeatable): hash-addressed mirrors asked first for pinned files.
    public var hashedMirrors: [HashedMirror] = []
    /// `-j`: downloads at once.
    public var jobs = 1
    /// `--fail-fast`: start no new file after the first failure.
    public var failFast = false
    /// `--shard K/N`: only entries whose index mod N is K (`--shard auto`: K from
    /// `JOB_COMPLETION_INDEX`, N from `--shard-count`).
    public var shard: (k: Int, n: Int)?
    /// `--shard auto`, resolved once the options are read.
    var shardAutomatic = false
    /// `--shard-count N`, with `--shard auto`.
    var shardCount: Int?
    /// `--include` and `--exclude` (repeatable): with `-i`, the entries fetched are those whose
    /// name matches an include (any, when none is given) and no exclude (`fnmatch(3)` globs).
    public var includes: [String] = []
    public var excludes: [String] = []
    /// `--content-disposition`: name the file after the server's `Content-Disposition`.
    public var contentDisposition = false
    /// `--cache-dir`, or `nil` for `$PINFETCH_CACHE_DIR` (no cache when that is unset or empty).
    public var cacheDirectory: String?
    /// `--no-remote-cache`: no remote cache, whatever `--remote-cache` or `PINFETCH_REMOTE_CACHE` say.
    var noRemoteCache = false
    /// `--no-cache`: no cache, whatever `--cache-dir` or `PINFETCH_CACHE_DIR` say.
    public var noCache = false
    /// `-R`/`--remote-time` (`true`) or `--no-remote-time` (`false`); `nil` means on with
    /// `--base-url` (a mirror looks like its source), off otherwise.
    public var remoteTime: Bool?
    /// `--sha256` / `--checksum`.
    public var pin: Pin?
    public var options = FetchOptions()
    /// `--json`: one JSON object per file on stdout.
    public var json = false
    /// `-q`: no progress on stderr.
    public var quiet = false
    /// `-v`: each request, the answers' deciding fields, and each decision, on stderr.
    public var verbose = false
    /// The option that gave the pin (`--sha256`, `--checksum`, `--checksum-file`), as spelled:
    /// a second one, or one with `--base-url`, is refused naming it.
    var pinOption: String?
    /// `--dry-run`: say what would be fetched, fetch no body.
    public var dryRun = false
    /// `-O`/`--remote-name` was given (curl's: what pinfetch does without `-o`); a URL that is
    /// not one is then taken for wget's `-O FILE`, and the message says so.
    var remoteName = false

    public init() {}

    /// Parses `arguments` (without the program name): the options, as ``OptionTable`` declares
    /// them, and the URLs.
    ///
    /// Long options take their value as `--name value` or `--name=value`; `--` ends the options.
    /// - Throws: ``PinFetchError/Code/usage`` with a one-line reason for an unknown option, a
    ///   missing or malformed value, a malformed pin or header, or not exactly one URL.
    public static func parse(_ arguments: [String]) throws(PinFetchError) -> Arguments {
        try Self.parse(arguments, environment: ProcessInfo.processInfo.environment)
    }

    /// ``parse(_:)`` with the environment variables `--shard auto` reads (`JOB_COMPLETION_INDEX`).
    public static func parse(_ arguments: [String], environment: [String: String]) throws(PinFetchError) -> Arguments {
        do throws(ArgumentError) {
            return try Self.parsing(arguments, environment: environment)
        } catch {
            throw error.failure
        }
    }

    /// ``parse(_:environment:)``, its errors as values: the options in order (``scan(_:)``),
    /// then the checks across them and what the environment adds, in a fixed order.
    static func parsing(_ arguments: [String], environment: [String: String]) throws(ArgumentError) -> Arguments {
        let scanned = try Self.scan(arguments)
        var parsed = scanned.parsed
        guard parsed.action == .fetch else { return parsed }
        try parsed.checkCurlSpellings(scanned.given, first: scanned.curlSpelling)
        parsed.takeChecksumFileAsInput(urls: scanned.urls)
        try parsed.checkBaseURLs()
        try parsed.checkSignatureOptions()
        try parsed.resolveRemoteCache(environment: environment)
        try parsed.resolveAutomaticShard(environment: environment)
        try parsed.checkInputs(urls: scanned.urls)
        try parsed.checkExclusiveOptions()
        parsed.options.remoteTime = parsed.remoteTime ?? (!parsed.baseURLs.isEmpty)
        parsed.trustAnchorsFromEnvironment()
        try parsed.checkEnvironmentProxies()
        parsed.urls = scanned.urls
        try parsed.resolveCacheDirectory()
        return parsed
    }
}
