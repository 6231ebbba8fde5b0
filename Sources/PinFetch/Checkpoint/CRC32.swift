/// CRC-32 (IEEE 802.3, the zlib/PNG polynomial 0xEDB88320, reflected), in pure Swift so the
/// checkpoint parser has no C import and can be fuzzed on its own. Guards the checkpoint
/// record against torn or stray writes; it is not a security measure.
enum CRC32 {
    private static let table: [UInt32] = (0..<256).map { index in
        var value = UInt32(index)
        for _ in 0..<8 { value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
        return value
    }

    /// The CRC-32 of `bytes`; `CRC32.checksum("123456789".utf8) == 0xCBF43926`.
    static func checksum(_ bytes: some Sequence<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes { crc = Self.table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return crc ^ 0xFFFF_FFFF
    }
}
