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
        if self.options.remoteTime, let seconds = self.remoteModified {
            try self.partial!.setModificationTime(seconds)  // before the fsync: durable with the bytes
        }
        try self.partial!.synchronize()
        guard self.partial!.isStill(at: sidecars.partial) else {
            throw PinFetchError(
                .fileIO,
                "\(sidecars.partial) was replaced while pinfetch wrote it: nothing was renamed onto \(self.destination)"
            )
        }
        try self.place(sidecars.partial)
        let verified = self.partial!
        self.partial = nil
        try FileSystem.removeRegularFile(sidecars.checkpoint)
        // Only pinned bytes enter the cache, copied from the descriptor that was hashed.
        if let pin = self.pin, let cache = self.cache,
            let warning = cache.store(from: verified, algorithm: pin.algorithm, digest: pin.digest)
        {
            self.warn(warning)
        }
        self.uploadToRemoteCache(verified)
    }

    /// Renames the verified file at `path` onto the destination; a name the server chose never
    /// replaces a file (``FileSystem/renameWithoutReplacing(_:to:)``).
    func place(_ path: String) throws(PinFetchError) {
        if self.serverNamed {
            try FileSystem.renameWithoutReplacing(path, to: self.destination)
        } else {
            try FileSystem.renameDurably(path, to: self.destination)
        }
    }

    /// The cache, when the caller chose one (``FetchOptions/cacheDirectory``).
    var cache: DigestCache? {
        self.options.cacheDirectory.map { DigestCache(directory: $0) }
    }

    /// With a pin, a regular file already at the destination that matches it is the result: no
    /// request is made (`already-complete`), and a leftover partial is removed. Returns `nil`
    /// when there is no such file; a file that does not match is replaced atomically later.
    /// Only a file the user owns counts, never a symbolic link (issue 10: a link, or a file
    /// another user planted in a shared directory, could change after pinfetch said "verified");
    /// such a destination is replaced by the verified file.
    func verifyExistingDestination() throws(PinFetchError) -> [UInt8]? {
        guard let pin = self.pin, FileSystem.isRegularFile(self.destination, followingLinks: false) else { return nil }
        guard let existing = try? PartialFile(path: self.destination, readOnly: true),
            (try? existing.owner()) == geteuid()
        else { return nil }
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

    /// With a pin and a cache, a trusted entry for the pin is copied beside the destination
    /// (``FileCopy``: a reflink or a copy, never a hard link), hashed from the descriptor it was
    /// copied into, and only then renamed onto the destination; no request is made. An entry
    /// that does not hold the pinned bytes is removed with a warning and `nil` returned, so the
    /// download goes on (and stores a good entry). A partial is left alone until the cached
    /// file is in place.
    func useCacheEntry() throws(PinFetchError) -> [UInt8]? {
        guard let pin = self.pin, let cache = self.cache else { return nil }
        let entry: PartialFile
        switch cache.lookup(pin.algorithm, digest: pin.digest) {
        case .miss:
            return nil
        case .untrusted(let reason):
            self.warn(reason)
            return nil
        case .hit(let file):
            entry = file
        }
        if let limit = self.options.maximumFileSize, let size = try? entry.size(), size > limit {
            return nil  // the download decides: the file may be that large (exit 7), or the entry wrong
        }
        let placed = try self.placeCopy(of: entry, pin: pin, clone: cache.clone, named: "cache entry") {
            cache.remove(entry)  // the placement goes with it
            self.warn("cache entry \(entry.path) did not hold the pinned bytes: removed")
        }
        guard let size = placed else { return nil }
        try? entry.touch()  // recently used: `pinfetch gc --max-size` evicts the least recently used
        self.state.offset = size
        self.alreadyComplete = true
        self.fromCache = true
        return pin.digest
    }
}
