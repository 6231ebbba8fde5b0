@preconcurrency import Glibc

extension Download {
    /// Copies `entry` beside the destination (``Sidecars/cachePlacement``; ``FileCopy``: a
    /// reflink or a copy, never a hard link), hashes the copy's own bytes, and renames it onto
    /// the destination only when they are the pinned ones: what a cache entry or another file of
    /// the batch held is trusted no more than a download. The partial, if any, then goes.
    /// - Parameters:
    ///   - named: What `entry` is, for the warning when it cannot be copied.
    ///   - mismatch: Called when the copy does not hold the pinned bytes (it is removed).
    /// - Returns: The size in bytes of the file placed, or `nil` when nothing was (a warning said why).
    /// - Throws: ``PinFetchError/Code/cancelled`` when cancelled or past `--max-time`;
    ///   ``PinFetchError/Code/fileIO`` when the placement cannot be written or renamed.
    func placeCopy(
        of entry: PartialFile,
        pin: Pin,
        clone: @escaping FileCopy.Clone,
        named: String,
        mismatch: () -> Void
    ) throws(PinFetchError) -> Int64? {
        let placedPath = self.sidecars.cachePlacement
        let placed = try PartialFile(path: placedPath, fresh: true)
        defer { try? FileSystem.remove(placedPath) }  // gone once renamed; else nothing stays behind
        do throws(PinFetchError) {
            _ = try FileCopy.copy(from: entry, to: placed, clone: clone) {
                self.control.isCancelled || self.pastDeadline
            }
        } catch {
            if error.code == .cancelled { throw error }
            self.warn("cannot copy \(named) \(entry.path): \(error.message)")
            return nil
        }
        let size = try placed.size()
        let digest = RunningDigest(algorithm: pin.algorithm)
        try self.rehash(placed, upTo: size, into: digest)  // the copy's own bytes
        guard digest.finalize() == pin.digest else {
            mismatch()
            return nil
        }
        try placed.setMode(FileSystem.creationMode)
        try placed.synchronize()
        guard placed.isStill(at: placedPath) else {
            throw PinFetchError(.fileIO, "\(placedPath) was replaced while pinfetch hashed it: nothing was renamed")
        }
        try self.place(placedPath)
        try self.discardPartial()  // superseded by the verified file
        return size
    }

    /// In a batch, a file pinned like one an earlier entry already verified (``sibling``) is a
    /// copy of that file, checked against the pin like a cache entry, instead of a second
    /// download of the same bytes (and a second upload to a remote cache). A sibling that no
    /// longer holds them (changed since) only costs a warning: the file is downloaded.
    /// - Returns: The digest when the copy was placed, else `nil`.
    func useSibling() throws(PinFetchError) -> [UInt8]? {
        guard let pin = self.pin, let sibling = self.sibling, sibling != self.destination else { return nil }
        // Never through a link, nor a FIFO or a device put there since.
        guard let entry = try? PartialFile(path: sibling, readOnly: true) else {
            self.warn("\(sibling), pinned the same, is no longer a regular file: downloading this file")
            return nil
        }
        let placed = try self.placeCopy(of: entry, pin: pin, clone: FileCopy.ficlone, named: "the batch's file") {
            self.warn("\(sibling), pinned the same, no longer holds the pinned bytes: downloading this file")
        }
        guard let size = placed else { return nil }
        self.decide("copied from \(sibling), pinned the same earlier in this batch: no request")
        self.state.offset = size
        self.alreadyComplete = true
        self.fromCache = true
        return pin.digest
    }
}
