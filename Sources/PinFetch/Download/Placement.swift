/// Puts verified bytes at a destination: the only rename onto it. Every way a file arrives (a
/// download's partial, a cache entry's copy, a remote cache's blob, a copy of an earlier entry
/// of the batch) goes through ``place(_:at:modificationTime:)``.
///
/// What it checks (Architecture, "Placement"): the descriptor that was hashed is still the file
/// at the path renamed (no file swapped in meanwhile, no symbolic link followed); the bytes are
/// durable before the rename, and the rename before the caller goes on (the directory is
/// synced); a name the server chose never replaces a file.
struct Placement: Sendable {
    let destination: String
    /// `false` when the server chose the name (`Content-Disposition`): an existing file stays.
    let replaces: Bool
    /// ``FetchOptions/stopRequested``: asked after the `fsync`, just before the rename.
    var stopRequested: (@Sendable () -> Bool)? = nil
    /// The batch transfer slot of the file, given up when the commit begins (``TransferSlots``).
    var slot: TransferSlot? = nil

    /// What the placed file is recorded to hold (``VerifiedRecord``).
    struct Verified {
        /// Its digests by algorithm: at least the one that was checked.
        var digests: [HashAlgorithm: [UInt8]]
        /// The validator and URL of the representation, when a mirror served it.
        var validator: Validator? = nil
        var url: String? = nil
    }

    /// Places `file`, open at `path` and verified, at the destination: `modificationTime`
    /// (seconds since the epoch) when given, `fsync`, its usual mode (it was private while
    /// unverified), the identity check, a durable rename, then the record of what was verified
    /// (`nil`: none; the next run hashes the file and records it then).
    /// - Throws: ``PinFetchError/Code/fileIO`` when any of these but the record fails, or `path`
    ///   names another file now (nothing is renamed then).
    func place(
        _ file: PartialFile,
        at path: String,
        modificationTime: Int64? = nil,
        verified: Verified?
    ) throws(PinFetchError) {
        self.slot?.release()
        if let modificationTime { try file.setModificationTime(modificationTime) }  // durable with the bytes
        try file.synchronize()
        // The usual mode only once the bytes are durable, right before the rename: a kill
        // during the fsync (the longest step) leaves a private partial, as every partial is.
        // The mode is inode metadata in the file system's journal, made durable with the
        // rename by the directory's fsync.
        try file.setMode(FileSystem.creationMode)
        // What the file looked like after pinfetch's own last change: a write by anyone else
        // before the record is set moves its mtime or size, and then no record is left.
        let synced = try file.identity()
        guard file.isStill(at: path) else {
            throw PinFetchError(
                .fileIO,
                "\(path) was replaced while pinfetch wrote it: nothing was renamed onto \(self.destination)"
            )
        }
        if let stop = self.stopRequested, stop() {
            throw PinFetchError(.cancelled, "\(self.destination): stopped before it was placed")
        }
        if self.replaces {
            try FileSystem.renameDurably(path, to: self.destination)
        } else {
            try FileSystem.renameWithoutReplacing(path, to: self.destination)
        }
        // A placed file is no partial. Taken off only now: a run killed before the rename (in
        // the fsync, say) leaves a partial that is still marked as its destination's, never an
        // unmarked one the next run must leave alone; killed after it, a verified file carries
        // its own name, which no other destination's partial check matches.
        PartialMark.remove(file.descriptor)
        // Last: any change after it would make the record describe another file.
        if let verified {
            VerifiedRecord.record(
                on: file,
                digests: verified.digests,
                validator: verified.validator,
                url: verified.url,
                unchangedSince: synced
            )
        }
    }
}
