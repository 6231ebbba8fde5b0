import FoundationEssentials

/// OpenPGP public keys as `--trusted-key` gives them: ASCII armour (RFC 4880 §6.2)
/// is taken off here, its CRC-24 checked (§6.1), since `gpgv` reads binary keyrings only; the
/// packets (§4.2) are walked to check that the data is public keys and to find their
/// fingerprints. Pure Swift without C imports.
enum OpenPGPArmor {
    static let begin = "-----BEGIN PGP PUBLIC KEY BLOCK-----"
    static let end = "-----END PGP PUBLIC KEY BLOCK-----"
    static let secret = "-----BEGIN PGP PRIVATE KEY BLOCK-----"

    /// The binary packets of a public key file, armoured or not, checked to begin with a public
    /// key packet (tag 6) and to be whole packets.
    /// - Throws: ``PinFetchError/Code/usage`` with a one-line reason.
    static func publicKeyPackets(_ bytes: [UInt8]) throws(PinFetchError) -> [UInt8] {
        let text = String(decoding: bytes, as: UTF8.self)
        let secret = PinFetchError(.usage, "a secret key: give the public key (gpg --export, minisign's .pub)")
        if text.contains(Self.secret) { throw secret }
        let packets = text.contains(Self.begin) ? try Self.dearmored(bytes) : bytes
        let parsed = try Self.packets(packets)
        if parsed.first?.tag == 5 { throw secret }
        guard parsed.first?.tag == 6 else {
            throw PinFetchError(.usage, "not a minisign, signify or OpenPGP public key")
        }
        return packets
    }

    /// The bytes inside the armoured blocks of `bytes` (several keys exported together give
    /// several), one after another: each block's base64 lines between the headers' blank line and
    /// the `=` checksum line, whose CRC-24 must match.
    static func dearmored(_ bytes: [UInt8]) throws(PinFetchError) -> [UInt8] {
        let lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false).map { raw in
            String(decoding: raw, as: UTF8.self).trimmingSpaces()
        }
        var packets: [UInt8] = []
        var index = 0
        while let start = lines[index...].firstIndex(of: Self.begin) {
            guard let stop = lines[start...].firstIndex(of: Self.end) else { break }
            packets += try Self.block(lines[(start + 1)..<stop])
            index = stop + 1
        }
        guard !packets.isEmpty else {
            throw PinFetchError(.usage, "an OpenPGP key block without its BEGIN and END lines")
        }
        return packets
    }

    /// The bytes of one armoured block's lines (between BEGIN and END).
    private static func block(_ lines: ArraySlice<String>) throws(PinFetchError) -> [UInt8] {
        let stop = lines.endIndex
        var index = lines.startIndex
        while index < stop, !lines[index].isEmpty, lines[index].contains(":") { index += 1 }  // Version: ...
        var body = ""
        var checksum: String?
        for line in lines[index..<stop] where !line.isEmpty {
            if line.hasPrefix("=") {
                checksum = String(line.dropFirst())
                break
            }
            body += line
        }
        guard let data = Data(base64Encoded: body), !data.isEmpty else {
            throw PinFetchError(.usage, "an OpenPGP key block whose base64 is broken")
        }
        let decoded = Array(data)
        if let checksum {
            guard let crc = Data(base64Encoded: checksum), crc.count == 3,
                Array(crc) == Self.crc24Bytes(decoded)
            else { throw PinFetchError(.usage, "an OpenPGP key block whose CRC-24 does not match") }
        }
        return decoded
    }

    /// CRC-24 of RFC 4880 §6.1, as its three bytes (most significant first).
    static func crc24Bytes(_ bytes: [UInt8]) -> [UInt8] {
        var crc: UInt32 = 0xB7_04CE
        for byte in bytes {
            crc ^= UInt32(byte) << 16
            for _ in 0..<8 {
                crc <<= 1
                if crc & 0x100_0000 != 0 { crc ^= 0x186_4CFB }
            }
        }
        crc &= 0xFF_FFFF
        return [UInt8(crc >> 16), UInt8((crc >> 8) & 0xFF), UInt8(crc & 0xFF)]
    }

    /// One packet: its tag and body.
    struct Packet {
        let tag: Int
        let body: ArraySlice<UInt8>
    }

    /// The packets of `bytes` (old and new formats, RFC 4880 §4.2; partial lengths refused, as
    /// key packets never use them).
    /// - Throws: ``PinFetchError/Code/usage`` for bytes that are not whole packets.
    static func packets(_ bytes: [UInt8]) throws(PinFetchError) -> [Packet] {
        let broken = PinFetchError(.usage, "not a minisign, signify or OpenPGP public key (broken packets)")
        var packets: [Packet] = []
        var index = 0
        while index < bytes.count {
            let header = bytes[index]
            guard header & 0x80 != 0 else { throw broken }
            var tag: Int
            var length: Int
            index += 1
            func byte() throws(PinFetchError) -> Int {
                guard index < bytes.count else { throw broken }
                defer { index += 1 }
                return Int(bytes[index])
            }
            if header & 0x40 != 0 {  // new format
                tag = Int(header & 0x3F)
                let first = try byte()
                switch first {
                case 0..<192: length = first
                case 192..<224: length = ((first - 192) << 8) + (try byte()) + 192
                case 255: length = try (byte() << 24) | (byte() << 16) | (byte() << 8) | byte()
                default: throw broken  // a partial body length
                }
            } else {
                tag = Int((header >> 2) & 0x0F)
                switch header & 0x03 {
                case 0: length = try byte()
                case 1: length = try (byte() << 8) | byte()
                case 2: length = try (byte() << 24) | (byte() << 16) | (byte() << 8) | byte()
                default: throw broken  // indeterminate length
                }
            }
            guard length >= 0, length <= bytes.count - index else { throw broken }
            packets.append(Packet(tag: tag, body: bytes[index..<(index + length)]))
            index += length
        }
        return packets
    }
}

extension String {
    /// Without spaces, tabs and a carriage return at either end.
    fileprivate func trimmingSpaces() -> String {
        let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" }
        return String(self.drop(while: blank).reversed().drop(while: blank).reversed())
    }
}
