import Foundation
import Testing

@_spi(CLI) @testable import PinFetch

/// Ways a checkpoint file can be damaged on disk.
enum DamagedCheckpoint: String, CaseIterable, CustomTestStringConvertible {
    case zeroed112, empty, truncated, garbage, flippedByte, offsetEdited

    var testDescription: String { self.rawValue }

    func apply(to original: [UInt8]) -> [UInt8] {
        switch self {
        case .zeroed112: return [UInt8](repeating: 0, count: 112)
        case .empty: return []
        case .truncated: return Array(original.prefix(original.count / 2))
        case .garbage: return (0..<300).map { UInt8(truncatingIfNeeded: $0 &* 97 &+ 13) }
        case .flippedByte:
            var bytes = original
            bytes[bytes.count / 2] ^= 0x20
            return bytes
        case .offsetEdited:
            let text = String(decoding: original, as: UTF8.self).replacingOccurrences(
                of: "\"offset\":400000",
                with: "\"offset\":300000"
            )
            return Array(text.utf8)
        }
    }
}

/// Leaves `<destination>.part` holding `bytes` and a checkpoint at its end, as an interrupted
/// run of a representation of `total` bytes under `etag` would.
func writePartial(_ bytes: ArraySlice<UInt8>, of total: Int64, to destination: String, url: String, etag: String) throws
{
    let digest = RunningDigest(algorithm: .sha256)
    Array(bytes).withUnsafeBytes { digest.update($0) }
    try Data(bytes).write(to: URL(filePath: destination + ".part"))
    let checkpoint = Checkpoint(
        url: url,
        validator: Validator(entityTag: etag, lastModified: nil),
        totalLength: total,
        offset: Int64(bytes.count),
        algorithm: .sha256,
        hashState: digest.serializedState(),
        hashStateSize: RunningDigest.stateSize(of: .sha256),
        libraryVersion: RunningDigest.libraryVersion
    )
    try Data(checkpoint.encoded()).write(to: URL(filePath: destination + ".part.state"))
}
