import FoundationEssentials

/// A minisign or OpenBSD signify public key (`minisign.pub`, `key.pub`): an optional
/// `untrusted comment:` line, then base64 of 42 bytes: the algorithm `Ed`, an 8-byte key ID and
/// the 32-byte Ed25519 key (minisign's and signify's shared format). The key alone on one line,
/// as `minisign -P` takes it, is accepted too.
///
/// Pure Swift without C imports, so the libFuzzer target (`MinisignFuzz`) compiles it alone.
struct MinisignPublicKey: Hashable, Sendable {
    /// The 8-byte key ID, as stored (minisign prints it as 16 hex digits, last byte first).
    let keyID: [UInt8]
    /// The 32-byte Ed25519 public key.
    let key: [UInt8]

    /// The key ID as minisign and signify print it: upper-case hex, most significant byte first.
    var keyIDText: String { Self.keyIDText(self.keyID) }

    static func keyIDText(_ id: [UInt8]) -> String { Pin.hex(id.reversed()).uppercased() }

    /// Whether `bytes` look like a minisign or signify key file (an `untrusted comment:` line, or
    /// one line of base64 beginning with `RW`, which is `Ed` encoded).
    static func looksLike(_ bytes: [UInt8]) -> Bool {
        let lines = MinisignText.lines(bytes)
        guard let first = lines.first else { return false }
        return first.hasPrefix("untrusted comment:") || (lines.count == 1 && first.hasPrefix("RW"))
    }

    /// - Throws: ``PinFetchError/Code/usage`` with a one-line reason for anything else.
    init(parsing bytes: [UInt8]) throws(PinFetchError) {
        guard bytes.count <= MinisignText.largestFile else {
            throw PinFetchError(.usage, "not a minisign public key (over \(MinisignText.largestFile) bytes)")
        }
        var lines = MinisignText.lines(bytes)
        if lines.first?.hasPrefix("untrusted comment:") == true { lines.removeFirst() }
        guard lines.count == 1, let decoded = MinisignText.base64(lines[0]) else {
            throw PinFetchError(.usage, "not a minisign public key (a comment line, then one line of base64)")
        }
        guard decoded.count == 42 else {
            throw PinFetchError(.usage, "not a minisign public key (\(decoded.count) bytes, not 42)")
        }
        guard decoded[0] == UInt8(ascii: "E"), decoded[1] == UInt8(ascii: "d") else {
            throw PinFetchError(.usage, "a minisign public key for an algorithm other than Ed25519")
        }
        self.keyID = Array(decoded[2..<10])
        self.key = Array(decoded[10..<42])
    }
}

/// The text rules minisign's files share.
enum MinisignText {
    /// The most bytes a key or signature file may have (a trusted comment is short).
    static let largestFile = 16 << 10

    /// The lines of `bytes` (UTF-8, after a byte order mark), without `\r\n` or `\n` ends and
    /// without last empty lines; `[]` when a line is not UTF-8. Split as bytes: in a `String`,
    /// `\r\n` is one `Character` and would not split at `\n`.
    static func lines(_ bytes: [UInt8]) -> [String] {
        var bytes = bytes[...]
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        var lines: [String] = []
        for raw in bytes.split(separator: 0x0A, omittingEmptySubsequences: false) {
            guard let line = String(validating: raw.last == 0x0D ? raw.dropLast() : raw, as: UTF8.self) else {
                return []
            }
            lines.append(line)
        }
        while lines.last?.isEmpty == true { lines.removeLast() }
        return lines
    }

    /// The bytes of one line of standard base64 (with padding), or `nil`.
    static func base64(_ line: String) -> [UInt8]? {
        let trimmed = line.trimmingSuffix(while: { $0 == " " || $0 == "\t" })
        guard !trimmed.isEmpty, let data = Data(base64Encoded: String(trimmed)) else { return nil }
        return Array(data)
    }
}

extension String {
    fileprivate func trimmingSuffix(while predicate: (Character) -> Bool) -> Substring {
        var end = self.endIndex
        while end > self.startIndex, predicate(self[self.index(before: end)]) { end = self.index(before: end) }
        return self[..<end]
    }
}
