import Foundation
import Testing

@testable import PinFetch

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
            // Whatever offset the record has (a light record's need not be the cut's 400000).
            let text = String(decoding: original, as: UTF8.self).replacingOccurrences(
                of: #""offset":(\d+)"#,
                with: #""offset":1$1"#,
                options: .regularExpression
            )
            return Array(text.utf8)
        }
    }

    /// The damage applied to a whole state file: to each of its records in its slot (so no
    /// intact record is left), or to the file itself for the kinds that replace it.
    func apply(toStateFile original: [UInt8]) -> [UInt8] {
        switch self {
        case .zeroed112, .empty, .garbage: return self.apply(to: original)
        case .truncated, .flippedByte, .offsetEdited:
            return mapSlots(of: original) { self.apply(to: $0) }
        }
    }
}

/// `bytes` (a state file) with the record in each slot replaced by `transform` of it.
func mapSlots(of bytes: [UInt8], _ transform: ([UInt8]) -> [UInt8]) -> [UInt8] {
    var result = bytes
    for start in stride(from: 0, to: bytes.count, by: CheckpointFile.slotSize) {
        let slot = bytes[start..<min(bytes.count, start + CheckpointFile.slotSize)]
        let end = slot.firstIndex(of: 0) ?? slot.endIndex
        guard end > start else { continue }
        let replaced = transform(Array(bytes[start..<end])) + [0]
        result.replaceSubrange(start..<min(result.count, start + replaced.count), with: replaced)
    }
    return result
}

/// Rewrites every intact record of the state file at `path` through `change` (the CRC follows).
func rewriteRecords(in path: String, _ change: (inout Checkpoint) -> Void) throws {
    let original = try #require(contents(path))
    let rewritten = mapSlots(of: original) { bytes in
        guard var record = Checkpoint(decoding: bytes) else { return bytes }
        change(&record)
        return record.encoded()
    }
    try Data(rewritten).write(to: URL(filePath: path))
}

/// Leaves `<destination>.part` holding `bytes` and a checkpoint at its end, as an interrupted
/// run of a representation of `total` bytes under `etag` would (`nil`: a body without `Content-Length`).
func writePartial(
    _ bytes: ArraySlice<UInt8>,
    of total: Int64?,
    to destination: String,
    url: String,
    etag: String
) throws {
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

/// What a reboot does to a partial's light checkpoint, as a resume sees it: the record names a
/// boot that is not the running one (``BootID``), so its span is hashed again before it is
/// trusted. Tests that simulate a power loss within one boot (zeros or old bytes where written
/// ones were) call it, since only a new boot can lose written bytes.
func simulateReboot(stateFile path: String) throws {
    let records = try #require(CheckpointFile.read(path), "no state file at \(path)")
    var light = try #require(records.light, "no light record in \(path)")
    light.bootID = "00000000-0000-4000-8000-000000000000"
    try CheckpointFile(path: path).writeLight(light)
}
