import FoundationEssentials
@preconcurrency import Glibc

/// The partial `<dest>.part` of one download and everything that keeps it honest: what it holds
/// (``PartialState``), the running digest of its first ``PartialState/offset`` bytes, its
/// checkpoints (Resume and checkpoints, in the documentation catalog), and the spans a segmented
/// phase wrote ahead.
///
/// The steps of a download change the partial only through this type: the attempt's
/// ``AnswerReader`` as an answer comes, the attempt loop between answers, verification after a
/// mismatch. Invariants: ``PartialState/offset`` bytes are covered by ``digest`` whenever no body
/// is streaming; a checkpoint on disk never describes more bytes than were `fsync`ed
/// (``durableOffset``); a checkpoint never outlives its bytes.
final class Partial {
    let sidecars: Sidecars
    /// Whether a pin decides at the end (a partial without any validator is resumable then).
    let pinned: Bool
    let options: FetchOptions
    /// What the partial holds.
    var state: PartialState
    var digest: RunningDigest
    /// The open partial, once there is one.
    private(set) var file: PartialFile?
    /// The mirror the next answer comes from: the source a new representation is recorded with.
    var mirror: String
    /// Offset of the last durable checkpoint written (its bytes are durable).
    var durableOffset: Int64 = 0
    /// Spans past ``PartialState/offset`` written by a segmented phase and kept for a resume
    /// (recorded in durable checkpoints); `nil` for a partial written in order.
    var writtenAhead: CheckedSpans?
    /// How the run that left the restored partial failed with it (``RepeatedFailure``), until
    /// an attempt of this run failed the same way or got past it.
    var previousFailure: Checkpoint.Failure?
    /// A restart from byte 0 was decided: the next GET goes without `Range`, and the partial is
    /// emptied only once its answer is taken (so a failure before that keeps it resumable).
    var restartPending = false
    /// Where the partial stood when another mirror's bytes were first appended to it (a pinned
    /// cross-mirror resume): what a mismatch goes back to instead of byte 0.
    private(set) var handOver: HandOver?
    /// GCS's `x-goog-hash` MD5 of the object and the MD5 of this run's body from byte 0, while
    /// one answer delivers it whole (``CrossCheckDigest``); `nil` otherwise.
    private(set) var crossCheck: (expected: [UInt8], digest: CrossCheckDigest)?
    /// The file turned out larger than ``FetchOptions/maximumFileSize``: the partial goes.
    private(set) var oversized = false
    /// Body bytes answers wrote to the partial in this run.
    var receivedBytes: Int64 = 0
    /// Bytes read back from disk to rebuild or confirm a digest (`rehashed_bytes`).
    var rehashedBytes: Int64 = 0
    /// Restarts from byte 0 (`restarts`).
    private(set) var restarts = 0
    /// The offset up to which the kernel was asked to start writing the partial back.
    private var writebackOffset: Int64 = 0

    init(destination: String, pinned: Bool, options: FetchOptions, algorithm: HashAlgorithm, mirror: String) {
        self.sidecars = Sidecars(destination: destination)
        self.pinned = pinned
        self.options = options
        self.state = PartialState(algorithm: algorithm)
        self.digest = RunningDigest(algorithm: algorithm)
        self.mirror = mirror
    }

    /// Hashes with `algorithm` from now on (nothing hashed yet).
    func use(_ algorithm: HashAlgorithm) {
        guard algorithm != self.state.algorithm else { return }
        self.state.algorithm = algorithm
        self.digest = RunningDigest(algorithm: algorithm)
    }

    // MARK: - Taking over an earlier run's partial

    /// Takes over a partial at the recovered checkpoint: cuts off the bytes past it (no
    /// checkpoint covers them) and continues its digest. A light checkpoint is made durable, and
    /// a cut partial gets a durable checkpoint that knows its new size and mtime (else the next
    /// run would take it for edited in place and hash it all again).
    func restore(_ recovery: CheckpointRecovery) throws(PinFetchError) {
        let checkpoint = recovery.checkpoint
        let partial = try PartialFile(path: self.sidecars.partial, partialOf: self.sidecars.destination)
        // A segmented partial keeps the spans its checkpoint lists past the offset.
        self.writtenAhead = recovery.spans.isEmpty ? nil : CheckedSpans(recovery.spans)
        let size = try partial.size()
        let cut = recovery.spans.isEmpty && size != checkpoint.offset
        if cut { try partial.truncate(to: checkpoint.offset) }  // even to the same size it changes the mtime
        self.file = partial
        self.digest = recovery.digest
        self.state.offset = checkpoint.offset
        self.state.validator = checkpoint.validator
        self.state.source = checkpoint.url
        self.state.location = checkpoint.location
        self.state.mixedSources = checkpoint.mixedSources ?? false
        self.state.pieced = checkpoint.pieced ?? false
        self.state.totalLength = checkpoint.totalLength
        self.state.resumable = true
        self.state.spliced = true
        self.state.resumedFrom = checkpoint.offset
        self.previousFailure = checkpoint.failure
        if recovery.isLight || cut {
            try self.saveCheckpoint()
        } else {
            self.durableOffset = checkpoint.offset
        }
    }

    // MARK: - An answer's body

    /// For ``AnswerDecision/replace(end:totalLength:)``: the body is the representation from byte
    /// 0. Only now is a partial emptied that a restart decided to give up: until an answer
    /// replaces it, it stays resumable for a later run. A `provisional` body is not checkpointed.
    func beginRepresentation(
        _ head: ResponseHead,
        totalLength: Int64?,
        provisional: Bool = false,
        location: String? = nil
    ) throws(PinFetchError) {
        if self.state.offset > 0 {
            // The server sent the representation from the start again (counted once: a decided
            // restart was counted when it was decided).
            if self.restartPending { try self.reset() } else { try self.startOver() }
        } else if self.file == nil {
            try self.reset()
        }
        self.restartPending = false
        self.state.validator = head.validator
        self.state.source = self.mirror
        self.state.location = location
        self.state.totalLength = totalLength
        self.state.remoteModified = head.value("last-modified").flatMap { HTTPDate.parse($0) }
        self.crossCheck = head.status == 200 ? head.googleMD5.map { ($0, CrossCheckDigest()) } : nil
        self.state.serverDigest = nil
        if !self.pinned {
            // Nothing hashed yet: hash with what the server can check (SHA-256 unless it offers only SHA-512).
            let offered = head.representationDigests.merging(head.contentDigests) { first, _ in first }
            self.use(offered[.sha256] == nil && offered[.sha512] != nil ? .sha512 : .sha256)
        }
        self.state.noteServerDigest(from: head, wholeContent: head.status == 200 && !head.hasContentCoding)
        self.state.resumable = !provisional && !head.hasContentCoding && self.canResume(with: head.validator)
    }

    /// A strong validator ties a partial to its representation (`If-Range`); without any
    /// validator at all, a pin does. A weak one never does: the server says the bytes may
    /// differ between answers (RFC 9110 §8.8.1).
    func canResume(with validator: Validator) -> Bool {
        validator.ifRangeValue != nil || (self.pinned && validator.isAbsent)
    }

    /// For ``AnswerDecision/append(skip:end:totalLength:)``: the body continues the partial.
    func continueRepresentation(_ head: ResponseHead, totalLength: Int64?) throws(PinFetchError) {
        if self.file == nil {
            self.file = try PartialFile(path: self.sidecars.partial, partialOf: self.sidecars.destination)
        }
        if let totalLength { self.state.totalLength = totalLength }
        self.state.remoteModified = head.value("last-modified").flatMap { HTTPDate.parse($0) }
        self.crossCheck = nil  // the MD5 is only checked over one answer from byte 0
        self.state.noteServerDigest(from: head, wholeContent: false)
        if self.state.crossMirror {
            if self.handOver == nil, self.state.offset > 0 { self.handOver = self.handOverPoint() }
            self.state.mixedSources = true
            // From now on the partial continues this mirror's representation; the pin decides.
            self.state.crossMirror = false
            self.state.validator = head.validator
            self.state.source = self.mirror
            self.state.resumable = self.canResume(with: head.validator) && !head.hasContentCoding
        }
        self.state.spliced = true
    }

    /// Starts streaming a body at the offset: hashing moves to a ``HashingPipeline`` until
    /// ``HashingPipeline/finish()``, with a ``CheckpointWriter`` on a snapshot of the state when
    /// the partial can be resumed.
    func startBody(checkpointed: Bool = true) -> (HashingPipeline, CheckpointWriter?) {
        self.writebackOffset = self.state.offset
        let writer = checkpointed ? self.checkpointWriter() : nil
        var checkpoint: HashingPipeline.Checkpoint?
        if let writer {
            checkpoint = { kind, offset, state throws(PinFetchError) in
                try writer.write(kind, offset: offset, state: state)
            }
        }
        let pipeline = HashingPipeline(
            digest: self.digest,
            crossCheck: self.crossCheck?.digest,
            offset: self.state.offset,
            cadence: HashingPipeline.Cadence(self.options),
            checkpoint: checkpoint
        )
        return (pipeline, writer)
    }

    /// Writes body bytes at the offset and hands them to `pipeline` for hashing. (A segmented
    /// fetch's lead writes through its piece's ``PieceGate`` instead: ``advance(by:)``.)
    func append(_ bytes: UnsafeRawBufferPointer, to pipeline: HashingPipeline) throws(PinFetchError) {
        guard let file = self.file else { throw PinFetchError(.generic, "internal: body before head") }
        if let failure = pipeline.error { throw failure }
        try file.write(bytes, at: self.state.offset)
        pipeline.submit(bytes)
        self.advance(by: Int64(bytes.count))
    }

    /// Counts `count` body bytes written at the offset, and starts the kernel's writeback of
    /// what was written, a step at a time, so the final `fsync` has little left to flush.
    func advance(by count: Int64) {
        self.state.offset += count
        self.receivedBytes += count
        guard let file = self.file else { return }
        if self.state.offset < self.writebackOffset { self.writebackOffset = 0 }  // cut back: from the start
        if self.state.offset - self.writebackOffset >= PartialFile.writebackStep {
            file.startWriteback(from: self.writebackOffset, count: self.state.offset - self.writebackOffset)
            self.writebackOffset = self.state.offset
        }
    }

    /// Where the partial stood before a provisional body: its offset and the digest's state there.
    struct RollbackPoint {
        var offset: Int64
        var digestState: [UInt8]
    }

    /// The point to come back to if the body about to start does not reach its end.
    func rollbackPoint() -> RollbackPoint {
        RollbackPoint(offset: self.state.offset, digestState: self.digest.serializedState())
    }

    /// Cuts the partial back to `point` and restores the digest there.
    /// - Throws: ``PinFetchError/Code/fileIO`` when the partial cannot be cut.
    func rollBack(to point: RollbackPoint) throws(PinFetchError) {
        guard self.state.offset > point.offset else { return }
        try self.file?.truncate(to: point.offset)
        guard
            let digest = RunningDigest(
                algorithm: self.state.algorithm,
                restoring: point.digestState,
                offset: point.offset
            )
        else { throw PinFetchError(.generic, "internal: the digest state before a body did not restore") }
        self.digest = digest
        self.state.offset = point.offset
        self.crossCheck = nil
    }

    /// The failure for a file of `bytes` bytes when `--max-filesize` is smaller, else `nil`;
    /// from then on a failure removes the partial (a later run would be refused all the same).
    /// `label` names the mirror; the error's ``PinFetchError/reason`` says it is this refusal.
    func sizeRefusal(_ bytes: Int64, label: String) -> PinFetchError? {
        guard let maximum = self.options.maximumFileSize, bytes > maximum else { return nil }
        self.oversized = true
        return PinFetchError(
            .protocolViolation,
            "\(label): the file is larger than --max-filesize (\(maximum) bytes)",
            reason: .largerThanMaximumFileSize(maximum: maximum)
        )
    }

    /// Takes in what a segmented phase left: the hashed prefix, the spans kept past it, the
    /// bytes its helpers brought and those read back.
    func takeIn(_ end: Segmentation.End) {
        // Bytes of several answers: a mismatch then asks for the file over one stream.
        if end.helperBytes > 0 { self.state.spliced = true }
        self.receivedBytes += end.helperBytes
        self.rehashedBytes += end.rehashedBytes
        self.state.offset = end.prefix
        self.writtenAhead = end.writtenAhead
        if end.reason == .complete { self.state.resumedFrom += end.keptBytes }  // earlier data in the final file
    }

    // MARK: - Checkpoints and restarts

    private func checkpointWriter() -> CheckpointWriter? {
        guard self.state.resumable, let file = self.file,
            let writer = CheckpointWriter(
                path: self.sidecars.checkpoint,
                partial: file,
                state: self.state,
                source: self.state.source ?? self.mirror,
                durableOffset: self.durableOffset
            )
        else { return nil }
        if let ahead = self.writtenAhead { writer.recordSpans { ahead.beyond($0) } }
        return writer
    }

    /// The answer ended cleanly without having said its length (chunked, or HTTP/2's end of
    /// stream): the partial holds the whole representation, whose length is the offset. A
    /// durable checkpoint records it, so a run stopped before placement finalizes the partial
    /// on HEAD's length (``ResumeDecision``); a body that broke off never records one.
    /// - Throws: ``PinFetchError/Code/fileIO`` when the checkpoint cannot be written.
    func recordComplete() throws(PinFetchError) {
        guard self.state.totalLength == nil, self.state.offset > 0 else { return }
        self.state.totalLength = self.state.offset
        try self.saveCheckpoint()
    }

    /// Takes a durable checkpoint at the offset (no body streaming).
    func saveCheckpoint() throws(PinFetchError) {
        guard self.state.offset > 0, let writer = self.checkpointWriter() else { return }
        try writer.write(.durable, offset: self.state.offset, state: self.digest.serializedState())
        self.durableOffset = self.state.offset
    }

    /// Empties the partial (keeping the file open) and forgets its representation.
    func reset() throws(PinFetchError) {
        try FileSystem.removeRegularFile(self.sidecars.checkpoint)  // first: a checkpoint never outlives its bytes
        if self.file == nil {
            self.file = try PartialFile(path: self.sidecars.partial, fresh: true, partialOf: self.sidecars.destination)
        }
        try self.file!.truncate(to: 0)
        self.digest.reset()
        self.state = self.state.emptied
        self.durableOffset = 0
        self.handOver = nil
        self.writtenAhead = nil
    }

    /// Starts over from byte 0 now (counted in ``restarts``).
    func startOver() throws(PinFetchError) {
        self.restarts += 1
        try self.reset()
    }

    /// Decides a restart from byte 0 (counted now): the partial stays until an answer replaces it.
    func decideRestart() {
        self.restarts += 1
        self.restartPending = true
    }

    /// Removes `.part` and its checkpoint.
    func discard() throws(PinFetchError) {
        try FileSystem.removeRegularFile(self.sidecars.checkpoint)
        try FileSystem.remove(self.sidecars.partial)
        self.file = nil
        self.digest.reset()
        self.state.offset = 0
        self.state.spliced = false
        self.state.resumedFrom = 0
        self.handOver = nil
        self.writtenAhead = nil
    }

    /// The open partial for a zero-byte body, which wrote none, or the one there is.
    func openForPlacement() throws(PinFetchError) -> PartialFile {
        if let file = self.file { return file }
        let file = try PartialFile(path: self.sidecars.partial, fresh: true, partialOf: self.sidecars.destination)
        self.file = file
        return file
    }

    /// After the partial was placed at the destination: it is no longer this type's.
    func placed() throws(PinFetchError) {
        self.file = nil
        try FileSystem.removeRegularFile(self.sidecars.checkpoint)
    }

    // MARK: - Another mirror's tail

    /// Where the partial stands now, to come back to (``handOver``).
    private func handOverPoint() -> HandOver {
        HandOver(
            offset: self.state.offset,
            digestState: self.digest.serializedState(),
            validator: self.state.validator,
            source: self.state.source,
            location: self.state.location,
            totalLength: self.state.totalLength,
            resumable: self.state.resumable,
            mixedSources: self.state.mixedSources
        )
    }

    /// Cuts the partial back to `point` (the bytes before another mirror's tail) and checkpoints
    /// it for its own mirror.
    func goBack(to point: HandOver) throws(PinFetchError) {
        guard let file = self.file,
            let digest = RunningDigest(
                algorithm: self.state.algorithm,
                restoring: point.digestState,
                offset: point.offset
            )
        else { throw PinFetchError(.generic, "internal: the hand-over point did not restore") }
        try file.truncate(to: point.offset)
        self.digest = digest
        self.state.offset = point.offset
        self.state.validator = point.validator
        self.state.source = point.source
        self.state.location = point.location
        self.state.totalLength = point.totalLength
        self.state.resumable = point.resumable
        self.state.mixedSources = point.mixedSources
        self.state.serverDigest = nil
        self.crossCheck = nil
        self.handOver = nil
        self.durableOffset = min(self.durableOffset, point.offset)
        try self.saveCheckpoint()
    }
}
