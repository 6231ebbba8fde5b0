// libFuzzer target for the checkpoint record and the slots of a state file (built by .ci/fuzz,
// not by SwiftPM).
@testable import PinFetchFuzzParsers

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCheckpoint(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    checkRecords(inStateFile: slotted(bytes))
    guard let checkpoint = Checkpoint(decoding: bytes) else { return 0 }
    precondition(checkpoint.offset >= 0 && checkpoint.hashState.count == checkpoint.hashStateSize)
    if let total = checkpoint.totalLength { precondition(total >= checkpoint.offset) }
    precondition(Checkpoint(decoding: checkpoint.encoded()) == checkpoint, "a record does not round-trip")
    return 0
}

/// The input spread over the three slots of a state file: cut at its first two NUL bytes (a
/// record never holds one; a slot ends with one).
private func slotted(_ bytes: [UInt8]) -> [UInt8] {
    let pieces = bytes.split(separator: 0, maxSplits: 2, omittingEmptySubsequences: false)
    var file: [UInt8] = []
    for (slot, piece) in pieces.enumerated() {
        let start = slot * CheckpointSlots.slotSize
        guard piece.count < CheckpointSlots.slotSize else { return file }
        if file.count < start { file += [UInt8](repeating: 0, count: start - file.count) }
        file += piece + [0]
    }
    return file
}

/// What `CheckpointSlots.records(in:)` promises, whatever the bytes.
private func checkRecords(inStateFile file: [UInt8]) {
    let records = CheckpointSlots.records(in: file)
    precondition(records.durable.count <= 2 && records.light?.sequence == nil)
    let sequences = records.durable.map { $0.sequence ?? 0 }
    precondition(sequences == sequences.sorted(by: >), "durable records out of order")
    if records.durable.count == 2 { precondition(sequences[0] % 2 != sequences[1] % 2, "two records in one slot") }
    // Written back slot by slot, the records read the same.
    var rewritten = [UInt8](repeating: 0, count: CheckpointSlots.maximumSize)
    for record in records.durable {
        guard let bytes = CheckpointSlots.slot(of: record) else { return }
        let start = Int((record.sequence ?? 0) % 2) * CheckpointSlots.slotSize
        rewritten.replaceSubrange(start..<(start + bytes.count), with: bytes)
    }
    if let light = records.light, let bytes = CheckpointSlots.slot(of: light) {
        let start = CheckpointSlots.lightSlot * CheckpointSlots.slotSize
        rewritten.replaceSubrange(start..<(start + bytes.count), with: bytes)
    }
    precondition(CheckpointSlots.records(in: rewritten) == records, "the slots do not round-trip")
}
