@preconcurrency import Glibc

extension Download {
    /// `fsync` → `rename(.part, destination)` → `fsync` the directory → remove the checkpoint
    /// (DESIGN.md, "Finalize"). Called only once the digest matched, and renames only the file
    /// that was hashed: a `.part` path that names another file now is exit 3, nothing renamed.
    func commit() throws(PinFetchError) {
        let sidecars = self.sidecars
        // A zero-byte body wrote no partial.
        if self.partial == nil { self.partial = try PartialFile(path: sidecars.partial, fresh: true) }
        try self.partial!.setMode(FileSystem.creationMode)  // private while unverified, usual once verified
        try self.partial!.synchronize()
        guard self.partial!.isStill(at: sidecars.partial) else {
            throw PinFetchError(
                .fileIO,
                "\(sidecars.partial) was replaced while pinfetch wrote it: nothing was renamed onto \(self.destination)"
            )
        }
        try FileSystem.renameDurably(sidecars.partial, to: self.destination)
        self.partial = nil
        try FileSystem.remove(sidecars.checkpoint)
    }

    /// With a pin, a regular file already at the destination that matches it is the result: no
    /// request is made (`already-complete`), and a leftover partial is removed. Returns `nil`
    /// when there is no such file; a file that does not match is replaced atomically later.
    func verifyExistingDestination() throws(PinFetchError) -> [UInt8]? {
        guard let pin = self.pin, FileSystem.isRegularFile(self.destination) else { return nil }
        let existing = try PartialFile(path: self.destination, readOnly: true, followingLinks: true)
        let size = try existing.size()
        let running = RunningDigest(algorithm: pin.algorithm)
        try self.rehash(existing, upTo: size, into: running)
        let digest = running.finalize()
        guard digest == pin.digest else { return nil }
        try self.discardPartial()
        self.state.offset = size
        self.alreadyComplete = true
        return digest
    }

    /// With a pin and a cache, an entry for the pin is placed beside the destination (hard link,
    /// else copy), hashed there, and only then renamed onto it; no request is made. A corrupt
    /// entry is removed and `nil` returned, so the download goes on (and stores a good entry).
    /// A partial is left alone until the cached file is in place.
    func useCacheEntry() throws(PinFetchError) -> [UInt8]? {
        guard let pin = self.pin, let directory = self.options.cacheDirectory else { return nil }
        let entry = DigestCache(directory: directory).path(for: pin.algorithm, digest: pin.digest)
        guard FileSystem.isRegularFile(entry) else { return nil }
        let placedPath = self.sidecars.cachePlacement
        guard DigestCache.linkOrCopy(entry, to: placedPath) else { return nil }
        let placed = try PartialFile(path: placedPath)
        let size = try placed.size()
        let digest = RunningDigest(algorithm: pin.algorithm)
        try self.rehash(placed, upTo: size, into: digest)  // the placed bytes: nothing changes in between
        guard digest.finalize() == pin.digest else {
            try FileSystem.remove(placedPath)
            unlink(entry)
            return nil
        }
        try placed.synchronize()
        guard placed.isStill(at: placedPath) else {
            throw PinFetchError(.fileIO, "\(placedPath) was replaced while pinfetch hashed it: nothing was renamed")
        }
        try FileSystem.renameDurably(placedPath, to: self.destination)
        try self.discardPartial()  // superseded by the verified file
        self.state.offset = size
        self.alreadyComplete = true
        self.fromCache = true
        return pin.digest
    }
}
