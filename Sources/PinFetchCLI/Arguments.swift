import Foundation
@_spi(CLI) public import PinFetch

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
    /// `--base-url`: turns an `-i` checksum file into a manifest.
    public var baseURL: String?
    /// `--checksum-file`: a SHA256SUMS-style file (path or URL); the entry is chosen by file name.
    public var checksumFile: String?
    /// `-j`: downloads at once.
    public var jobs = 1
    /// `--fail-fast`: start no new file after the first failure.
    public var failFast = false
    /// `--shard K/N`: only entries whose index mod N is K.
    public var shard: (k: Int, n: Int)?
    /// `--content-disposition`: name the file after the server's `Content-Disposition`.
    public var contentDisposition = false
    /// `--cache-dir`, or `nil` for `$PINFETCH_CACHE_DIR` (no cache when that is unset or empty).
    public var cacheDirectory: String?
    /// `--no-cache`: no cache, whatever `--cache-dir` or `PINFETCH_CACHE_DIR` say.
    public var noCache = false
    /// `--sha256` / `--checksum`.
    public var pin: Pin?
    public var options = FetchOptions()
    /// `--json`: one JSON object per file on stdout.
    public var json = false
    /// `-q`: no progress on stderr.
    public var quiet = false

    public init() {}

    /// The options that take a value, long and short spellings.
    private static let valued: Set<String> = [
        "-o", "--output", "--sha256", "--checksum", "--retries", "--retry-delay", "--connect-timeout",
        "--stall-timeout", "-H", "--header", "--lock-timeout", "--cacert", "-P", "--directory-prefix", "-i",
        "--input-file", "--base-url", "--checksum-file", "-j", "--jobs", "--shard", "--cache-dir", "--max-filesize",
    ]

    /// Parses `arguments` (without the program name).
    ///
    /// Long options take their value as `--name value` or `--name=value`; `--` ends the options.
    /// - Throws: ``PinFetchError/Code/usage`` with a one-line reason for an unknown option, a
    ///   missing or malformed value, a malformed pin or header, or not exactly one URL.
    public static func parse(_ arguments: [String]) throws(PinFetchError) -> Arguments {
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
                    guard index < arguments.count else { throw PinFetchError(.usage, "\(argument) needs a value") }
                    value = arguments[index]
                    index += 1
                }
            } else if inlineValue != nil {
                throw PinFetchError(.usage, "\(argument) takes no value")
            }
            switch argument {
            case "-h", "--help": parsed.action = .help
            case "-V", "--version": parsed.action = .version
            case "-q", "--quiet": parsed.quiet = true
            case "--json": parsed.json = true
            case "-o", "--output":
                guard !value.isEmpty else { throw PinFetchError(.usage, "\(argument) needs a path") }
                parsed.output = value
            case "--sha256", "--checksum":
                if let sawPin { throw PinFetchError(.usage, "\(argument) given after \(sawPin): give one checksum") }
                sawPin = argument
                parsed.pin = try argument == "--sha256" ? Pin(sha256Hex: value) : Pin(parsing: value)
            case "--retries":
                guard let count = Int(value), count >= 0, count <= 1000 else {
                    throw PinFetchError(.usage, "--retries takes a whole number from 0 to 1000, not '\(value)'")
                }
                parsed.options.retries = count
            case "--retry-delay": parsed.options.retryDelay = try Self.seconds(value, for: argument)
            case "--connect-timeout":
                parsed.options.connectTimeout = try Self.seconds(value, for: argument, positive: true)
            case "--stall-timeout": parsed.options.stallTimeout = try Self.seconds(value, for: argument, positive: true)
            case "--lock-timeout": parsed.options.lockTimeout = try Self.seconds(value, for: argument)
            case "--max-filesize": parsed.options.maximumFileSize = try Self.size(value, for: argument)
            case "-H", "--header": parsed.options.headers.append(try Self.header(value))
            case "--cacert":
                guard let pem = FileManager.default.contents(atPath: value) else {
                    throw PinFetchError(.usage, "--cacert: cannot read \(value)")
                }
                guard String(decoding: pem, as: UTF8.self).contains("-----BEGIN CERTIFICATE-----") else {
                    throw PinFetchError(.usage, "--cacert: \(value) holds no PEM certificate")
                }
                parsed.options.caFile = value
            case "--allow-insecure-redirect": parsed.options.allowInsecureRedirect = true
            case "-P", "--directory-prefix":
                guard !value.isEmpty else { throw PinFetchError(.usage, "\(argument) needs a directory") }
                parsed.directory = value
            case "-i", "--input-file": parsed.inputFile = value
            case "--base-url": parsed.baseURL = value
            case "--checksum-file":
                if let sawPin { throw PinFetchError(.usage, "--checksum-file given with \(sawPin): give one checksum") }
                sawPin = argument
                parsed.checksumFile = value
            case "-j", "--jobs":
                guard let count = Int(value), (1...64).contains(count) else {
                    throw PinFetchError(.usage, "\(argument) takes a whole number from 1 to 64, not '\(value)'")
                }
                parsed.jobs = count
            case "--fail-fast": parsed.failFast = true
            case "--shard": parsed.shard = try parseShard(value)
            case "--content-disposition": parsed.contentDisposition = true
            case "--cache-dir":
                guard !value.isEmpty else { throw PinFetchError(.usage, "--cache-dir needs a directory") }
                parsed.cacheDirectory = value
            case "--no-cache": parsed.noCache = true
            default: throw PinFetchError(.usage, "unknown option \(argument) (see --help)")
            }
        }
        guard parsed.action == .fetch else { return parsed }
        if parsed.inputFile != nil {
            guard urls.isEmpty else {
                throw PinFetchError(.usage, "give URLs on the command line or with -i, not both")
            }
            guard parsed.output == nil else { throw PinFetchError(.usage, "-o names one file; with -i use -P DIR") }
        } else {
            guard !urls.isEmpty else { throw PinFetchError(.usage, "no URL given (see --help)") }
            if parsed.baseURL != nil { throw PinFetchError(.usage, "--base-url goes with -i") }
            if parsed.shard != nil { throw PinFetchError(.usage, "--shard goes with -i") }
        }
        if parsed.output != nil, parsed.contentDisposition {
            throw PinFetchError(.usage, "-o and --content-disposition both name the file: give one")
        }
        parsed.urls = urls
        if !parsed.noCache { parsed.options.cacheDirectory = parsed.cacheDirectory ?? Self.environmentCacheDirectory }
        return parsed
    }

    /// `PINFETCH_CACHE_DIR`, when set and not empty: the cache is opt-in (DESIGN.md), so a CI
    /// job or a mirroring script never finds its downloads duplicated without asking.
    static var environmentCacheDirectory: String? {
        guard let directory = ProcessInfo.processInfo.environment["PINFETCH_CACHE_DIR"], !directory.isEmpty
        else { return nil }
        return directory
    }

    /// A non-negative, finite number of seconds (fractions allowed).
    private static func seconds(
        _ text: String,
        for option: String,
        positive: Bool = false
    ) throws(PinFetchError) -> Double {
        guard let value = Double(text), value.isFinite, positive ? value > 0 : value >= 0, value <= 86_400 * 7 else {
            throw PinFetchError(
                .usage,
                "\(option) takes a number of seconds\(positive ? " above 0" : ""), not '\(text)'"
            )
        }
        return value
    }

    /// A number of bytes, with an optional `K`, `M` or `G` (1024-based, either case), as curl's
    /// `--max-filesize` takes it.
    static func size(_ text: String, for option: String) throws(PinFetchError) -> Int64 {
        let shifts: [Character: Int64] = ["k": 10, "m": 20, "g": 30]
        var digits = Substring(text)
        var shift: Int64 = 0
        if let last = digits.last, let unit = shifts[Character(last.lowercased())] {
            shift = unit
            digits = digits.dropLast()
        }
        guard !digits.isEmpty, digits.allSatisfy(\.isASCII), let number = Int64(digits), number > 0,
            number <= Int64.max >> shift
        else {
            throw PinFetchError(
                .usage,
                "\(option) takes a number of bytes above 0 (K, M or G may follow), not '\(text)'"
            )
        }
        return number << shift
    }

    /// `Name: value`, where the name is an RFC 9110 token and nothing holds CR, LF or NUL.
    private static func header(_ line: String) throws(PinFetchError) -> String {
        guard let colon = line.firstIndex(of: ":") else {
            throw PinFetchError(.usage, "-H takes 'Name: value'")
        }
        guard !line.unicodeScalars.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\0" }) else {
            throw PinFetchError(.usage, "-H: a header may not contain CR, LF or NUL")
        }
        let name = line[..<colon]
        let tokenCharacters = Set("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
        guard !name.isEmpty, name.allSatisfy({ tokenCharacters.contains($0) }) else {
            // The line is not repeated: -H values may hold credentials.
            throw PinFetchError(.usage, "-H: the header name is not an RFC 9110 token")
        }
        return line
    }

    /// The destination of the command line's URL: `-o`, else the last segment of the URL path,
    /// percent-decoded, inside `-P`.
    /// - Throws: ``PinFetchError/Code/usage`` when the URL names no usable file name.
    public func destination() throws(PinFetchError) -> String {
        if let output = self.output { return output }
        let name = try Self.fileName(fromURL: self.urls.first ?? "")
        return self.directory.map { ($0 as NSString).appendingPathComponent(name) } ?? name
    }

    /// The last segment of a URL's path, percent-decoded, when it is a usable file name.
    /// - Throws: ``PinFetchError/Code/usage`` when it is empty, `.`, `..` or holds `/` or control characters.
    public static func fileName(fromURL url: String) throws(PinFetchError) -> String {
        var path = Substring(url)
        if let query = path.firstIndex(where: { $0 == "?" || $0 == "#" }) { path = path[..<query] }
        if let scheme = path.range(of: "://") { path = path[scheme.upperBound...] }
        guard let slash = path.firstIndex(of: "/") else {
            throw PinFetchError(.usage, "the URL names no file; give -o PATH")
        }
        let segment = path[slash...].split(separator: "/", omittingEmptySubsequences: false).last ?? ""
        let name = String(segment).removingPercentEncoding ?? String(segment)
        guard !name.isEmpty, name != ".", name != "..", !name.contains("/"), !name.contains("\\"),
            !name.unicodeScalars.contains(where: {
                $0.properties.generalCategory == .control || SafeFileName.isBidirectionalControl($0)
            }),
            name.utf8.count <= SafeFileName.maximumSegmentBytes
        else {
            throw PinFetchError(.usage, "the URL names no usable file name; give -o PATH")
        }
        return name
    }
}
