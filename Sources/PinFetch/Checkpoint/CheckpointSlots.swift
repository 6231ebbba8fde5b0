/// The layout of `<dest>.part.state` (``CheckpointFile``): three fixed slots, each holding one
/// ``Checkpoint`` record followed by a NUL byte (what follows the NUL is ignored). Pure, so the
/// parser is fuzzed on its own (`.ci/fuzz CheckpointFuzz`).
///
/// ```text
/// offset 0        slot 0: durable record (even sequence numbers)
/// offset 64 KiB   slot 1: durable record (odd sequence numbers)
/// offset 128 KiB  slot 2: light record (no sequence number)
/// ```
///
/// A file of the first format (one record, no slots) reads as its slot 0.
enum CheckpointSlots {
    /// Bytes per slot; a record must be smaller (it is followed by its NUL).
    static let slotSize = Checkpoint.maximumSize
    /// Slot of the light record.
    static let lightSlot = 2
    /// The file's largest size in bytes.
    static let maximumSize = 3 * CheckpointSlots.slotSize

    /// The records a state file holds.
    struct Records: Sendable, Equatable {
        /// The intact durable records, newest (highest ``Checkpoint/sequence``) first.
        var durable: [Checkpoint] = []
        /// The light record, when intact.
        var light: Checkpoint?
        /// The sequence number of the newest intact durable record, or `nil` when there is none.
        var newestSequence: UInt64? { self.durable.first.map { $0.sequence ?? 0 } }
    }

    /// The bytes written to a slot for `record` (the record and its NUL), or `nil` when it does
    /// not fit.
    static func slot(of record: Checkpoint) -> [UInt8]? {
        let bytes = record.encoded()
        return bytes.count < Self.slotSize ? bytes + [0] : nil
    }

    /// Whether `bytes` (the start of a file) look like a state file: some slot starts with a
    /// record's magic, whether or not the record is intact.
    static func looksLikeStateFile(_ bytes: [UInt8]) -> Bool {
        let magic = Checkpoint.magicPrefix
        return stride(from: 0, to: min(bytes.count, Self.maximumSize), by: Self.slotSize)
            .contains { bytes[$0...].starts(with: magic) }
    }

    /// The records in the bytes of a state file.
    static func records(in bytes: [UInt8]) -> Records {
        var records = Records()
        for slot in 0...Self.lightSlot {
            let start = slot * Self.slotSize
            guard start < bytes.count else { break }
            let content = bytes[start..<min(bytes.count, start + Self.slotSize)]
            let end = content.firstIndex(of: 0) ?? content.endIndex
            guard let record = Checkpoint(decoding: Array(content[..<end])) else { continue }
            if slot == Self.lightSlot {
                if record.sequence == nil { records.light = record }
            } else if record.sequence.map({ Int($0 % 2) == slot }) ?? (slot == 0) {
                records.durable.append(record)  // a record in the wrong slot was not written by us
            }
        }
        records.durable.sort { ($0.sequence ?? 0) > ($1.sequence ?? 0) }
        return records
    }

}
