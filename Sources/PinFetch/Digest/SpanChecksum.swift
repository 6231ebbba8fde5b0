internal import CZlib

/// The CRC-32 of a span of a partial that a segmented download wrote ahead of its hash
/// (<doc:ResumeAndCheckpoints#Pieces-ahead-of-the-hash>): taken from the bytes as they are
/// delivered, joined as spans merge, recorded in durable checkpoints, and compared with the
/// whole span read back before a resume keeps it.
///
/// zlib's CRC-32 (the IEEE 802.3 polynomial, as ``CRC32``, which guards the checkpoint record
/// itself and stays pure Swift for the fuzzed parser). It catches torn, lost and stray writes;
/// it is not a security measure: the pin or the server's digest decides what the bytes are.
enum SpanChecksum {
    /// The CRC-32 of `bytes` following `crc` (the CRC-32 of the bytes before them; 0 for none).
    static func update(_ crc: UInt32, with bytes: UnsafeRawBufferPointer) -> UInt32 {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return crc }
        return UInt32(truncatingIfNeeded: crc32_z(UInt(crc), base.assumingMemoryBound(to: UInt8.self), bytes.count))
    }

    /// The CRC-32 of `bytes`.
    static func of(_ bytes: UnsafeRawBufferPointer) -> UInt32 { Self.update(0, with: bytes) }

    /// The CRC-32 of A followed by B, from A's (`first`), B's (`second`) and B's length in bytes.
    static func combine(_ first: UInt32, _ second: UInt32, secondLength: Int64) -> UInt32 {
        // z_off_t is `long`: 64 bits on the 64-bit Linux targets pinfetch builds for.
        UInt32(truncatingIfNeeded: crc32_combine(UInt(first), UInt(second), Int(secondLength)))
    }
}
