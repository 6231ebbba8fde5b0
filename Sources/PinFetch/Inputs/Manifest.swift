/// A list of files to fetch, one per line (<doc:CommandLine#Manifests-and-checksum-files>).
///
/// A line is `URL [URL ...] [checksum] [output]`, tokens separated by spaces or tabs:
/// - the leading tokens that start with `http://`, `https://` or `s3://` (scheme in any case) are mirrors
///   of one file, tried in order;
/// - then an optional checksum in any `--checksum` form (`sha256:HEX`, `sha512:HEX`, bare hex of
///   64 or 128 digits, SRI `sha256-BASE64`), see ``Pin/init(parsing:)``;
/// - then an optional output name, kept as written (``SafeFileName/resolve(_:in:)`` checks it
///   later).
///
/// With one token after the URLs, a token that parses as a pin is the checksum and any other is
/// the output name, except that a token that looks like a checksum (`sha256:`/`md5:`-style
/// prefix, SRI `sha256-` followed by 20 or more base64 characters, or 32 or more hex digits) but
/// does not parse is an error rather than a silently unpinned name. So an output name of 64 or
/// 128 hex digits is read as a checksum; give a checksum before it, or rename it.
///
/// `#` at the start of a token starts a comment to the end of the line (a whole-line comment
/// after optional spaces, or ` # note` after tokens), so an output name cannot start with `#`; a
/// `#` inside a URL (a fragment) is kept. Blank lines are skipped; CRLF line ends and a UTF-8
/// byte order mark are accepted. A line `hashed-mirror TEMPLATE` adds a hash-addressed mirror
/// (``HashedMirror``) for every pinned entry, as `--hashed-mirror` does. Pure Swift with no C
/// import, so it can be fuzzed on its own.
package struct Manifest: Sendable {
    /// One file: its mirrors, its pin and where to save it.
    package struct Entry: Sendable, Hashable {
        /// One or more absolute `http`/`https` URLs of the same file, in the order written.
        package var mirrors: [String]
        /// The expected digest, if the line gave one.
        package var pin: Pin?
        /// The output name as written (not yet checked by ``SafeFileName/resolve(_:in:)``), or `nil`
        /// for the default (the last segment of the URL path, or `Content-Disposition`).
        package var output: String?
        /// The 1-based line number in the manifest (or in the checksum file it came from).
        package var line: Int

        /// Creates an entry; `mirrors` should hold at least one URL.
        package init(mirrors: [String], pin: Pin? = nil, output: String? = nil, line: Int) {
            self.mirrors = mirrors
            self.pin = pin
            self.output = output
            self.line = line
        }
    }

    /// The files in manifest order; comment and blank lines are not entries.
    package var entries: [Entry]
    /// The `hashed-mirror` lines' templates, in order.
    package var hashedMirrors: [HashedMirror] = []

    /// Creates a manifest of `entries`.
    package init(entries: [Entry]) {
        self.entries = entries
    }

    /// Parses a manifest.
    ///
    /// - Parameter text: The whole manifest.
    /// - Throws: ``PinFetchError/Code/usage`` (exit 2), with `manifest line N:`, for a line whose
    ///   first token is not an `http`/`https` URL; a URL after a non-URL token; a malformed
    ///   checksum where one is expected (a token that looks like a checksum but does not parse,
    ///   or the first of two tokens after the URLs, when it is not a checksum); two checksums;
    ///   or three or more tokens after the URLs.
    package init(parsing text: String) throws(PinFetchError) {
        var bytes = Array(text.utf8)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
        var entries: [Entry] = []
        for (offset, rawLine) in bytes.split(separator: 0x0A, omittingEmptySubsequences: false).enumerated() {
            var line = rawLine
            if line.last == 0x0D { line.removeLast() }
            var tokens: [String] = []
            for token in line.split(whereSeparator: { $0 == 0x20 || $0 == 0x09 }) {
                if token.first == UInt8(ascii: "#") { break }
                tokens.append(String(decoding: token, as: UTF8.self))
            }
            guard !tokens.isEmpty else { continue }
            if tokens[0] == "hashed-mirror" {
                guard tokens.count == 2 else {
                    throw PinFetchError(.usage, "line \(offset + 1): hashed-mirror takes one URL template")
                }
                do throws(PinFetchError) {
                    self.hashedMirrors.append(try HashedMirror(tokens[1]))
                } catch {
                    throw PinFetchError(.usage, "line \(offset + 1): \(error.message)")
                }
                continue
            }
            entries.append(try Self.entry(tokens, line: offset + 1))
        }
        self.entries = entries
    }

    /// A checksum file plus a base URL as a manifest (`--checksum-file` with `--base-url`).
    ///
    /// Each file name becomes the mirror `<baseURL><name>` (leading `./` removed, the name
    /// percent-encoded except for `/` and the characters RFC 3986 §3.3 allows in a path), pinned
    /// to its digest, with the name itself as output name: its directories are kept, so a tree
    /// such as `linux/amd64/tool` and `darwin/arm64/tool` is mirrored as a tree. Entries come in
    /// checksum-file order, each named once: the same name with the same digest twice is one
    /// entry, and with SHA-256 and SHA-512 digests it keeps the SHA-512 one. Unsupported
    /// algorithms (GNU lines of MD5 or SHA-1, SHA-224, ...) are skipped; BSD-tagged MD5 and
    /// SHA-1 lines pin their names only when nothing stronger does.
    ///
    /// - Parameters:
    ///   - checksumFile: The parsed checksum file.
    ///   - baseURL: An `http`/`https` URL; a `/` is added to its path when it does not end with
    ///     one. Its query, if any, follows each name (`<path>/<name>?<query>`).
    /// - Throws: ``PinFetchError/Code/usage`` (exit 2) when `baseURL` is no such URL or has a
    ///   fragment; when the
    ///   file has no SHA-256 or SHA-512 entry (or only a bare digest, which names no file); when
    ///   a name is absolute, empty, ends in `/` or has an empty, `.` or `..` segment (after a
    ///   leading `./`); when one name is a directory of another; or when one name has two
    ///   different digests of one algorithm.
    package init(checksumFile: ChecksumFile, baseURL: String) throws(PinFetchError) {
        try self.init(checksumFile: checksumFile, baseURLs: [baseURL])
    }

    /// A checksum file under several base URLs: mirrors of one release directory, in order of
    /// preference. Entry `NAME` gets the mirrors `<base><NAME>` for each base, in that order;
    /// otherwise as ``init(checksumFile:baseURL:)``.
    /// - Throws: as ``init(checksumFile:baseURL:)``; also for an empty `baseURLs`.
    package init(checksumFile: ChecksumFile, baseURLs: [String]) throws(PinFetchError) {
        guard !baseURLs.isEmpty else { throw PinFetchError(.usage, "no base URL given") }
        for baseURL in baseURLs where !Self.isURL(baseURL) {
            throw PinFetchError(
                .usage,
                "the base URL must start with http://, https:// or s3://: \(SafeFileName.quoted(baseURL))"
            )
        }
        // A query stays after each name (`…/container?sv=…&sig=…`: a SAS token signs the
        // container's blobs); a fragment would swallow the names appended after it.
        var bases: [(path: String, query: String)] = []
        for baseURL in baseURLs {
            if baseURL.utf8.contains(UInt8(ascii: "#")) {
                throw PinFetchError(
                    .usage,
                    "the base URL has a fragment ('#…'), which would swallow the names appended to it: "
                        + SafeFileName.quoted(Redaction.url(baseURL))
                )
            }
            let question = baseURL.firstIndex(ofASCII: "?") ?? baseURL.endIndex
            let path = String(baseURL[..<question])
            bases.append((path.utf8.last == UInt8(ascii: "/") ? path : path + "/", String(baseURL[question...])))
        }
        if let line = checksumFile.undecodableLines.first {
            throw PinFetchError(
                .usage,
                "checksum file line \(line): the name is not UTF-8, so it cannot name a URL or a file here "
                    + "(convert the file with iconv)"
            )
        }
        guard !checksumFile.entries.isEmpty else {
            if checksumFile.bareDigest != nil {
                throw PinFetchError(.usage, "the checksum file is a single bare digest and names no file to fetch")
            }
            throw PinFetchError(.usage, "the checksum file has no sha256, sha384 or sha512 entries")
        }
        // Names are told apart by their bytes, as the file system does: `café` written as
        // NFC and as NFD are two files (a Swift `String` would take them for one).
        var order: [String] = []
        var groups: [[UInt8]: [ChecksumFile.Entry]] = [:]
        for item in checksumFile.entries {
            let name = try Self.relativeName(item.name, line: item.line)
            if groups[Array(name.utf8)] == nil { order.append(name) }
            groups[Array(name.utf8), default: []].append(item)
        }
        // A name that is a directory of another (`tool` and `tool/README`) cannot be both.
        for name in order {
            var prefix = Substring(name)
            while let slash = prefix.lastIndex(of: "/") {
                prefix = prefix[..<slash]
                guard let file = groups[Array(prefix.utf8)] else { continue }
                throw PinFetchError(
                    .usage,
                    "checksum file lines \(file[0].line) and \(groups[Array(name.utf8)]![0].line): \(SafeFileName.quoted(String(prefix))) "
                        + "is a file and the directory of \(SafeFileName.quoted(name))"
                )
            }
        }
        var entries: [Entry] = []
        for name in order {
            let group = groups[Array(name.utf8)]!
            let best = try ChecksumFile.strongest(of: group, for: name)
            let path = Self.percentEncoded(name)
            entries.append(
                Entry(
                    mirrors: bases.map { $0.path + path + $0.query },
                    pin: best.pin,
                    output: name,
                    line: group[0].line
                )
            )
        }
        self.entries = entries
    }

    /// The entries of `--shard K/N`: entries are numbered from 0 in manifest order, and shard `k`
    /// keeps those whose number modulo `n` is `k` (<doc:CommandLine#Manifests-and-checksum-files>).
    /// - Precondition: `0 <= k < n` (``parseShard(_:)`` checks user input).
    package func shard(_ k: Int, of n: Int) -> Manifest {
        precondition(n >= 1 && k >= 0 && k < n, "shard \(k)/\(n) needs 0 <= K < N")
        var shard = self
        shard.entries = self.entries.enumerated().filter { $0.offset % n == k }.map(\.element)
        return shard
    }

    // MARK: - Parsing

    /// The entry of one line's tokens (comments removed, at least one token).
    private static func entry(_ tokens: [String], line: Int) throws(PinFetchError) -> Entry {
        func fail(_ reason: String) -> PinFetchError {
            PinFetchError(.usage, "manifest line \(line): \(reason)")
        }
        let form = "the form is URL [URL ...] [checksum] [output]"
        let mirrorCount = tokens.prefix(while: { Self.isURL($0) }).count
        guard mirrorCount > 0 else {
            throw fail(
                "expected an http://, https:// or s3:// URL first, not \(SafeFileName.quoted(Redaction.url(tokens[0])))"
            )
        }
        let rest = Array(tokens[mirrorCount...])
        if let url = rest.first(where: { Self.isURL($0) }) {
            throw fail("URL \(SafeFileName.quoted(Redaction.url(url))) after a checksum or output name; \(form)")
        }
        var entry = Entry(mirrors: Array(tokens[..<mirrorCount]), line: line)
        switch rest.count {
        case 0:
            break
        case 1:
            do {
                entry.pin = try Pin(parsing: rest[0])
            } catch {
                guard !Self.looksLikeChecksum(rest[0]) else { throw fail("malformed checksum: \(error.message)") }
                entry.output = rest[0]
            }
        case 2:
            do {
                entry.pin = try Pin(parsing: rest[0])
            } catch {
                guard Self.looksLikeChecksum(rest[0]) else {
                    throw fail("\(SafeFileName.quoted(rest[0])) is not a checksum; \(form)")
                }
                throw fail("malformed checksum: \(error.message)")
            }
            if Self.looksLikeChecksum(rest[1]) || (try? Pin(parsing: rest[1])) != nil {
                throw fail("a second checksum \(SafeFileName.quoted(rest[1])); give one per line")
            }
            entry.output = rest[1]
        default:
            throw fail("\(rest.count) tokens after the URLs; \(form)")
        }
        return entry
    }

    /// Whether `token` starts with `http://`, `https://`, `s3://` or `oci://` (scheme in any
    /// case) and has more.
    static func isURL(_ token: String) -> Bool {
        if S3Location.names(token) || OCILocation.names(token) { return true }
        // ASCII letters to lower case, nothing else: `| 0x20` alone would make 0x0F a "/".
        let bytes = Array(token.utf8.prefix(9)).map { (0x41...0x5A).contains($0) ? $0 | 0x20 : $0 }
        let http = Array("http://".utf8)
        let https = Array("https://".utf8)
        return (bytes.starts(with: http) && token.utf8.count > http.count)
            || (bytes.starts(with: https) && token.utf8.count > https.count)
    }

    /// Algorithm names that mark a `name:` or SRI `name-` prefix as a checksum.
    private static let checksumLabels: Set<String> = [
        "md5", "sha1", "sha-1", "sha224", "sha-224", "sha256", "sha-256", "sha384", "sha-384", "sha512", "sha-512",
    ]

    /// Whether `token` is meant as a checksum: an algorithm label and `:`, an SRI `sha256-`,
    /// `sha384-` or `sha512-` prefix and 20 or more base64 characters (up to an SRI `?` option),
    /// or 32 or more hex digits.
    private static func looksLikeChecksum(_ token: String) -> Bool {
        let bytes = Array(token.utf8)
        if let colon = bytes.firstIndex(of: UInt8(ascii: ":")),
            Self.checksumLabels.contains(String(decoding: bytes[..<colon], as: UTF8.self).lowercased())
        {
            return true
        }
        if let dash = bytes.firstIndex(of: UInt8(ascii: "-")),
            ["sha256", "sha384", "sha512"].contains(String(decoding: bytes[..<dash], as: UTF8.self).lowercased())
        {
            let value = bytes[(dash + 1)...].prefix(while: { $0 != UInt8(ascii: "?") })
            let base64 = value.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                    UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "+"), UInt8(ascii: "/"), UInt8(ascii: "="):
                    true
                default: false
                }
            }
            if base64 && value.count >= 20 { return true }
        }
        return bytes.count >= 32 && token.allSatisfy(\.isHexDigit)
    }

    /// A checksum-file name as a relative URL path: leading `./` removed.
    /// - Throws: ``PinFetchError/Code/usage`` for an empty or absolute name, a `..` segment, or a
    ///   name ending in `/`.
    private static func relativeName(_ name: String, line: Int) throws(PinFetchError) -> String {
        var bytes = Array(name.utf8)[...]
        while bytes.starts(with: [UInt8(ascii: "."), UInt8(ascii: "/")]) { bytes.removeFirst(2) }
        let segments = bytes.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        // Each segment is a directory under -P as well as a URL path segment: none may climb out
        // or be ambiguous (`a//b`, `a/./b` would name one file two ways).
        guard !bytes.isEmpty,
            !segments.contains(where: { $0.isEmpty || $0.elementsEqual("..".utf8) || $0.elementsEqual(".".utf8) })
        else {
            throw PinFetchError(
                .usage,
                "checksum file line \(line): the name \(SafeFileName.quoted(name)) cannot be put under a base URL "
                    + "(it is empty, absolute, ends in '/' or has an empty, '.' or '..' segment)"
            )
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `name` with every byte outside RFC 3986 `pchar` and `/` written as `%XX`.
    private static func percentEncoded(_ name: String) -> String {
        let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:@/".utf8)
        let digits = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        for byte in name.utf8 {
            if allowed.contains(byte) {
                out.append(byte)
            } else {
                out += [UInt8(ascii: "%"), digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// Parses the argument of `--shard K/N` (<doc:CommandLine#Manifests-and-checksum-files>): decimal digits only, with
/// `N >= 1` and `0 <= K < N`.
/// - Throws: ``PinFetchError/Code/usage`` (exit 2) for anything else (signs, spaces, a missing
///   part, a number too large for `Int`, `K >= N`).
package func parseShard(_ text: String) throws(PinFetchError) -> (k: Int, n: Int) {
    let parts = text.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
    guard parts.count == 2,
        parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") } }),
        let k = Int(String(decoding: parts[0], as: UTF8.self)),
        let n = Int(String(decoding: parts[1], as: UTF8.self)),
        n >= 1, k < n
    else {
        throw PinFetchError(.usage, "--shard takes K/N with 0 <= K < N (e.g. 0/4), not \(SafeFileName.quoted(text))")
    }
    return (k, n)
}
