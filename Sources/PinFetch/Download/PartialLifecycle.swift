extension Download {
    /// Takes over a partial at the recovered checkpoint: cuts off the bytes past it (no
    /// checkpoint covers them) and continues its digest. A light checkpoint is made durable, and
    /// a cut partial gets a durable checkpoint that knows its new size and mtime (else the next
    /// run would take it for edited in place and hash it all again).
    func restore(_ recovery: CheckpointRecovery) throws(PinFetchError) {
        let checkpoint = recovery.checkpoint
        let partial = try PartialFile(path: self.sidecars.partial)
        // A segmented partial keeps the spans its checkpoint lists past the offset (issue 14).
        self.writtenAhead = recovery.spans.isEmpty ? nil : WrittenSpans(recovery.spans)
        let size = try partial.size()
        let cut = recovery.spans.isEmpty && size != checkpoint.offset
        if cut { try partial.truncate(to: checkpoint.offset) }  // even to the same size it changes the mtime
        self.partial = partial
        self.digest = recovery.digest
        self.state.offset = checkpoint.offset
        self.state.validator = checkpoint.validator
        self.state.source = checkpoint.url
        self.state.mixedSources = checkpoint.mixedSources ?? false
        self.state.totalLength = checkpoint.totalLength
        self.state.resumable = true
        self.state.spliced = true
        self.state.resumedFrom = checkpoint.offset
        if recovery.isLight || cut {
            try self.saveCheckpoint()
        } else {
            self.durableOffset = checkpoint.offset
        }
    }

    /// A pinned partial whose mirror is not among this run's mirrors is resumed on the current
    /// one with a plain `Range`, and the pin decides (DESIGN.md, "Mirrors").
    func resumeOnAnotherMirror(_ checkpoint: Checkpoint) {
        guard !checkpoint.names(self.mirrors[self.mirrorIndex]) else { return }
        self.decide("the partial came from \(checkpoint.url), not a mirror of this run: the pin decides")
        self.state.crossMirror = true
    }

    /// Feeds the first `end` bytes of `file` to `digest`, counting them in `rehashedBytes`.
    func rehash(_ file: PartialFile, upTo end: Int64, into digest: RunningDigest) throws(PinFetchError) {
        try file.hash(from: 0, to: end, into: digest) { self.control.isCancelled || self.pastDeadline }
        self.rehashedBytes += end
    }

    /// For ``AnswerDecision/replace(end:totalLength:)``: the body is the representation from byte 0.
    /// Only now is a partial emptied that a restart decided to give up: until an answer replaces
    /// it, it stays resumable for a later run. A `provisional` body is not checkpointed.
    func beginRepresentation(_ head: ResponseHead, totalLength: Int64?, provisional: Bool = false) throws(PinFetchError)
    {
        if self.state.offset > 0 {
            // The server sent the representation from the start again (counted once: a decided
            // restart was counted when it was decided).
            if self.restartPending { try self.resetPartial() } else { try self.startOver() }
        } else if self.partial == nil {
            try self.resetPartial()
        }
        self.restartPending = false
        self.state.validator = head.validator
        self.state.source = self.mirrors[self.mirrorIndex].text
        self.state.totalLength = totalLength
        self.remoteModified = head.value("last-modified").flatMap { HTTPDate.parse($0) }
        self.crossCheck = head.status == 200 ? head.googleMD5.map { ($0, CrossCheckDigest()) } : nil
        self.state.serverDigest = nil
        if self.pin == nil {
            // Nothing hashed yet: hash with what the server can check (SHA-256 unless it offers only SHA-512).
            let offered = head.representationDigests.merging(head.contentDigests) { first, _ in first }
            let algorithm: HashAlgorithm = offered[.sha256] == nil && offered[.sha512] != nil ? .sha512 : .sha256
            if algorithm != self.state.algorithm {
                self.state.algorithm = algorithm
                self.digest = RunningDigest(algorithm: algorithm)
            }
        }
        self.state.noteServerDigest(from: head, wholeContent: head.status == 200 && !head.hasContentCoding)
        self.state.resumable = !provisional && !head.hasContentCoding && self.canResume(with: head.validator)
    }

    /// A strong validator ties a partial to its representation (`If-Range`); without any
    /// validator at all, a pin does (DESIGN.md: pinned resume without a validator). A weak one
    /// never does: the server says the bytes may differ between answers.
    func canResume(with validator: Validator) -> Bool {
        validator.ifRangeValue != nil || (self.pin != nil && validator.isAbsent)
    }

    /// For ``AnswerDecision/append(skip:end:totalLength:)``: the body continues the partial.
    func continueRepresentation(_ head: ResponseHead, totalLength: Int64?) throws(PinFetchError) {
        if self.partial == nil { self.partial = try PartialFile(path: self.sidecars.partial) }
        if let totalLength { self.state.totalLength = totalLength }
        self.remoteModified = head.value("last-modified").flatMap { HTTPDate.parse($0) }
        self.crossCheck = nil  // the MD5 is only checked over one answer from byte 0
        self.state.noteServerDigest(from: head, wholeContent: false)
        if self.state.crossMirror {
            if self.handOver == nil, self.state.offset > 0 { self.handOver = self.handOverPoint() }
            self.state.mixedSources = true
            // From now on the partial continues this mirror's representation; the pin decides.
            self.state.crossMirror = false
            self.state.validator = head.validator
            self.state.source = self.mirrors[self.mirrorIndex].text
            self.state.resumable = self.canResume(with: head.validator) && !head.hasContentCoding
        }
        self.state.spliced = true
    }

    /// Starts streaming a body at the offset: hashing moves to a ``HashingPipeline`` until
    /// ``HashingPipeline/finish()``, with a ``CheckpointWriter`` on a snapshot of the state when
    /// the partial can be resumed.
    func startBody(checkpointed: Bool = true) -> (HashingPipeline, CheckpointWriter?) {
        self.writebackOffset = self.state.offset
        var writer: CheckpointWriter?
        if self.state.resumable, checkpointed, let partial = self.partial {
            writer = CheckpointWriter(
                path: self.sidecars.checkpoint,
                partial: partial,
                state: self.state,
                source: self.state.source ?? self.mirrors[self.mirrorIndex].text,
                durableOffset: self.durableOffset
            )
            if let ahead = self.writtenAhead { writer?.recordSpans { ahead.beyond($0) } }
        }
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
    /// fetch's lead writes through its piece's ``PieceGate`` instead.)
    func append(_ bytes: UnsafeRawBufferPointer, to pipeline: HashingPipeline) throws(PinFetchError) {
        guard let partial = self.partial else { throw PinFetchError(.generic, "internal: body before head") }
        if let failure = pipeline.error { throw failure }
        try partial.write(bytes, at: self.state.offset)
        pipeline.submit(bytes)
        self.state.offset += Int64(bytes.count)
        self.downloadedBytes += Int64(bytes.count)
        self.startWriteback()
    }

    /// Starts the kernel's writeback of what was written up to the offset, a step at a time, so
    /// the final `fsync` has little left to flush.
    func startWriteback() {
        guard let partial = self.partial else { return }
        if self.state.offset < self.writebackOffset { self.writebackOffset = 0 }  // cut back: from the start
        if self.state.offset - self.writebackOffset >= PartialFile.writebackStep {
            partial.startWriteback(from: self.writebackOffset, count: self.state.offset - self.writebackOffset)
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
        try self.partial?.truncate(to: point.offset)
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

    /// Takes a durable checkpoint at the offset from the download's thread (no body streaming).
    func saveCheckpoint() throws(PinFetchError) {
        guard self.state.resumable, self.state.offset > 0, let partial = self.partial,
            let writer = CheckpointWriter(
                path: self.sidecars.checkpoint,
                partial: partial,
                state: self.state,
                source: self.state.source ?? self.mirrors[self.mirrorIndex].text,
                durableOffset: self.durableOffset
            )
        else { return }
        if let ahead = self.writtenAhead { writer.recordSpans { ahead.beyond($0) } }
        try writer.write(.durable, offset: self.state.offset, state: self.digest.serializedState())
        self.durableOffset = self.state.offset
    }

    /// Empties the partial (keeping the file open) and forgets its representation.
    func resetPartial() throws(PinFetchError) {
        try FileSystem.removeRegularFile(self.sidecars.checkpoint)  // first: a checkpoint never outlives its bytes
        if self.partial == nil { self.partial = try PartialFile(path: self.sidecars.partial, fresh: true) }
        try self.partial!.truncate(to: 0)
        self.digest.reset()
        self.state = self.state.emptied
        self.durableOffset = 0
        self.handOver = nil
        self.writtenAhead = nil
    }

    /// Starts the download over from byte 0 (counted in `restarts`).
    func startOver() throws(PinFetchError) {
        self.restarts += 1
        try self.resetPartial()
    }

    /// Removes `.part` and its checkpoint.
    func discardPartial() throws(PinFetchError) {
        try FileSystem.removeRegularFile(self.sidecars.checkpoint)
        try FileSystem.remove(self.sidecars.partial)
        self.partial = nil
        self.digest.reset()
        self.state.offset = 0
        self.state.spliced = false
        self.state.resumedFrom = 0
        self.handOver = nil
        self.writtenAhead = nil
    }

    /// The failure for a file of `bytes` bytes when `--max-filesize` is smaller, else `nil`;
    /// from then on a failure removes the partial (a later run would be refused all the same).
    func sizeRefusal(_ bytes: Int64) -> PinFetchError? {
        guard let maximum = self.options.maximumFileSize, bytes > maximum else { return nil }
        self.oversized = true
        return PinFetchError(
            .protocolViolation,
            "\(self.currentLabel): the file is larger than --max-filesize (\(maximum) bytes)"
        )
    }

    /// After a final failure: keep a resumable partial behind a durable checkpoint (cut back to
    /// the last durable one when the disk failed), and remove one that no later run could trust.
    func keepForLaterRun(after error: PinFetchError) throws(PinFetchError) {
        if self.oversized { return try self.discardPartial() }
        guard self.state.resumable, self.state.offset > 0 else {
            if self.partial != nil || self.state.offset > 0 { try self.discardPartial() }
            return
        }
        guard error.code == .fileIO else { return try self.saveCheckpoint() }
        guard self.durableOffset > 0, let partial = self.partial else {
            try? self.discardPartial()
            return
        }
        try? partial.truncate(to: self.durableOffset)
        // The cut is ours: the light record now points past the end, and the durable one should
        // describe the partial as it is now, or the next run would take it for edited and hash it again.
        if let records = CheckpointFile.read(self.sidecars.checkpoint),
            let record = records.durable.first, record.offset == self.durableOffset,
            let identity = try? partial.identity()
        {
            let file = CheckpointFile(path: self.sidecars.checkpoint)
            var updated = record
            updated.partialIdentity = identity
            try? file.clearLight()
            try? file.writeDurable(updated)
        }
    }

    func stopForCancellation() throws(PinFetchError) -> Never {
        let error = PinFetchError(.cancelled, "\(self.currentLabel): cancelled at byte \(self.state.offset)")
        try self.keepForLaterRun(after: error)
        throw error
    }
}
