import Synchronization

/// Writes the checkpoints of one partial from a snapshot of what it holds (URL, validator,
/// total length, algorithm), so the hashing pipeline's thread never reads the download's state.
///
/// Write order (DESIGN.md): data `fsync` → checkpoint to a temporary file → `fsync` → `rename`.
final class CheckpointWriter: Sendable {
    /// `<dest>.part.state`.
    let path: String
    private let partial: PartialFile
    private let record: Checkpoint
    private let durable: Atomic<Int64>

    /// - Parameters:
    ///   - path: The checkpoint's path.
    ///   - partial: The open partial whose bytes the checkpoints describe.
    ///   - state: The representation the partial holds; `nil` unless it has a validator.
    ///   - url: The mirror that served the partial's bytes (the checkpoint ties them to it).
    ///   - durableOffset: Bytes already covered by a checkpoint on disk.
    init?(path: String, partial: PartialFile, state: PartialState, url: String, durableOffset: Int64) {
        guard let validator = state.validator else { return nil }
        self.path = path
        self.partial = partial
        self.record = Checkpoint(
            url: url,
            validator: validator,
            totalLength: state.totalLength,
            offset: 0,
            algorithm: state.algorithm,
            hashState: [],
            hashStateSize: RunningDigest.stateSize(of: state.algorithm),
            libraryVersion: RunningDigest.libraryVersion
        )
        self.durable = Atomic(durableOffset)
    }

    /// The offset of the last checkpoint written (its bytes are durable).
    var durableOffset: Int64 { self.durable.load(ordering: .acquiring) }

    /// Makes the first `offset` bytes durable and records `state`, the digest after exactly them.
    /// - Throws: ``PinFetchError/Code/fileIO`` when a write or `fsync` fails.
    func write(offset: Int64, state: [UInt8]) throws(PinFetchError) {
        guard offset > 0 else { return }
        try self.partial.synchronize()
        var record = self.record
        record.offset = offset
        record.hashState = state
        record.partialIdentity = try self.partial.identity()
        try FileSystem.replaceAtomically(self.path, with: record.encoded())
        self.durable.store(offset, ordering: .releasing)
    }
}
