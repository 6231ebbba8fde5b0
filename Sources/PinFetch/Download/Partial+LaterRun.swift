extension Partial {
    /// After a final failure: keep a resumable partial behind a durable checkpoint (cut back to
    /// the last durable one when the disk failed), and remove one that no later run could trust.
    func keepForLaterRun(after error: PinFetchError) throws(PinFetchError) {
        if self.oversized { return try self.discard() }
        guard self.state.resumable, self.state.offset > 0 else {
            if self.file != nil || self.state.offset > 0 { try self.discard() }
            return
        }
        guard error.code == .fileIO else { return try self.saveCheckpoint() }
        guard self.durableOffset > 0, let file = self.file else {
            try? self.discard()
            return
        }
        try? file.truncate(to: self.durableOffset)
        // The cut is ours: the light record now points past the end, and the durable one should
        // describe the partial as it is now, or the next run would take it for edited and hash it again.
        if let records = CheckpointFile.read(self.sidecars.checkpoint),
            let record = records.durable.first, record.offset == self.durableOffset,
            let identity = try? file.identity()
        {
            let checkpoints = CheckpointFile(path: self.sidecars.checkpoint)
            var updated = record
            updated.partialIdentity = identity
            try? checkpoints.clearLight()
            try? checkpoints.writeDurable(updated)
        }
    }
}
