/// What a resume can trust of a partial, from the records of its state file
/// (<doc:ResumeAndCheckpoints#The-rolling-hash-checkpoint>).
///
/// 1. The newest durable record whose offset the partial still reaches and whose 64 KiB tail
///    digest still matches the partial; else the one before it; else none (the partial is not
///    trusted: a disk that lost acknowledged bytes, or an edit in place).
/// 2. On top of it, the light record. Written in this boot (``BootID``), of this partial (device
///    and inode) and with its 64 KiB tail still matching, it is trusted as it is: only a power
///    loss or a kernel crash loses written bytes, and either is a new boot. Otherwise, only when
///    the bytes between the two offsets, hashed from the durable record's state, give the light
///    record's digest (a power loss may leave zeros or old bytes there, and then the partial is
///    cut back to the durable offset). Without any durable record, the light span starts at 0.
///
/// A durable record whose hash state cannot be restored here (another OpenSSL), or whose
/// partial was replaced or edited at the same size since (``PartialIdentity``), is hashed again
/// from byte 0. Every byte read back and hashed is counted in ``rehashedBytes``; the 64 KiB
/// tails are not.
struct CheckpointRecovery {
    /// The record to resume from: its offset, representation and mirror.
    var checkpoint: Checkpoint
    /// The digest after exactly `checkpoint.offset` bytes of the partial.
    var digest: RunningDigest
    /// Bytes of the partial read back and hashed to get there.
    var rehashedBytes: Int64
    /// `true` when `checkpoint` is a light record: its bytes were written, not made durable.
    var isLight: Bool
    /// A segmented partial's spans past `checkpoint.offset` that the durable record lists and
    /// that read back whole with their recorded checksums.
    var spans: [CheckedSpans.Span] = []

    /// The resume point, or `nil` when nothing of the partial can be trusted.
    /// - Parameters:
    ///   - records: The state file's intact records.
    ///   - partial: The partial, open for reading.
    ///   - algorithm: The algorithm the download hashes with; records of another are ignored.
    ///   - stateWritten: When the state file was last written (its `st_mtim`, nanoseconds), or
    ///     `nil` when unknown: then no light record is trusted without hashing its span again.
    ///   - isCancelled: Asked while hashing again (a signal ends the run; nothing was changed).
    /// - Throws: ``PinFetchError/Code/fileIO`` when the partial cannot be read;
    ///   ``PinFetchError/Code/cancelled`` when `isCancelled` said so.
    static func recover(
        _ records: CheckpointFile.Records,
        partial: PartialFile,
        algorithm: HashAlgorithm,
        stateWritten: Int64? = nil,
        isCancelled: () -> Bool = { false }
    ) throws(PinFetchError) -> CheckpointRecovery? {
        let size = try partial.size()
        let identity = try partial.identity()
        var base: CheckpointRecovery?
        // A durable record the partial no longer matches: something changed it since, so no
        // light record is taken on trust either.
        var changed = false
        for record in records.durable where record.algorithm == algorithm && record.offset <= size {
            guard try Self.tailMatches(record, partial) else {
                changed = true
                continue
            }
            var digest = Self.restoredDigest(record)
            if digest == nil, record.libraryVersion == RunningDigest.libraryVersion,
                record.hashStateSize == RunningDigest.stateSize(of: algorithm)
            {
                continue  // a state this library wrote that does not restore: inconsistent, never trusted
            }
            var rehashed: Int64 = 0
            if digest == nil || !(record.partialIdentity?.mayDescribe(identity) ?? true) {
                let fresh = RunningDigest(algorithm: algorithm)
                try partial.hash(from: 0, to: record.offset, into: fresh, isCancelled: isCancelled)
                (digest, rehashed) = (fresh, record.offset)
                changed = changed || !(record.partialIdentity?.mayDescribe(identity) ?? true)
            }
            base = CheckpointRecovery(checkpoint: record, digest: digest!, rehashedBytes: rehashed, isLight: false)
            break
        }
        if base == nil {
            // No durable record yet (a run stopped in its first seconds): the light span starts at 0.
            guard records.durable.isEmpty, var start = records.light, start.algorithm == algorithm else { return nil }
            start.offset = 0
            base = CheckpointRecovery(
                checkpoint: start,
                digest: RunningDigest(algorithm: algorithm),
                rehashedBytes: 0,
                isLight: false
            )
        }
        var resumed = base!
        if let light = records.light {
            resumed = try Self.extend(
                resumed,
                to: light,
                partial: partial,
                size: size,
                trusting: !changed ? stateWritten : nil,
                isCancelled: isCancelled
            )
        }
        // Only a durable record lists spans (light ones never do): kept past where the resume
        // starts when the partial reaches them and every byte of the span reads back with the
        // checksum taken as it was delivered (read, not hashed: not in rehashedBytes). A light
        // record may have moved the offset into a span: what is past it is kept.
        let offset = resumed.checkpoint.offset
        let record = base!.checkpoint
        if let spans = record.spans, let checksums = record.spanChecksums {
            for (pair, checksum) in zip(spans, checksums) where pair[1] > offset && pair[1] <= size {
                let start = max(pair[0], offset)
                let before = try partial.checksum(of: pair[0]..<start, isCancelled: isCancelled)
                let kept = try partial.checksum(of: start..<pair[1], isCancelled: isCancelled)
                guard SpanChecksum.combine(before, kept, secondLength: pair[1] - start) == checksum else { continue }
                resumed.spans.append(CheckedSpans.Span(range: start..<pair[1], checksum: kept))
            }
        }
        return resumed.checkpoint.offset > 0 ? resumed : nil
    }

    /// `durable` moved forward to the light record: as it is when it may be trusted (a state file
    /// written at `stateWritten`) and was written in this boot (``isSameBoot(_:_:stateWritten:)``),
    /// else when the bytes between them hash to its
    /// state; else `durable`, with the bytes hashed to find out counted.
    private static func extend(
        _ durable: CheckpointRecovery,
        to light: Checkpoint,
        partial: PartialFile,
        size: Int64,
        trusting stateWritten: Int64?,
        isCancelled: () -> Bool
    ) throws(PinFetchError) -> CheckpointRecovery {
        let start = durable.checkpoint.offset
        guard light.algorithm == durable.checkpoint.algorithm, light.offset > start, light.offset <= size,
            let expected = Self.restoredDigest(light)
        else { return durable }
        if let stateWritten, try Self.isSameBoot(light, partial, stateWritten: stateWritten) {
            return CheckpointRecovery(
                checkpoint: light,
                digest: expected,
                rehashedBytes: durable.rehashedBytes,
                isLight: true
            )
        }
        guard
            let digest = RunningDigest(
                algorithm: light.algorithm,
                restoring: durable.digest.serializedState(),
                offset: start
            )
        else { return durable }
        try partial.hash(from: start, to: light.offset, into: digest, isCancelled: isCancelled)
        let rehashed = durable.rehashedBytes + light.offset - start
        // Compared as digests: the raw contexts may differ in bytes past the buffered block.
        guard digest.finalize() == expected.finalize() else {
            var kept = durable
            kept.rehashedBytes = rehashed
            return kept
        }
        return CheckpointRecovery(checkpoint: light, digest: digest, rehashedBytes: rehashed, isLight: true)
    }

    /// Whether `light` was written in this boot, of this partial, the partial has not changed
    /// since its writer stopped, and its tail still reads back as it did: then every byte it
    /// covers is still the one that was hashed. A download writes its state file at least every
    /// half second while it writes the partial (the light timer fires in a stall too), so a
    /// partial whose change time is more than ``lateChange`` after the state file's last write
    /// was changed by something else since.
    private static func isSameBoot(
        _ light: Checkpoint,
        _ partial: PartialFile,
        stateWritten: Int64
    ) throws(PinFetchError) -> Bool {
        guard let boot = light.bootID, boot == BootID.current, light.tailDigest != nil,
            let recorded = light.partialIdentity
        else { return false }
        let identity = try partial.identity()
        guard identity.device == recorded.device, identity.inode == recorded.inode,
            let changed = partial.changeTime(), changed <= stateWritten + Self.lateChange
        else { return false }
        return try Self.tailMatches(light, partial)
    }

    /// Nanoseconds after the state file's last write that the partial may still have changed
    /// by its own download: the light period (0.5 s) and room for a loaded machine.
    static let lateChange: Int64 = 2_000_000_000

    /// The record's hash state restored, or `nil` when it was written by another library or
    /// does not describe `offset` bytes.
    private static func restoredDigest(_ record: Checkpoint) -> RunningDigest? {
        guard record.libraryVersion == RunningDigest.libraryVersion,
            record.hashStateSize == RunningDigest.stateSize(of: record.algorithm)
        else { return nil }
        return RunningDigest(algorithm: record.algorithm, restoring: record.hashState, offset: record.offset)
    }

    /// Whether the 64 KiB before the record's offset are still what it saw (`true` for records
    /// that do not say).
    private static func tailMatches(_ record: Checkpoint, _ partial: PartialFile) throws(PinFetchError) -> Bool {
        guard let expected = record.tailDigest else { return true }
        return try partial.tailDigest(before: record.offset) == expected
    }
}
