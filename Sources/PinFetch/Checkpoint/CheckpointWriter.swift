import Synchronization

/// Writes the checkpoints of one partial from a snapshot of what it holds (URL, validator,
/// total length, algorithm), so the hashing pipeline's threads never read the download's state.
///
/// Two kinds (<doc:ResumeAndCheckpoints#The-rolling-hash-checkpoint>): a durable checkpoint makes the data
/// durable first (`fsync(.part)`), then its record (``CheckpointFile/writeDurable(_:)``); a light
/// one only records where the written bytes end and the hash state there, without `fsync`. A
/// durable one also keeps the partial's identity and the SHA-256 of the 64 KiB before its
/// offset, read back from the partial. A light and a durable checkpoint may be written at once,
/// from two threads.
final class CheckpointWriter: Sendable {
    /// Which kind of checkpoint.
    enum Kind: Sendable {
        /// Data and record made durable with `fsync`.
        case durable
        /// Record written after the data, nothing made durable.
        case light
    }

    let file: CheckpointFile
    private let partial: PartialFile
    private let record: Checkpoint
    private let durable: Atomic<Int64>
    /// For a segmented partial: the spans written ahead that begin at or past an offset.
    private let spans = Mutex<(@Sendable (Int64) -> [CheckedSpans.Span])?>(nil)
    /// Set once pieces from other mirrors may land in the partial (``markMixedSources()``).
    private let mixed = Atomic<Bool>(false)
    /// Set once a segmented phase began (``markPieced()``).
    private let pieced = Atomic<Bool>(false)

    /// The checkpoints of a body; `nil` when the partial cannot be resumed (no
    /// validator) or its record would not fit in a slot (a URL of tens of KiB).
    /// - Parameters:
    ///   - path: The state file's path.
    ///   - partial: The open partial whose bytes the checkpoints describe.
    ///   - state: The representation the partial holds.
    ///   - source: The mirror that served the partial's bytes (the checkpoint ties them to it,
    ///     keeping only its redacted form, ``Redaction/url(_:)``).
    ///   - durableOffset: Bytes already covered by a durable checkpoint on disk.
    init?(path: String, partial: PartialFile, state: PartialState, source: String, durableOffset: Int64) {
        guard let validator = state.validator else { return nil }
        var record = Checkpoint(
            url: Redaction.url(source),
            validator: validator,
            totalLength: state.totalLength,
            offset: 0,
            algorithm: state.algorithm,
            hashState: [],
            hashStateSize: RunningDigest.stateSize(of: state.algorithm),
            libraryVersion: RunningDigest.libraryVersion
        )
        record.location = state.location
        record.mixedSources = state.mixedSources ? true : nil
        record.pieced = state.pieced ? true : nil
        record.failure = state.failure
        guard Self.fitsSlot(record) else { return nil }
        self.file = CheckpointFile(path: path)
        self.partial = partial
        self.record = record
        self.durable = Atomic(durableOffset)
    }

    /// The largest record a writer that starts from `record` produces: the full hash state,
    /// the partial's identity, the tail digest, the sequence, the boot id and a failure.
    private static func largest(from record: Checkpoint) -> Checkpoint {
        var largest = record
        largest.offset = .max
        largest.hashStateSize = RunningDigest.stateSize(of: record.algorithm)
        largest.hashState = [UInt8](repeating: 0xFF, count: largest.hashStateSize)
        largest.partialIdentity = PartialIdentity(device: .max, inode: .max, size: .max, modified: .max)
        largest.tailDigest = [UInt8](repeating: 0xFF, count: HashAlgorithm.sha256.digestLength)
        largest.sequence = .max
        largest.bootID = String(repeating: "f", count: 36)
        largest.failure = Checkpoint.Failure(offset: .max, signature: "protocolViolation/\(Int.max)")
        largest.mixedSources = true
        largest.pieced = true
        return largest
    }

    /// The encoded size of the largest record whose URL and validator are empty, in bytes
    /// (measured once).
    private static let fixedSize: Int = {
        var empty = Checkpoint(
            url: "",
            validator: Validator(entityTag: "", lastModified: ""),
            totalLength: .max,
            offset: 0,
            algorithm: .sha512,
            hashState: [],
            hashStateSize: 0,
            libraryVersion: .max
        )
        empty = CheckpointWriter.largest(from: empty)
        return empty.encoded().count
    }()

    /// Whether every record a writer that starts from `record` produces fits in a slot. A bound
    /// first, so a file's first request encodes nothing: the empty record's size plus 6 bytes
    /// for each byte of the URL and the validator (JSON's longest escape, `\u00XX`); the largest
    /// record itself only when the bound does not hold.
    private static func fitsSlot(_ record: Checkpoint) -> Bool {
        let variable =
            record.url.utf8.count + (record.location?.utf8.count ?? 0) + (record.validator.entityTag?.utf8.count ?? 0)
            + (record.validator.lastModified?.utf8.count ?? 0)
        if Self.fixedSize + 6 * variable + 64 < CheckpointFile.slotSize { return true }
        return CheckpointFile.fits(Self.largest(from: record))
    }

    /// From now on the partial is written out of order: durable records list `source(offset)`,
    /// the spans written past their offset with their checksums, and no ``PartialIdentity``
    /// (pieces land after the record at the same size, which would read as an edit in place);
    /// `nil`: in order again (one stream writes over what was ahead).
    func recordSpans(_ source: (@Sendable (Int64) -> [CheckedSpans.Span])?) {
        self.spans.withLock { $0 = source }
    }

    /// From now on the partial may hold bytes of other mirrors (a pinned segmented fetch): every
    /// record says so (``Checkpoint/mixedSources``), and only a pinned run resumes it.
    func markMixedSources() { self.mixed.store(true, ordering: .releasing) }

    /// From now on the partial may hold pieces of several answers (a segmented phase): every
    /// record says so (``Checkpoint/pieced``).
    func markPieced() { self.pieced.store(true, ordering: .releasing) }

    /// The offset of the last durable checkpoint written.
    var durableOffset: Int64 { self.durable.load(ordering: .acquiring) }

    /// Records that the first `offset` bytes of the partial hash to `state`; a durable
    /// checkpoint makes those bytes durable first.
    /// - Throws: ``PinFetchError/Code/fileIO`` when a read, write or `fsync` fails.
    func write(_ kind: Kind, offset: Int64, state: [UInt8]) throws(PinFetchError) {
        guard offset > 0 else { return }
        var record = self.record
        record.offset = offset
        record.hashState = state
        if self.mixed.load(ordering: .acquiring) { record.mixedSources = true }
        if self.pieced.load(ordering: .acquiring) { record.pieced = true }
        switch kind {
        case .durable:
            // Spans read before the fsync: every byte they list is durable once it returns. A span
            // that began before the offset is not listed (its checksum covers hashed bytes too).
            let spans = self.spans.withLock { $0 }.map { source in
                source(offset).filter { $0.range.lowerBound >= offset }
            }
            try self.partial.synchronize()
            record.spans = spans?.map { [$0.range.lowerBound, $0.range.upperBound] }
            record.spanChecksums = spans?.map(\.checksum)
            record.partialIdentity = spans == nil ? try self.partial.identity() : nil
            // A long URL leaves less room: the farthest spans go first (a resume fetches them again).
            while let kept = record.spans, !kept.isEmpty, !CheckpointFile.fits(record) {
                record.spans = Array(kept.prefix(kept.count / 2))
                record.spanChecksums = record.spanChecksums.map { Array($0.prefix(kept.count / 2)) }
            }
            record.tailDigest = try self.partial.tailDigest(before: offset)
            try self.file.writeDurable(record)
            self.durable.store(offset, ordering: .releasing)
        case .light:
            // The tail (64 KiB read back from the page cache), the partial's identity and the
            // boot: what a resume in the same boot checks instead of hashing the span again.
            record.tailDigest = try self.partial.tailDigest(before: offset)
            record.partialIdentity = try self.partial.identity()
            record.bootID = BootID.current
            try self.file.writeLight(record)
        }
    }
}
