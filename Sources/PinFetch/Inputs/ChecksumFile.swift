/// A parsed checksum file (`SHA256SUMS`, `SHA512SUMS`, `CHECKSUM`, `*.sha256`, ...), for
/// `--checksum-file` and `--base-url` (DESIGN.md, "Command line" and "Many files").
///
/// Accepted lines, each on its own line (LF or CRLF):
/// - GNU coreutils (`sha256sum`): `HEX  name`, `HEX *name` (binary flag), `HEX name` (the
///   `md5 -r` form) and `HEX<TAB>name`. The algorithm follows from the number of hex digits
///   (any case): 64 is SHA-256 and 128 is SHA-512 (so a `b2sum` file reads as SHA-512 and then
///   fails to match: exit 9, never a false pass); 32 (MD5), 40 (SHA-1), 56 (SHA-224) and 96
///   (SHA-384) are recorded as unsupported. A line that starts with `\` has an escaped name:
///   `\\` is a backslash, `\n` a line feed, `\r` a carriage return (coreutils `digest.c`); any
///   other escape makes it no checksum line.
/// - BSD tagged (`sha256sum --tag`, `shasum --tag`, FreeBSD `sha256`, Fedora `CHECKSUM`):
///   `SHA256 (name) = HEX`, also `SHA-256`, `SHA512`, `SHA-512`, and OpenSSL's `dgst` spelling
///   `SHA2-256(name)= HEX`. The name ends at the last `) = ` (or `)= `), so names may hold spaces
///   and parentheses. A supported algorithm also takes its digest in base64 (`cksum --base64`).
///   Any other tag (`MD5`, `SHA1`, `SHA384`, `BLAKE2b`, ...) is recorded as unsupported.
/// - A bare digest: the file's only line is one hex digest (Go's and Kubernetes' `*.sha256`), or
///   its only checksum line names `-` (what `sha256sum < file` writes). It applies to any name.
///
/// Decoding: a UTF-8 byte order mark is dropped; a UTF-16 LE or BE byte order mark makes the file
/// UTF-16 (PowerShell 5 writes that); otherwise UTF-8, with invalid bytes read as U+FFFD.
/// Blank lines, `#` comments and other lines that are not checksum lines are skipped, as is a
/// line that starts with white space (so the indented `hex size path` lines of a Debian `Release`
/// file are not misread as names). An OpenPGP clear-signed wrapper (RFC 4880 §7) is unwrapped:
/// its armor headers and signature block are skipped, dash-escaped lines (`- `) un-escaped, and
/// the signature is not checked. Pure Swift with no C import, so it can be fuzzed on its own.
@_spi(CLI) public struct ChecksumFile: Sendable {
    /// One checksum line of a supported algorithm.
    public struct Entry: Sendable, Hashable {
        /// The file name as written (escapes decoded), e.g. `./dist/app.tar.gz`.
        public var name: String
        /// The digest for that name.
        public var pin: Pin
        /// The 1-based line number in the decoded file, for messages.
        public var line: Int

        /// Creates an entry for `name` with `pin`, found on `line` (1-based).
        public init(name: String, pin: Pin, line: Int) {
            self.name = name
            self.pin = pin
            self.line = line
        }
    }

    /// A checksum line of an algorithm pinfetch does not verify; kept to say so in messages.
    struct UnsupportedEntry: Sendable, Hashable {
        /// The name, or `nil` for a bare digest.
        var name: String?
        /// The algorithm, lower case: `md5`, `sha1`, `sha224`, `sha384`, or a BSD tag as written.
        var algorithm: String
        var line: Int
    }

    /// The checksum lines of SHA-256 and SHA-512, in file order (duplicates kept).
    public var entries: [Entry]
    /// The digest of a bare-digest file, which ``pin(for:)`` returns for any name; `entries` is
    /// then empty.
    public var bareDigest: Pin?
    /// Lines of other algorithms, in file order.
    var unsupportedEntries: [UnsupportedEntry]

    /// The largest checksum file accepted: 16 MiB.
    public static let maximumSize = 16 << 20

    /// Parses the bytes of a checksum file.
    /// - Parameter bytes: The whole file, at most ``maximumSize`` bytes.
    /// - Throws: ``PinFetchError/Code/usage`` (exit 2) when the file is larger than 16 MiB, or has
    ///   no checksum line at all (of any algorithm).
    public init(parsing bytes: [UInt8]) throws(PinFetchError) {
        guard bytes.count <= Self.maximumSize else {
            throw PinFetchError(.usage, "checksum file is larger than 16 MiB (\(bytes.count) bytes)")
        }
        self.entries = []
        self.bareDigest = nil
        self.unsupportedEntries = []
        let text = Self.decodedText(bytes)
        var lines = text.split(separator: 0x0A, omittingEmptySubsequences: false)
        if lines.last?.isEmpty == true { lines.removeLast() }  // the final line feed
        var state = ArmorState.text
        var contentLines: [(bytes: ArraySlice<UInt8>, number: Int)] = []
        for (offset, rawLine) in lines.enumerated() {
            var line = rawLine
            if line.last == 0x0D { line.removeLast() }
            let trimmed = line.trimmingTrailingSpaces()
            switch state {
            case .text where trimmed.elementsEqual(Self.beginSignedMessage):
                state = .armorHeaders
                continue
            case .armorHeaders:
                if trimmed.isEmpty { state = .signedBody }  // `Hash: SHA256` until the blank line
                continue
            case .signature:
                if trimmed.elementsEqual(Self.endSignature) { state = .text }
                continue
            case .text, .signedBody:
                if trimmed.elementsEqual(Self.beginSignature) {
                    state = .signature
                    continue
                }
                if state == .signedBody, line.starts(with: [0x2D, 0x20]) { line.removeFirst(2) }  // "- "
            }
            guard let first = line.first, !trimmed.isEmpty, first != UInt8(ascii: "#") else { continue }
            contentLines.append((line, offset + 1))
            self.addChecksumLine(line, number: offset + 1)
        }
        self.collapseToBareDigest(contentLines: contentLines)
        guard !self.entries.isEmpty || self.bareDigest != nil || !self.unsupportedEntries.isEmpty else {
            throw PinFetchError(
                .usage,
                "no checksum lines in the checksum file (expected 'HEX  name' or 'SHA256 (name) = HEX')"
            )
        }
    }

    /// The pin for `fileName`.
    ///
    /// An entry matches when its name, its name without leading `./`, or (only when nothing
    /// matched that way) its last path component after `/` or `\` equals `fileName`: so
    /// `./dist/app.tar.gz` matches `app.tar.gz`, while `linux/app` and `darwin/app` with different
    /// digests leave `app` ambiguous. Entries of SHA-256 and SHA-512 for one name do not
    /// conflict: the SHA-512 one is returned. A bare digest matches any name.
    ///
    /// - Throws: ``PinFetchError/Code/usage`` (exit 2) when no entry matches; when only entries of
    ///   unsupported algorithms match (naming them); or when two matching entries of one
    ///   algorithm have different digests (the same digest twice is fine).
    public func pin(for fileName: String) throws(PinFetchError) -> Pin {
        let exact = self.entries.filter { Self.names($0.name, exactly: fileName) }
        let matches = exact.isEmpty ? self.entries.filter { Self.lastComponent($0.name) == fileName } : exact
        guard !matches.isEmpty else {
            if let bare = self.bareDigest { return bare }
            let unsupported = self.unsupportedEntries.filter { entry in
                guard let name = entry.name else { return true }
                return Self.names(name, exactly: fileName) || Self.lastComponent(name) == fileName
            }
            var algorithms: [String] = []
            for entry in unsupported where !algorithms.contains(entry.algorithm) { algorithms.append(entry.algorithm) }
            if !algorithms.isEmpty {
                throw PinFetchError(
                    .usage,
                    "the checksum file has only \(algorithms.joined(separator: ", ")) checksums for "
                        + "\(SafeFileName.quoted(fileName)) (pinfetch verifies sha256 and sha512)"
                )
            }
            throw PinFetchError(.usage, "no checksum for \(SafeFileName.quoted(fileName)) in the checksum file")
        }
        return try Self.strongest(of: matches, for: fileName).pin
    }

    /// The entry of the strongest algorithm among `entries` (all for `name`, at least one).
    /// - Throws: ``PinFetchError/Code/usage`` when two entries of one algorithm disagree.
    static func strongest(of entries: [Entry], for name: String) throws(PinFetchError) -> Entry {
        var best = entries[0]
        for entry in entries {
            if let other = entries.first(where: { $0.pin.algorithm == entry.pin.algorithm && $0.pin != entry.pin }) {
                throw PinFetchError(
                    .usage,
                    "two different \(entry.pin.algorithm.rawValue) checksums for \(SafeFileName.quoted(name)) "
                        + "in the checksum file (lines \(entry.line) and \(other.line))"
                )
            }
            if entry.pin.algorithm.digestLength > best.pin.algorithm.digestLength { best = entry }
        }
        return best
    }

    // MARK: - Parsing

    private enum ArmorState {
        case text, armorHeaders, signedBody, signature
    }

    private static let beginSignedMessage = Array("-----BEGIN PGP SIGNED MESSAGE-----".utf8)
    private static let beginSignature = Array("-----BEGIN PGP SIGNATURE-----".utf8)
    private static let endSignature = Array("-----END PGP SIGNATURE-----".utf8)

    /// Names of unsupported algorithms by the number of hex digits of a GNU line.
    private static let unsupportedHexLengths = [32: "md5", 40: "sha1", 56: "sha224", 96: "sha384"]

    /// The file as UTF-8 bytes, after its byte order mark (UTF-8, UTF-16 LE, UTF-16 BE).
    private static func decodedText(_ bytes: [UInt8]) -> [UInt8] {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { return Array(bytes.dropFirst(3)) }
        let bigEndian: Bool
        if bytes.starts(with: [0xFF, 0xFE]) {
            bigEndian = false
        } else if bytes.starts(with: [0xFE, 0xFF]) {
            bigEndian = true
        } else {
            return bytes
        }
        var units: [UInt16] = []
        units.reserveCapacity(bytes.count / 2)
        var index = 2
        while index + 1 < bytes.count {  // an odd last byte is dropped
            let (high, low) = bigEndian ? (bytes[index], bytes[index + 1]) : (bytes[index + 1], bytes[index])
            units.append(UInt16(high) << 8 | UInt16(low))
            index += 2
        }
        return Array(String(decoding: units, as: UTF16.self).utf8)
    }

    /// Adds `line` as an entry or an unsupported entry when it is a GNU or BSD checksum line.
    private mutating func addChecksumLine(_ line: ArraySlice<UInt8>, number: Int) {
        var body = line
        let escaped = body.first == UInt8(ascii: "\\")
        if escaped { body.removeFirst() }
        let parsed = Self.gnuLine(body) ?? Self.taggedLine(body)
        guard let (rawName, digest) = parsed else { return }
        guard let nameBytes = escaped ? Self.unescaped(rawName) : Array(rawName) else { return }
        let name = String(decoding: nameBytes, as: UTF8.self)
        switch digest {
        case .supported(let pin): self.entries.append(Entry(name: name, pin: pin, line: number))
        case .unsupported(let algorithm):
            self.unsupportedEntries.append(UnsupportedEntry(name: name, algorithm: algorithm, line: number))
        }
    }

    private enum LineDigest {
        case supported(Pin)
        case unsupported(String)
    }

    /// `HEX  name`, `HEX *name`, `HEX name`, `HEX\tname`: the raw name and the digest.
    private static func gnuLine(_ line: ArraySlice<UInt8>) -> (ArraySlice<UInt8>, LineDigest)? {
        let hexEnd = line.firstIndex(where: { !Self.isHexDigit($0) }) ?? line.endIndex
        guard hexEnd < line.endIndex, line[hexEnd] == 0x20 || line[hexEnd] == 0x09,
            let digest = Self.hexDigest(line[..<hexEnd])
        else { return nil }
        var nameStart = hexEnd + 1
        if nameStart < line.endIndex, line[nameStart] == 0x20 || line[nameStart] == UInt8(ascii: "*") {
            nameStart += 1
        }
        guard nameStart < line.endIndex else { return nil }
        return (line[nameStart...], digest)
    }

    /// `ALGO (name) = DIGEST` or `ALGO(name)= DIGEST`: the raw name and the digest.
    private static func taggedLine(_ line: ArraySlice<UInt8>) -> (ArraySlice<UInt8>, LineDigest)? {
        guard let open = line.firstIndex(of: UInt8(ascii: "(")) else { return nil }
        var tag = line[..<open]
        if tag.last == 0x20 { tag.removeLast() }
        guard !tag.isEmpty, tag.allSatisfy({ Self.isTagByte($0) }) else { return nil }
        // The name ends at the last ") = " or ")= ".
        var separator: (start: Int, end: Int)?
        var index = line.endIndex - 1
        while index > open {
            if line[index] == UInt8(ascii: ")") {
                let rest = line[(index + 1)...]
                if rest.starts(with: [0x20, 0x3D, 0x20]) {
                    separator = (index, index + 4)
                } else if rest.starts(with: [0x3D, 0x20]) {
                    separator = (index, index + 3)
                }
                if separator != nil { break }
            }
            index -= 1
        }
        guard let separator, separator.start > open + 1 else { return nil }
        let value = line[separator.end...].trimmingTrailingSpaces()
        guard !value.isEmpty, value.allSatisfy({ Self.isBase64Byte($0) }) else { return nil }
        let name = line[(open + 1)..<separator.start]
        let label = String(decoding: tag, as: UTF8.self).lowercased()
        guard let algorithm = Self.taggedAlgorithm(label) else { return (name, .unsupported(label)) }
        let text = String(decoding: value, as: UTF8.self)
        if value.count == algorithm.digestLength * 2, let bytes = Pin.bytes(fromHex: text),
            let pin = try? Pin(algorithm: algorithm, digest: bytes)
        {
            return (name, .supported(pin))
        }
        if let bytes = Self.base64Decoded(text), let pin = try? Pin(algorithm: algorithm, digest: bytes) {
            return (name, .supported(pin))
        }
        return nil
    }

    /// `sha256`, `sha-256`, `sha2-256` and the same for 512 (lower case).
    private static func taggedAlgorithm(_ label: String) -> HashAlgorithm? {
        switch label {
        case "sha256", "sha-256", "sha2-256": .sha256
        case "sha512", "sha-512", "sha2-512": .sha512
        default: nil
        }
    }

    /// The digest of a run of hex digits of a known length, or `nil`.
    private static func hexDigest(_ hex: ArraySlice<UInt8>) -> LineDigest? {
        let algorithm: HashAlgorithm
        switch hex.count {
        case 64: algorithm = .sha256
        case 128: algorithm = .sha512
        default: return Self.unsupportedHexLengths[hex.count].map { .unsupported($0) }
        }
        guard let bytes = Pin.bytes(fromHex: String(decoding: hex, as: UTF8.self)),
            let pin = try? Pin(algorithm: algorithm, digest: bytes)
        else { return nil }
        return .supported(pin)
    }

    /// Decodes a GNU escaped name: `\\` → `\`, `\n` → LF, `\r` → CR; `nil` for any other escape.
    private static func unescaped(_ name: ArraySlice<UInt8>) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(name.count)
        var index = name.startIndex
        while index < name.endIndex {
            let byte = name[index]
            index += 1
            guard byte == UInt8(ascii: "\\") else {
                out.append(byte)
                continue
            }
            guard index < name.endIndex else { return nil }
            switch name[index] {
            case UInt8(ascii: "\\"): out.append(UInt8(ascii: "\\"))
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            default: return nil
            }
            index += 1
        }
        return out
    }

    /// Turns a file whose only content is one hex digest, or whose only checksum line names `-`,
    /// into a bare digest.
    private mutating func collapseToBareDigest(contentLines: [(bytes: ArraySlice<UInt8>, number: Int)]) {
        if self.entries.count == 1, self.unsupportedEntries.isEmpty, self.entries[0].name == "-" {
            self.bareDigest = self.entries.removeFirst().pin
            return
        }
        if self.entries.isEmpty, self.unsupportedEntries.count == 1, self.unsupportedEntries[0].name == "-" {
            self.unsupportedEntries[0].name = nil
            return
        }
        guard self.entries.isEmpty, self.unsupportedEntries.isEmpty, contentLines.count == 1 else { return }
        let line = contentLines[0].bytes.trimmingTrailingSpaces()
        guard line.allSatisfy({ Self.isHexDigit($0) }) else { return }
        switch Self.hexDigest(line) {
        case .supported(let pin): self.bareDigest = pin
        case .unsupported(let algorithm):
            self.unsupportedEntries.append(
                UnsupportedEntry(name: nil, algorithm: algorithm, line: contentLines[0].number)
            )
        case nil: break
        }
    }

    /// Standard base64 (RFC 4648 §4) with padding; `nil` when malformed.
    private static func base64Decoded(_ text: String) -> [UInt8]? {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty, bytes.count % 4 == 0 else { return nil }
        var out: [UInt8] = []
        var buffer: UInt32 = 0
        var bits = 0
        var padding = 0
        for byte in bytes {
            let value: UInt32
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = UInt32(byte - UInt8(ascii: "A"))
            case UInt8(ascii: "a")...UInt8(ascii: "z"): value = UInt32(byte - UInt8(ascii: "a") + 26)
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = UInt32(byte - UInt8(ascii: "0") + 52)
            case UInt8(ascii: "+"): value = 62
            case UInt8(ascii: "/"): value = 63
            case UInt8(ascii: "="):
                padding += 1
                continue
            default: return nil
            }
            guard padding == 0 else { return nil }  // data after padding
            buffer = buffer << 6 | value
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: buffer >> UInt32(bits)))
            }
        }
        guard padding <= 2 else { return nil }
        return out
    }

    /// Whether `name` (or `name` without leading `./`) is `fileName`.
    private static func names(_ name: String, exactly fileName: String) -> Bool {
        if name == fileName { return true }
        var stripped = Substring(name)
        while stripped.utf8.starts(with: [UInt8(ascii: "."), UInt8(ascii: "/")]) { stripped = stripped.dropFirst(2) }
        return stripped == fileName
    }

    /// The part of `name` after its last `/` or `\`.
    private static func lastComponent(_ name: String) -> String {
        let bytes = Array(name.utf8)
        guard let separator = bytes.lastIndex(where: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "\\") }) else {
            return name
        }
        return String(decoding: bytes[(separator + 1)...], as: UTF8.self)
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"),
            UInt8(ascii: "A")...UInt8(ascii: "F"):
            true
        default: false
        }
    }

    /// Letters, digits, `-`, `_` and `/` (as in `SHA512/256`).
    private static func isTagByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "/"):
            true
        default: false
        }
    }

    /// Hex digits and the base64 alphabet with padding.
    private static func isBase64Byte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "+"), UInt8(ascii: "/"), UInt8(ascii: "="):
            true
        default: false
        }
    }
}

extension Collection where Element == UInt8, SubSequence == Self {
    /// Without trailing spaces and tabs.
    fileprivate func trimmingTrailingSpaces() -> SubSequence {
        var end = self.endIndex
        while end > self.startIndex {
            let before = self.index(end, offsetBy: -1)
            guard self[before] == 0x20 || self[before] == 0x09 else { break }
            end = before
        }
        return self[self.startIndex..<end]
    }
}
