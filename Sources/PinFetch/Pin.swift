import FoundationEssentials
@preconcurrency import Glibc

/// A hash algorithm that pinfetch can pin and checkpoint.
public enum HashAlgorithm: String, Sendable, Hashable, CaseIterable, Codable {
    case sha256
    /// SHA-384 (FIPS 180-4): SHA-512's function with other initial values, cut to 48 bytes;
    /// the algorithm SRI metadata gives most often.
    case sha384
    case sha512
    /// SHA-1 (FIPS 180-4) and MD5 (RFC 1321): taken only when spelled out (`sha1:HEX`,
    /// `md5:HEX`, or a checksum file's `SHA1 (name) = HEX` line with nothing stronger for the
    /// name), with a warning. Both have practical collision attacks (RFC 6151, RFC 9155), so they
    /// catch corruption, not tampering: a file pinned by one never comes from a cache or a
    /// hash-addressed mirror, and goes into no cache.
    case sha1
    case md5

    /// The digest length in bytes: 16 for MD5, 20 for SHA-1, 32 for SHA-256, 48 for SHA-384,
    /// 64 for SHA-512. A longer digest is the stronger algorithm (W3C SRI §3.3.2's order).
    public var digestLength: Int {
        switch self {
        case .md5: 16
        case .sha1: 20
        case .sha256: 32
        case .sha384: 48
        case .sha512: 64
        }
    }

    /// Whether the algorithm has practical collision attacks (MD5, SHA-1): bytes that match
    /// its digest are known to be uncorrupted, not to be the publisher's.
    public var isWeak: Bool { self == .md5 || self == .sha1 }

    /// The one line said when `name` is pinned by a weak algorithm.
    func weakWarning(for name: String) -> String {
        "\(SafeFileName.quoted(name)) is pinned by \(self.rawValue), which catches corruption, not tampering: "
            + "no cache is used for it"
    }
}

/// The digest the user expects the downloaded bytes to have.
///
/// Accepted spellings (<doc:CommandLine#Options>, `--sha256` and `--checksum`): 64 hex digits
/// (SHA-256), 96 (SHA-384) or 128 (SHA-512), any case; `sha256:HEX`, `sha384:HEX`,
/// `sha512:HEX`; `md5:HEX` and `sha1:HEX`, spelled out only (``HashAlgorithm/isWeak``); and
/// Subresource Integrity metadata (`sha256-BASE64`, `sha384-BASE64`,
/// `sha512-BASE64`, W3C SRI §3.5). Of several space-separated tokens the strongest algorithm
/// counts, and bytes that match any of its values pass (SRI §3.3.4: a list may name more than
/// one acceptable representation). Hex is case-insensitive, base64 is not.
public struct Pin: Sendable, Hashable, CustomStringConvertible {
    /// The algorithm the digest was made with.
    public var algorithm: HashAlgorithm
    /// The raw digest: ``HashAlgorithm/digestLength`` bytes. Of an integrity list, its first
    /// value of the strongest algorithm.
    public var digest: [UInt8]
    /// The other values of ``algorithm`` an integrity list gave, in its order (each
    /// ``HashAlgorithm/digestLength`` bytes); bytes matching any of them pass too. Usually empty.
    public var alternatives: [[UInt8]] = []

    /// ``digest`` and then ``alternatives``: every digest that passes.
    public var digests: [[UInt8]] { [self.digest] + self.alternatives }

    /// Whether `digest` (of bytes hashed with ``algorithm``) is one the pin accepts.
    public func matches(_ digest: [UInt8]) -> Bool { self.digests.contains(digest) }

    /// Creates a pin from raw digest bytes.
    /// - Throws: ``PinFetchError/Code/usage`` when `digest` is not `algorithm.digestLength` bytes.
    public init(algorithm: HashAlgorithm, digest: [UInt8]) throws(PinFetchError) {
        guard digest.count == algorithm.digestLength else {
            throw PinFetchError(
                .usage,
                "a \(algorithm.rawValue) digest has \(algorithm.digestLength) bytes, not \(digest.count)"
            )
        }
        self.algorithm = algorithm
        self.digest = digest
    }

    /// Parses the argument of `--sha256`: exactly 64 hex digits, any case, alone or after
    /// `sha256:` (as `sha256sum --tag` and registries write it).
    /// - Throws: ``PinFetchError/Code/usage`` with the reason when `hex` is not that, showing
    ///   what was given and where the other forms go.
    public init(sha256Hex hex: String) throws(PinFetchError) {
        let digits = hex.lowercased().hasPrefix("sha256:") ? hex.dropFirst(7) : Substring(hex)
        guard digits.count == 64, let bytes = Self.bytes(fromHex: String(digits)) else {
            throw PinFetchError(
                .usage,
                "--sha256 takes 64 hex digits (or sha256:HEX), not \(Self.shown(String(digits), digits: 64)); "
                    + "--checksum takes sha384:HEX, sha512:HEX and SRI (sha256-BASE64)"
                    + (digits.allSatisfy(\.isHexDigit) ? Self.weakHint(digits: digits.count) : "")
            )
        }
        try self.init(algorithm: .sha256, digest: bytes)
    }

    /// `text` as a message shows a pin that was given: quoted, cut at 80 characters, with its
    /// length when that is what is wrong. A pin is no secret.
    /// For hex of an MD5's or a SHA-1's length, where that pin goes: `; 32 hex digits is an MD5:
    /// give --checksum md5:HEX`; otherwise nothing.
    static func weakHint(digits: Int) -> String {
        switch digits {
        case 32: "; 32 hex digits is an MD5: give --checksum md5:HEX (it catches corruption, not tampering)"
        case 40: "; 40 hex digits is a SHA-1: give --checksum sha1:HEX (it catches corruption, not tampering)"
        default: ""
        }
    }

    /// With `digits`, the count a digest of the algorithm has: when `text` has that many, the
    /// first character that is not a hex digit is named, since the length is not what is wrong.
    static func shown(_ text: String, digits: Int? = nil) -> String {
        let cut = text.count > 80 ? String(text.prefix(77)) + "..." : text
        if text.count == digits, let index = text.firstIndex(where: { !$0.isHexDigit }) {
            let position = text.distance(from: text.startIndex, to: index) + 1
            return "'\(cut)' (\(text.count) characters, but '\(text[index])' at \(position) is not a hex digit)"
        }
        return "'\(cut)' (\(text.count) characters)"
    }

    /// Parses a `--checksum` spec: `sha256:HEX`, `sha384:HEX`, `sha512:HEX`, bare hex of 64, 96
    /// or 128 digits, or SRI tokens (`sha256-BASE64`, `sha384-BASE64`, `sha512-BASE64`,
    /// several separated by spaces); `md5:HEX` and `sha1:HEX` (``HashAlgorithm/isWeak``: never
    /// bare hex, never SRI).
    /// aria2's `sha-256=HEX` (and `sha-384=`, `sha-512=`, `md5=`, `sha-1=`) is taken as `sha256:HEX`.
    /// - Throws: ``PinFetchError/Code/usage`` naming what is wrong and showing what was given,
    ///   for a malformed spec or one with only unsupported algorithms (e.g. `sha224:`, `sha1-`).
    public init(parsing spec: String) throws(PinFetchError) {
        var trimmed = String(spec.trimmingWhitespace())
        guard !trimmed.isEmpty else { throw PinFetchError(.usage, "empty checksum") }
        if let equals = trimmed.firstIndex(of: "="), !trimmed.contains(":"),
            HashAlgorithm(label: trimmed[..<equals].lowercased()) != nil
                || HashAlgorithm(weakLabel: trimmed[..<equals].lowercased()) != nil,
            trimmed[trimmed.index(after: equals)...].allSatisfy(\.isHexDigit)
        {
            trimmed = trimmed[..<equals] + ":" + trimmed[trimmed.index(after: equals)...]  // aria2's form
        }
        if let colon = trimmed.firstIndex(of: ":") {
            let name = trimmed[..<colon].lowercased()
            let value = String(trimmed[trimmed.index(after: colon)...])
            guard let algorithm = HashAlgorithm(label: name) ?? HashAlgorithm(weakLabel: name) else {
                throw PinFetchError(
                    .usage,
                    "unsupported checksum algorithm '\(name.prefix(40))' in \(Self.shown(spec)) "
                        + "(use sha256:HEX, sha384:HEX, sha512:HEX or SRI; md5:HEX and sha1:HEX with a warning)"
                )
            }
            try self.init(algorithm: algorithm, hex: value)
        } else if trimmed.allSatisfy(\.isHexDigit) {
            switch trimmed.count {
            case 64: try self.init(algorithm: .sha256, hex: trimmed)
            case 96: try self.init(algorithm: .sha384, hex: trimmed)
            case 128: try self.init(algorithm: .sha512, hex: trimmed)
            default:
                throw PinFetchError(
                    .usage,
                    "a hex checksum has 64 (sha256), 96 (sha384) or 128 (sha512) digits, not \(Self.shown(spec))"
                        + Self.weakHint(digits: trimmed.count)
                )
            }
        } else {
            self = try Self.strongestIntegrityToken(in: trimmed)
        }
    }

    private init(algorithm: HashAlgorithm, hex: String) throws(PinFetchError) {
        let expected = algorithm.digestLength * 2
        guard hex.count == expected, let bytes = Self.bytes(fromHex: hex) else {
            throw PinFetchError(
                .usage,
                "a \(algorithm.rawValue) checksum is \(expected) hex digits, not \(Self.shown(hex, digits: expected))"
            )
        }
        try self.init(algorithm: algorithm, digest: bytes)
    }

    /// The values of the strongest supported algorithm of SRI metadata (SRI §3.3.3 and §3.3.4),
    /// the first as ``digest``; tokens of unknown algorithms are skipped, as SRI says, but a
    /// malformed token of a supported one is an error.
    private static func strongestIntegrityToken(in metadata: String) throws(PinFetchError) -> Pin {
        var best: Pin?
        for token in metadata.split(whereSeparator: \.isWhitespace) {
            guard let dash = token.firstIndex(of: "-") else {
                throw PinFetchError(.usage, "malformed checksum '\(token.prefix(80))'")
            }
            guard let algorithm = HashAlgorithm(label: token[..<dash].lowercased()) else { continue }
            var value = token[token.index(after: dash)...]
            if let option = value.firstIndex(of: "?") { value = value[..<option] }  // SRI options
            guard let data = Data(base64Encoded: String(value)), data.count == algorithm.digestLength else {
                throw PinFetchError(.usage, "malformed \(algorithm.rawValue) SRI digest '\(token.prefix(100))'")
            }
            let pin = try Pin(algorithm: algorithm, digest: [UInt8](data))
            if best == nil || pin.algorithm.digestLength > best!.algorithm.digestLength {
                best = pin
            } else if pin.algorithm == best!.algorithm, !best!.matches(pin.digest) {
                best!.alternatives.append(pin.digest)
            }
        }
        guard let best else {
            throw PinFetchError(
                .usage,
                "no supported algorithm in checksum '\(metadata.prefix(80))' (use sha256, sha384 or sha512)"
            )
        }
        return best
    }

    /// The digest as lower-case hex.
    public var hex: String { Self.hex(self.digest) }

    /// `sha256:<hex>`.
    public var description: String { "\(self.algorithm.rawValue):\(self.hex)" }

    /// Lower-case hex of `bytes`.
    public static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func bytes(fromHex hex: String) -> [UInt8]? {
        let utf8 = Array(hex.utf8)
        guard utf8.count % 2 == 0 else { return nil }
        func value(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var out = [UInt8]()
        out.reserveCapacity(utf8.count / 2)
        var index = 0
        while index < utf8.count {
            guard let high = value(utf8[index]), let low = value(utf8[index + 1]) else { return nil }
            out.append(high << 4 | low)
            index += 2
        }
        return out
    }
}

extension HashAlgorithm {
    /// Accepts `sha256`, `sha-256`, `sha384`, `sha-384`, `sha512`, `sha-512` (lower-cased by
    /// the caller).
    init?(label: some StringProtocol) {
        switch label {
        case "sha256", "sha-256": self = .sha256
        case "sha384", "sha-384": self = .sha384
        case "sha512", "sha-512": self = .sha512
        default: return nil
        }
    }

    /// A weak algorithm (``isWeak``) by its name as a `--checksum` label gives it: `md5`,
    /// `sha1`, `sha-1` (lower case). SRI has none (W3C SRI §3.2), so it is asked apart.
    init?(weakLabel label: some StringProtocol) {
        switch label {
        case "md5": self = .md5
        case "sha1", "sha-1": self = .sha1
        default: return nil
        }
    }
}
