import Foundation

/// A minimal gzip (RFC 1952) encoder: stored (uncompressed) deflate blocks plus CRC-32, in pure Swift.
enum TestGzip {
    private static let crcTable: [UInt32] = (0..<256).map { index in
        var crc = UInt32(index)
        for _ in 0..<8 {
            crc = (crc & 1) != 0 ? (0xEDB8_8320 ^ (crc >> 1)) : (crc >> 1)
        }
        return crc
    }

    /// CRC-32 (IEEE 802.3, as used by gzip and zlib) of `bytes`.
    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        self.crcTable.withUnsafeBufferPointer { table in
            bytes.withUnsafeBufferPointer { input in
                var crc: UInt32 = 0xFFFF_FFFF
                for byte in input {
                    crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8)
                }
                return crc ^ 0xFFFF_FFFF
            }
        }
    }

    /// A valid gzip stream whose decompression is `data`.
    static func encode(_ data: [UInt8]) -> [UInt8] {
        let blockSize = 65_535
        var out: [UInt8] = []
        out.reserveCapacity(data.count + (data.count / blockSize + 1) * 5 + 18)
        // ID1 ID2 CM=deflate FLG=0 MTIME=0 XFL=0 OS=255 (unknown)
        out.append(contentsOf: [0x1F, 0x8B, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xFF])
        var offset = 0
        repeat {
            let count = min(blockSize, data.count - offset)
            let isFinal = offset + count == data.count
            out.append(isFinal ? 0x01 : 0x00)  // BFINAL, BTYPE=00 (stored); rest of the byte is padding.
            let length = UInt16(count)
            let complement = ~length
            out.append(contentsOf: [UInt8(length & 0xFF), UInt8(length >> 8)])
            out.append(contentsOf: [UInt8(complement & 0xFF), UInt8(complement >> 8)])
            out.append(contentsOf: data[offset..<(offset + count)])
            offset += count
        } while offset < data.count
        let crc = self.crc32(data)
        let size = UInt32(truncatingIfNeeded: data.count)
        for shift in stride(from: 0, to: 32, by: 8) {
            out.append(UInt8(truncatingIfNeeded: crc >> UInt32(shift)))
        }
        for shift in stride(from: 0, to: 32, by: 8) {
            out.append(UInt8(truncatingIfNeeded: size >> UInt32(shift)))
        }
        return out
    }
}
