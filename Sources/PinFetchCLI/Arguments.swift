import FoundationEssentials
@preconcurrency import Glibc
public import PinFetch

/// The parsed command line (DESIGN.md, "Command line").
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
    /// `--signature`: the checksum file's detached signature (path or URL; issue 15).
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
    /// `--dry-run`: say what would be fetched, fetch no body.
    public var dryRun = false

    public init() {}

    /// The options that take a value, long and short spellings.
    private static let valued: Set<String> = [
        "-o", "--output", "--sha256", "--checksum", "--retries", "--retry-delay", "--connect-timeout",
        "--stall-timeout", "-H", "--header", "--lock-timeout", "--cacert", "-P", "--directory-prefix", "-i",
        "--input-file", "--base-url", "--checksum-file", "-j", "--jobs", "--max-connections-per-host", "--segments",
        "--segment-size", "--shard", "--shard-count", "--hashed-mirror", "--remote-cache", "--remote-cache-header",
        "--remote-cache-timeout", "--cache-dir", "--max-filesize", "--signature",
        "--trusted-key",
        "-u", "--user", "--netrc-file", "--cert", "--key", "--proxy", "--noproxy", "--max-time", "--limit-rate",
    ]

    /// Parses `arguments` (without the program name).
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
            throw error.usageError
        }
    }

    /// ``parse(_:environment:)``, its errors as values.
    static func parsing(_ arguments: [String], environment: [String: String]) throws(ArgumentError) -> Arguments {
        var parsed = Arguments()
        var urls: [String] = []
        var index = 0
        var sawPin: String?
        while index < arguments.count {
            var argument = arguments[index]
            index += 1
            if argument == "--" {
                urls += arguments[index...]
                break
            }
            guard argument.hasPrefix("-"), argument != "-" else {
                urls.append(argument)
                continue
            }
            var inlineValue: String?
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                inlineValue = String(argument[argument.index(after: equals)...])
                argument = String(argument[..<equals])
            }
            var value = ""
            if Self.valued.contains(argument) {
                if let inlineValue {
                    value = inlineValue
                } else {
                    guard index < arguments.count else { throw .missingValue(option: argument) }
                    value = arguments[index]
                    index += 1
                }
            } else if inlineValue != nil {
                throw .takesNoValue(option: argument)
            }
            switch argument {
            case "-h", "--help": parsed.action = .help
            case "-V", "--version": parsed.action = .version
            case "-q", "--quiet": parsed.quiet = true
            case "-v", "--verbose": parsed.verbose = true
            case "--dry-run": parsed.dryRun = true
            case "--json": parsed.json = true
            case "-o", "--output":
                guard !value.isEmpty else { throw .emptyValue(option: argument, needs: "a path") }
                parsed.output = value
            case "--sha256", "--checksum":
                if let sawPin { throw .conflict(.secondPin(argument, after: sawPin)) }
                sawPin = argument
                do throws(PinFetchError) {
                    parsed.pin = try argument == "--sha256" ? Pin(sha256Hex: value) : Pin(parsing: value)
                } catch {
                    throw ArgumentError(error)
                }
            case "--retries":
                guard let count = Int(value), count >= 0, count <= 1000 else {
                    throw .badValue(option: "--retries", expected: "a whole number from 0 to 1000", given: value)
                }
                parsed.options.retries = count
            case "--retry-delay": parsed.options.retryDelay = try Self.seconds(value, for: argument)
            case "--connect-timeout":
                parsed.options.connectTimeout = try Self.seconds(value, for: argument, positive: true)
            case "--stall-timeout": parsed.options.stallTimeout = try Self.seconds(value, for: argument, positive: true)
            case "--remote-cache": parsed.options.remoteCache = try Self.remoteCache(value, from: argument)
            case "--remote-cache-header": parsed.options.remoteCacheHeaders.append(try Self.remoteCacheHeader(value))
            case "--remote-cache-timeout":
                parsed.options.remoteCacheTimeout = try Self.seconds(value, for: argument, positive: true)
            case "--lock-timeout": parsed.options.lockTimeout = try Self.seconds(value, for: argument)
            case "--max-filesize": parsed.options.maximumFileSize = try Self.size(value, for: argument)
            case "-H", "--header":
                parsed.options.headers +=
                    try value.hasPrefix("@") ? Self.headers(fromFile: value) : [Self.header(value)]
            case "-u", "--user": parsed.options.credentials = try Self.credentials(value)
            case "--netrc": parsed.options.netrcFile = Self.homeNetrc
            case "--netrc-file": parsed.options.netrcFile = try Self.readableFile(value, for: argument)
            case "--cacert": parsed.options.caFile = try Self.certificateFile(value, for: argument)
            case "--cert": parsed.options.clientCertificateFile = try Self.unencryptedPEM(value, for: argument)
            case "--key": parsed.options.clientKeyFile = try Self.unencryptedPEM(value, for: argument)
            case "--proxy": parsed.options.proxy = try Self.proxy(value)
            case "--noproxy": parsed.options.noProxy = try Self.hostList(value, for: argument)
            case "--max-time": parsed.options.maximumTime = try Self.seconds(value, for: argument, positive: true)
            case "--limit-rate": parsed.options.maximumReceiveRate = try Self.size(value, for: argument)
            case "--allow-insecure-redirect": parsed.options.allowInsecureRedirect = true
            case "-P", "--directory-prefix":
                guard !value.isEmpty else { throw .emptyValue(option: argument, needs: "a directory") }
                parsed.directory = value
            case "-i", "--input-file": parsed.inputFile = value
            case "--base-url": parsed.baseURLs.append(value)
            case "--checksum-file":
                if let sawPin { throw .conflict(.checksumFileAfterPin(first: sawPin)) }
                sawPin = argument
                parsed.checksumFile = value
            case "--hashed-mirror":
                do throws(PinFetchError) {
                    parsed.hashedMirrors.append(try HashedMirror(value))
                } catch {
                    throw ArgumentError(error)
                }
            case "--signature":
                guard parsed.signature == nil else { throw .conflict(.secondSignature) }
                parsed.signature = value
            case "--trusted-key": parsed.trustedKeys.append(value)
            case "-j", "--jobs":
                guard let count = Int(value), (1...64).contains(count) else {
                    throw .badValue(option: argument, expected: "a whole number from 1 to 64", given: value)
                }
                parsed.jobs = count
            case "--max-connections-per-host":
                guard let count = Int(value), (1...64).contains(count) else {
                    throw .badValue(option: argument, expected: "a whole number from 1 to 64", given: value)
                }
                parsed.options.maximumConnectionsPerHost = count
            case "--segments":
                if value == "auto" {
                    (parsed.options.segments, parsed.options.segmentsAutomatic) = (8, true)
                    break
                }
                guard let count = Int(value), (1...16).contains(count) else {
                    throw .badValue(option: argument, expected: "'auto' or a whole number from 1 to 16", given: value)
                }
                (parsed.options.segments, parsed.options.segmentsAutomatic) = (count, false)
            case "--segment-size":
                let size = try Self.size(value, for: argument)
                guard (64 << 10...1 << 30).contains(size) else {
                    throw .badValue(option: argument, expected: "a size from 64K to 1G", given: value)
                }
                parsed.options.segmentPieceSize = size
            case "--fail-fast": parsed.failFast = true
            case "--remote-cache-upload": parsed.options.remoteCacheUpload = true
            case "--shard" where value == "auto": parsed.shardAutomatic = true
            case "--shard":
                do throws(PinFetchError) {
                    parsed.shard = try parseShard(value)
                } catch {
                    throw ArgumentError(error)
                }
            case "--shard-count":
                guard let count = Int(value), count >= 1 else {
                    throw .badValue(option: "--shard-count", expected: "a whole number of at least 1", given: value)
                }
                parsed.shardCount = count
            case "--content-disposition": parsed.contentDisposition = true
            case "--cache-dir":
                guard !value.isEmpty else { throw .emptyValue(option: "--cache-dir", needs: "a directory") }
                parsed.cacheDirectory = value
            case "--no-cache": parsed.noCache = true
            case "--no-remote-cache": parsed.noRemoteCache = true
            case "-R", "--remote-time": parsed.remoteTime = true
            case "--no-remote-time": parsed.remoteTime = false
            default: throw .unknownOption(argument)
            }
        }
        guard parsed.action == .fetch else { return parsed }
        // `--checksum-file SUMS --base-url URL/` without a URL means what `-i SUMS --base-url URL/`
        // does: every entry (people write it both ways).
        if parsed.inputFile == nil, urls.isEmpty, !parsed.baseURLs.isEmpty, let sums = parsed.checksumFile {
            parsed.inputFile = sums
            parsed.checksumFile = nil
            sawPin = nil  // it was this file
        }
        if !parsed.baseURLs.isEmpty {
            if parsed.inputFile == nil { throw .conflict(.baseURLWithoutInputFile) }
            // Each entry of the checksum file has its own pin: another one would be ignored.
            if parsed.checksumFile != nil { throw .conflict(.checksumFileWithBaseURL) }
            if let sawPin { throw .conflict(.pinWithBaseURL(sawPin)) }
        }
        try parsed.checkSignatureOptions()
        if parsed.noRemoteCache {
            parsed.options.remoteCache = nil  // a fleet-wide PINFETCH_REMOTE_CACHE is not read either
        } else if parsed.options.remoteCache == nil, let url = environment["PINFETCH_REMOTE_CACHE"], !url.isEmpty {
            parsed.options.remoteCache = try Self.remoteCache(url, from: "PINFETCH_REMOTE_CACHE")
        }
        try parsed.resolveAutomaticShard(environment: environment)
        if parsed.inputFile != nil {
            guard urls.isEmpty else { throw .conflict(.urlsWithInputFile) }
            guard parsed.output == nil else { throw .conflict(.outputWithInputFile) }
        } else {
            guard !urls.isEmpty else { throw .noURL }
            if parsed.shard != nil { throw .conflict(.shardWithoutInputFile) }
        }
        if parsed.output != nil, parsed.contentDisposition { throw .conflict(.outputAndContentDisposition) }
        if parsed.options.clientKeyFile != nil, parsed.options.clientCertificateFile == nil {
            throw .conflict(.keyWithoutCertificate)
        }
        if parsed.verbose, parsed.quiet { throw .conflict(.verboseAndQuiet) }
        parsed.options.remoteTime = parsed.remoteTime ?? (!parsed.baseURLs.isEmpty)
        parsed.trustAnchorsFromEnvironment()
        try parsed.checkEnvironmentProxies()
        parsed.urls = urls
        if !parsed.noCache {
            if parsed.cacheDirectory == nil { parsed.cacheDirectory = try Self.checkedEnvironmentCacheDirectory() }
            parsed.options.cacheDirectory = parsed.cacheDirectory
        }
        return parsed
    }
}
