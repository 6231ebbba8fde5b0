import FoundationEssentials
@preconcurrency import Glibc
import PinFetch
import Synchronization

/// The values options take: numbers of seconds and bytes, headers, credentials, names, and what
/// the environment says (cache, trust anchors).
extension Arguments {
    /// A `--remote-cache-header` line: as `-H` takes it, but not one of the fields that frame
    /// or route the request (a `Content-Length` of its own would cut an upload short, and the
    /// rest would be read as another request).
    static func remoteCacheHeader(_ line: String) throws(ArgumentError) -> String {
        let header = try Self.header(line, for: "--remote-cache-header")
        let name = header.prefix { $0 != ":" }.lowercased()
        let framing = ["content-length", "transfer-encoding", "host", "connection", "expect", "te", "upgrade"]
        guard !framing.contains(name) else {
            throw .refused(option: "--remote-cache-header", reason: "\(name) is pinfetch's to set")
        }
        return header
    }

    /// A remote cache's base URL (`--remote-cache`, `PINFETCH_REMOTE_CACHE`): an `http` or
    /// `https` URL without a fragment (blobs go at `/cas/<hex>` on its path), or
    /// `s3://BUCKET[/PREFIX]` (blobs at `PREFIX/cas/HH/<hex>`).
    /// - Throws: ``ArgumentError/refused(option:reason:)`` naming `source` and what is wrong,
    ///   the URL's secrets as `***`.
    static func remoteCache(_ value: String, from source: String) throws(ArgumentError) -> String {
        do throws(PinFetchError) {
            // A bucket alone (`s3://BUCKET`) is a cache: its blobs are keys under it.
            _ = try HTTPURL(S3Location.names(value) ? value + "/cas" : value)
        } catch {
            throw .refused(option: source, reason: error.message)
        }
        if value.utf8.contains(UInt8(ascii: "#")) {
            throw .refused(
                option: source,
                reason: "\(SafeFileName.quoted(Redaction.url(value))) has a fragment (#...): "
                    + "blobs go at /cas/HEX on its path"
            )
        }
        return value
    }

    /// `PINFETCH_CACHE_DIR`, when set and not empty: the cache is opt-in, so a CI
    /// job or a mirroring script never finds its downloads duplicated without asking.
    static var environmentCacheDirectory: String? {
        guard let directory = ProcessInfo.processInfo.environment["PINFETCH_CACHE_DIR"], !directory.isEmpty
        else { return nil }
        return directory
    }

    /// ``environmentCacheDirectory``, which must be an absolute path: a relative one would make a
    /// cache in every directory a job runs in.
    /// - Throws: ``ArgumentError/relativeCacheDirectory(_:)`` for a relative path.
    static func checkedEnvironmentCacheDirectory() throws(ArgumentError) -> String? {
        guard let directory = Self.environmentCacheDirectory else { return nil }
        guard directory.hasPrefix("/") else { throw .relativeCacheDirectory(directory) }
        return directory
    }

    /// A non-negative, finite number of seconds (fractions allowed).
    static func seconds(
        _ text: String,
        for option: String,
        positive: Bool = false
    ) throws(ArgumentError) -> Double {
        guard let value = Double(text), value.isFinite, positive ? value > 0 : value >= 0, value <= 86_400 * 7 else {
            throw .badValue(option: option, expected: "a number of seconds\(positive ? " above 0" : "")", given: text)
        }
        return value
    }

    /// A number of bytes, with an optional `K`, `M` or `G` (1024-based, either case), as curl's
    /// `--max-filesize` takes it.
    static func size(_ text: String, for option: String) throws(ArgumentError) -> Int64 {
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
            throw .badValue(option: option, expected: "a number of bytes above 0 (K, M or G may follow)", given: text)
        }
        return number << shift
    }

    /// `Name: value`, where the name is an RFC 9110 token and nothing holds CR, LF or NUL.
    /// - Parameter option: How errors name the option (`-H`, `--remote-cache-header`); they never
    ///   repeat the line, which may hold a credential.
    static func header(_ line: String, for option: String = "-H") throws(ArgumentError) -> String {
        guard let colon = line.firstIndex(ofASCII: ":") else {
            throw .badValue(option: option, expected: "'Name: value'", given: nil)
        }
        guard !line.unicodeScalars.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\0" }) else {
            throw .refused(option: option, reason: "a header may not contain CR, LF or NUL")
        }
        let name = line[..<colon]
        let tokenCharacters = Set("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
        guard !name.isEmpty, name.allSatisfy({ tokenCharacters.contains($0) }) else {
            // The line is not repeated: -H values may hold credentials.
            throw .refused(option: option, reason: "the header name is not an RFC 9110 token")
        }
        return line
    }

    /// The lines of `-H @FILE`: one `Name: value` per line (CRLF or LF), blank lines skipped, so
    /// a token stays out of the process list. At most 1 MiB.
    /// - Throws: ``ArgumentError/refused(option:reason:)`` naming the file and line (never its
    ///   text, which may hold a secret) when it cannot be read or a line is not a header.
    static func headers(fromFile argument: String) throws(ArgumentError) -> [String] {
        let path = String(argument.dropFirst())
        let read: [UInt8]?
        do throws(PinFetchError) {
            read = try InputFile.contents(of: path, limit: 1 << 20)
        } catch {
            throw .stopped(error.message)
        }
        guard let bytes = read else {
            var state = stat()
            let why =
                stat(path, &state) != 0
                ? String(cString: strerror(errno))
                : state.st_size > 1 << 20 ? "larger than 1 MiB" : "cannot read the file"
            throw .refused(option: "-H @\(path)", reason: why)
        }
        var headers: [String] = []
        // Split on the byte LF: to `String`, CR LF is one Character and no "\n" would match.
        for (number, raw) in bytes.split(separator: 0x0A, omittingEmptySubsequences: false).enumerated() {
            let line = String(decoding: raw.last == 0x0D ? raw.dropLast() : raw, as: UTF8.self)
            if line.trimmingWhitespace().isEmpty { continue }
            do throws(ArgumentError) {
                headers.append(try Self.header(line))
            } catch {
                throw .refused(option: "-H @\(path), line \(number + 1)", reason: error.message)
            }
        }
        return headers
    }

    /// `USER:PASSWORD` for `--user`. pinfetch never prompts (it runs unattended), so a value
    /// without a colon is bad input; an empty password (`USER:`) is allowed.
    static func credentials(_ value: String, for option: String = "--user") throws(ArgumentError) -> String {
        guard let colon = value.firstIndex(ofASCII: ":"), colon != value.startIndex else {
            throw .badValue(
                option: option,
                expected: "USER:PASSWORD (pinfetch never prompts for a password)",
                given: nil
            )
        }
        guard !value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw .refused(option: option, reason: "control characters are not allowed")
        }
        return value
    }

    /// `$HOME/.netrc` for `--netrc` (a missing file gives no credentials, as with curl).
    static var homeNetrc: String {
        if let home = ProcessInfo.processInfo.environment["HOME"], !home.isEmpty { return home + "/.netrc" }
        // No $HOME: the password database's home directory, as curl does.
        guard let entry = getpwuid(geteuid()), let directory = entry.pointee.pw_dir else { return ".netrc" }
        return String(cString: directory) + "/.netrc"
    }

    /// `path` when it names a readable regular file (following links). A pipe or a FIFO
    /// (`--netrc-file <(vault read …)`, `/dev/stdin`) is read here, once, with the stop signals
    /// live (``InputFile``), and the path returned is that of a private copy of its bytes
    /// (``PrivateCopy``, kept for the life of the process): the library reads its files again
    /// by path, which a pipe would not survive.
    /// - Throws: ``ArgumentError/refused(option:reason:)`` naming `option` otherwise (a
    ///   directory, a device, a pipe of more than 64 MiB); ``ArgumentError/stopped`` when a
    ///   stop signal came while a pipe was read.
    static func readableFile(_ path: String, for option: String) throws(ArgumentError) -> String {
        var info = stat()
        guard !path.isEmpty, stat(path, &info) == 0, access(path, R_OK) == 0 else {
            throw .refused(option: option, reason: "cannot read \(path.isEmpty ? "''" : path)")
        }
        let type = info.st_mode & S_IFMT
        if type == S_IFREG { return path }
        guard type == S_IFIFO || type == S_IFSOCK else {
            throw .refused(option: option, reason: "\(path) is not a regular file, a pipe or a FIFO")
        }
        let bytes: [UInt8]?
        do throws(PinFetchError) {
            bytes = try InputFile.contents(of: path, limit: 64 << 20)
        } catch {
            throw .stopped(error.message)
        }
        guard let bytes else {
            throw .refused(option: option, reason: "\(path) cannot be read, or holds more than 64 MiB")
        }
        guard let copy = PrivateCopy(bytes) else {
            throw .refused(option: option, reason: "no room for a private copy of \(path) in the temporary directory")
        }
        Self.privateCopies.withLock { $0.append(copy) }
        return copy.path
    }

    /// The private copies of piped inputs (``readableFile(_:for:)``), kept while the process lives.
    private static let privateCopies = Mutex<[PrivateCopy]>([])

    /// `path` when it names a readable PEM file holding a block of `kind` that OpenSSL reads
    /// (``PEMFile``) and no encrypted key: pinfetch never asks for a passphrase (OpenSSL would, on
    /// the terminal, and wait).
    static func unencryptedPEM(
        _ path: String,
        for option: String,
        holding kind: PEMKind
    ) throws(ArgumentError) -> String {
        let file = try Self.readableFile(path, for: option)
        let bytes = (try? InputFile.contents(of: file, limit: 1 << 20)) ?? []
        let text = String(decoding: bytes, as: UTF8.self)
        // A file that is no PEM of that kind (a DER file, a BEGIN line over junk, an empty pipe
        // read twice) fails here, not in the handshake of a later request.
        guard text.contains(kind.marker) else {
            throw .refused(option: option, reason: "\(path) holds no PEM \(kind.rawValue)")
        }
        guard !text.contains("ENCRYPTED") else {
            throw .refused(
                option: option,
                reason: "\(path) holds an encrypted key, and pinfetch never asks for a passphrase; "
                    + "give it decrypted (openssl pkey -in KEY -out KEY.pem), kept private"
            )
        }
        let readable = kind == .certificate ? PEMFile.holdsOnlyCertificates(bytes) : PEMFile.holdsPrivateKey(bytes)
        guard readable else {
            throw .refused(option: option, reason: "\(path) holds no \(kind.rawValue) OpenSSL can read (PEM)")
        }
        return file
    }

    /// What a PEM file for `--cert` or `--key` must hold.
    enum PEMKind: String {
        case certificate
        case privateKey = "private key"

        /// The text every PEM block of the kind has (`BEGIN PRIVATE KEY`, `BEGIN RSA PRIVATE KEY`…).
        var marker: String { self == .certificate ? "-----BEGIN CERTIFICATE-----" : " PRIVATE KEY-----" }
    }

    /// `path` when it names a readable file holding at least one PEM certificate.
    static func certificateFile(_ path: String, for option: String) throws(ArgumentError) -> String {
        let file = try Self.readableFile(path, for: option)
        guard let pem = (try? InputFile.contents(of: file, limit: 64 << 20)) ?? nil,
            String(decoding: pem, as: UTF8.self).contains("-----BEGIN CERTIFICATE-----")
        else {
            throw .refused(option: option, reason: "\(path) holds no PEM certificate")
        }
        guard PEMFile.holdsOnlyCertificates(pem) else {
            throw .refused(
                option: option,
                reason: "\(path) holds no certificate OpenSSL can read (PEM), or a block that is none"
            )
        }
        return file
    }

    /// A `--proxy` URL: `http`, `https`, `socks4`, `socks4a`, `socks5` or `socks5h`, or a bare
    /// `host:port` (HTTP, as curl takes it); the empty string turns proxies off, environment
    /// included.
    /// - Parameter label: How messages name where the value came from (`--proxy`, `$https_proxy`).
    static func proxy(_ value: String, label: String = "--proxy") throws(ArgumentError) -> String {
        guard !value.isEmpty else { return "" }
        // Shown without credentials, in either form (`user:pass@host` has no `://`).
        let shown =
            value.contains("://")
            ? Redaction.malformedURL(value)
            : value.lastIndex(ofASCII: "@").map { "***" + value[$0...] } ?? value
        guard !value.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F || $0 == "?" || $0 == "#" })
        else {
            throw .refused(
                option: label,
                reason: "\(SafeFileName.quoted(shown)) holds a space, a control character, '?' or '#' "
                    + "(percent-encode them in a password)"
            )
        }
        if let scheme = value.firstRange(of: "://") {
            let name = value[..<scheme.lowerBound].lowercased()
            guard ["http", "https", "socks4", "socks4a", "socks5", "socks5h"].contains(name) else {
                throw .refused(
                    option: label,
                    reason: "scheme '\(name)' is not http, https, socks4, socks4a, socks5 or socks5h"
                )
            }
        }
        // host[:port] after any credentials: a port libcurl would refuse is bad input here. The
        // delimiters are found by byte: a combining mark after one makes one `Character` of both.
        let afterScheme = value.firstRange(of: "://").map { value[$0.upperBound...] } ?? Substring(value)
        let authority = afterScheme[..<(afterScheme.firstIndex(ofASCII: "/") ?? afterScheme.endIndex)]
        let hostPort =
            authority.lastIndex(ofASCII: "@").map { authority[authority.index(afterASCII: $0)...] } ?? authority
        if authority.utf8.filter({ $0 == UInt8(ascii: "@") }).count > 1 {
            throw .refused(
                option: label,
                reason: "\(SafeFileName.quoted(shown)) holds '@' in its credentials (percent-encode it as %40)"
            )
        }
        let port =
            hostPort.hasPrefix("[")
            ? hostPort.split(separator: "]").last.map { $0.dropFirst() }
            : hostPort.split(separator: ":", maxSplits: 1).dropFirst().first
        guard !HTTPURL.beginsWithMarkOrFormat(hostPort) else {
            throw .refused(
                option: label,
                reason: "\(SafeFileName.quoted(shown)): its host begins with a combining mark or an invisible "
                    + "format character"
            )
        }
        guard !hostPort.isEmpty, !hostPort.hasPrefix(":"),
            port.map({ !$0.isEmpty && $0.allSatisfy(\.isASCII) && (Int($0).map { (1...65_535).contains($0) } ?? false) }
            ) ?? true
        else {
            throw .refused(
                option: label,
                reason: "\(SafeFileName.quoted(shown)) is not [scheme://][user:password@]host[:port]"
            )
        }
        return value
    }

    /// A `--noproxy` list: host names, domains, addresses and `*`, separated by commas (and
    /// spaces), without control characters.
    static func hostList(_ value: String, for option: String) throws(ArgumentError) -> String {
        guard !value.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw .refused(option: option, reason: "control characters are not allowed")
        }
        return value
    }

    /// Trust anchors from the environment, as curl takes them when neither `--cacert` nor a CA
    /// directory is given on its command line: `CURL_CA_BUNDLE`, else `SSL_CERT_FILE` and
    /// `SSL_CERT_DIR`. `--cacert` adds to them (pinfetch's `--cacert` never replaces). As with
    /// curl, a variable naming nothing fails HTTPS (exit 5) and leaves plain HTTP alone.
    /// Without `--proxy`, the proxies libcurl takes from the environment are checked as
    /// `--proxy` is: a malformed one is bad input (exit 2) before any request, not a network
    /// failure retried with back-off.
    /// - Throws: ``ArgumentError/refused(option:reason:)`` naming the variable.
    func checkEnvironmentProxies() throws(ArgumentError) {
        guard self.options.proxy == nil, self.options.noProxy != "*" else { return }
        let environment = ProcessInfo.processInfo.environment
        if environment["no_proxy"] == "*" || environment["NO_PROXY"] == "*" { return }  // none is used
        // libcurl reads `http_proxy` in lower case only (a CGI server sets HTTP_PROXY from a header).
        for name in ["http_proxy", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"] {
            guard let value = environment[name], !value.isEmpty else { continue }
            _ = try Self.proxy(value, label: "$\(name)")
        }
    }

    mutating func trustAnchorsFromEnvironment() {
        let environment = ProcessInfo.processInfo.environment
        func value(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        if let path = value("CURL_CA_BUNDLE") ?? value("SSL_CERT_FILE") { self.options.caBundleFile = path }
        if value("CURL_CA_BUNDLE") == nil, let path = value("SSL_CERT_DIR") { self.options.caDirectory = path }
    }

    /// The destination of the command line's URL, `url` (its first, parsed): `-o`, else the
    /// last segment of the URL path, percent-decoded, inside `-P`.
    /// - Throws: ``PinFetchError/Code/usage`` when the URL names no usable file name.
    func destination(of url: HTTPURL?) throws(PinFetchError) -> String {
        // A relative -o is under -P, as curl's --output-dir puts it; an absolute one, or
        // standard output, is as given.
        if let output = self.output {
            guard let directory = self.directory, output != "-", !output.hasPrefix("/") else { return output }
            return Text.path(directory, output)
        }
        guard let url else { throw PinFetchError(.usage, "the URL names no file; give -o PATH") }
        let name = try Self.fileName(of: url)
        return self.directory.map { Text.path($0, name) } ?? name
    }

    /// The last segment of a URL's path, percent-decoded, when it is a usable file name.
    /// - Throws: ``PinFetchError/Code/usage`` when the path is empty, or its last segment is
    ///   empty, `.`, `..`, holds `/`, `\\` or control characters, or is too long for a file name.
    static func fileName(of url: HTTPURL) throws(PinFetchError) -> String {
        guard let name = url.pathSegments.last else {
            throw PinFetchError(.usage, "the URL names no file; give -o PATH")
        }
        guard !name.isEmpty, name != ".", name != "..", !name.contains("/"), !name.contains("\\"),
            !name.unicodeScalars.contains(where: {
                $0.properties.generalCategory == .control || SafeFileName.isBidirectionalControl($0)
            }),
            name.utf8.count <= SafeFileName.maximumNameBytes
        else {
            throw PinFetchError(.usage, "the URL names no usable file name; give -o PATH")
        }
        return name
    }
}
