/// Parsing of checksum files: the line forms (GNU, BSD tags, bare digests), the PGP armour, and
/// the text encodings (UTF-8 with or without a BOM, UTF-16).
extension ChecksumFile {
    enum ArmorState {
        case text, armorHeaders, signedBody, signature
    }

    static let beginSignedMessage = Array("-----BEGIN PGP SIGNED MESSAGE-----".utf8)
    static let beginSignature = Array("-----BEGIN PGP SIGNATURE-----".utf8)
    static let endSignature = Array("-----END PGP SIGNATURE-----".utf8)

    /// Names of unsupported algorithms by the number of hex digits of a GNU line.
    static let unsupportedHexLengths = [32: "md5", 40: "sha1", 56: "sha224"]

    /// The file as UTF-8 bytes, after its byte order mark (UTF-8, UTF-16 LE, UTF-16 BE).
    static func decodedText(_ bytes: [UInt8]) -> [UInt8] {
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
    mutating func addChecksumLine(_ line: ArraySlice<UInt8>, number: Int) {
        var body = line
        let escaped = body.first == UInt8(ascii: "\\")
        if escaped { body.removeFirst() }
        let parsed = Self.gnuLine(body) ?? Self.taggedLine(body)
        guard let (rawName, digest) = parsed else { return }
        guard let nameBytes = escaped ? Self.unescaped(rawName) : Array(rawName) else { return }
        guard let name = String(validating: nameBytes, as: UTF8.self) else {
            // Decoded leniently it would become another name (U+FFFD in place of each bad byte).
            self.undecodableLines.append(number)
            return
        }
        switch digest {
        case .supported(let pin): self.entries.append(Entry(name: name, pin: pin, line: number))
        case .unsupported(let algorithm):
            self.unsupportedEntries.append(UnsupportedEntry(name: name, algorithm: algorithm, line: number))
        }
    }

    enum LineDigest {
        case supported(Pin)
        case unsupported(String)
    }

    /// `HEX  name`, `HEX *name`, `HEX name`, `HEX\tname`: the raw name and the digest.
    static func gnuLine(_ line: ArraySlice<UInt8>) -> (ArraySlice<UInt8>, LineDigest)? {
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
    static func taggedLine(_ line: ArraySlice<UInt8>) -> (ArraySlice<UInt8>, LineDigest)? {
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
        // Hex digits only are hex (of the wrong length here), never base64: 64 hex digits under
        // `SHA384` would decode as base64 to 48 bytes that no tool wrote.
        guard !value.allSatisfy({ Self.isHexDigit($0) }) else { return nil }
        if let bytes = Self.base64Decoded(text), let pin = try? Pin(algorithm: algorithm, digest: bytes) {
            return (name, .supported(pin))
        }
        return nil
    }

    /// `sha256`, `sha-256`, `sha2-256` and the same for 384 and 512; `sha1`, `sha-1` and `md5`,
    /// whose tag spells them out (``HashAlgorithm/isWeak``; a GNU line of 32 or 40 hex digits
    /// does not); lower case.
    static func taggedAlgorithm(_ label: String) -> HashAlgorithm? {
        switch label {
        case "sha256", "sha-256", "sha2-256": .sha256
        case "sha384", "sha-384", "sha2-384": .sha384
        case "sha512", "sha-512", "sha2-512": .sha512
        case "sha1", "sha-1": .sha1
        case "md5": .md5
        default: nil
        }
    }

    /// The digest of a run of hex digits of a known length, or `nil`.
    static func hexDigest(_ hex: ArraySlice<UInt8>) -> LineDigest? {
        let algorithm: HashAlgorithm
        switch hex.count {
        case 64: algorithm = .sha256
        case 96: algorithm = .sha384
        case 128: algorithm = .sha512
        default: return Self.unsupportedHexLengths[hex.count].map { .unsupported($0) }
        }
        guard let bytes = Pin.bytes(fromHex: String(decoding: hex, as: UTF8.self)),
            let pin = try? Pin(algorithm: algorithm, digest: bytes)
        else { return nil }
        return .supported(pin)
    }

    /// Decodes a GNU escaped name: `\\` → `\`, `\n` → LF, `\r` → CR; `nil` for any other escape.
    static func unescaped(_ name: ArraySlice<UInt8>) -> [UInt8]? {
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
    mutating func collapseToBareDigest(contentLines: [(bytes: ArraySlice<UInt8>, number: Int)]) {
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
    static func base64Decoded(_ text: String) -> [UInt8]? {
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
    static func names(_ name: String, exactly fileName: String) -> Bool {
        // By bytes: a name in NFD is another file than the same name in NFC.
        name.utf8.elementsEqual(fileName.utf8) || Self.withoutDotSlash(name).utf8.elementsEqual(fileName.utf8)
    }

    /// `name` without its leading `./`s, stripped by byte: `./` and a combining mark after it
    /// (`"./\u{301}x"`) keep the mark.
    static func withoutDotSlash(_ name: String) -> Substring {
        var stripped = Substring(name)
        while stripped.utf8.starts(with: [UInt8(ascii: "."), UInt8(ascii: "/")]) {
            stripped = stripped[stripped.utf8.index(stripped.startIndex, offsetBy: 2)...]
        }
        return stripped
    }

    /// Whether the ``lastComponent(_:)`` of `name` is `fileName`, byte for byte.
    static func names(_ name: String, inLastComponent fileName: String) -> Bool {
        Self.lastComponent(name).utf8.elementsEqual(fileName.utf8)
    }

    /// The part of `name` after its last `/` or `\`.
    static func lastComponent(_ name: String) -> String {
        let bytes = Array(name.utf8)
        guard let separator = bytes.lastIndex(where: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "\\") }) else {
            return name
        }
        return String(decoding: bytes[(separator + 1)...], as: UTF8.self)
    }

    static func isHexDigit(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"),
            UInt8(ascii: "A")...UInt8(ascii: "F"):
            true
        default: false
        }
    }

    /// Letters, digits, `-`, `_` and `/` (as in `SHA512/256`).
    static func isTagByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "/"):
            true
        default: false
        }
    }

    /// Hex digits and the base64 alphabet with padding.
    static func isBase64Byte(_ byte: UInt8) -> Bool {
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
    func trimmingTrailingSpaces() -> SubSequence {
        var end = self.endIndex
        while end > self.startIndex {
            let before = self.index(end, offsetBy: -1)
            guard self[before] == 0x20 || self[before] == 0x09 else { break }
            end = before
        }
        return self[self.startIndex..<end]
    }
}
