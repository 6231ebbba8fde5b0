/// The local cache (``FetchOptions/cacheDirectory``, `<dir>/sha256/<hex>`): a trusted entry for
/// the pin is copied into place (``VerifiedCopy``) with no request. An entry that does not hold
/// the pinned bytes is removed with a warning, and the fetch goes on (storing a good entry).
struct LocalCacheSource: Source {
    func place(_ context: SourceContext) throws(PinFetchError) -> SourceAnswer {
        guard let cache = context.cache else { return .passed }
        let pin = context.pin
        let entry: PartialFile
        switch cache.lookup(pin.algorithm, digest: pin.digest) {
        case .miss:
            return .passed
        case .untrusted(let reason):
            context.reporter.warn(reason)
            return .passed
        case .hit(let file):
            entry = file
        }
        if let limit = context.requester.options.maximumFileSize, let size = try? entry.size(), size > limit {
            return .passed  // the download decides: the file may be that large (exit 7), or the entry wrong
        }
        let (placed, hashed) = try VerifiedCopy(context: context).place(entry, clone: cache.clone, named: "cache entry")
        {
            cache.remove(entry)  // the copy goes with it
            context.reporter.warn("cache entry \(entry.path) did not hold the pinned bytes: removed")
        }
        guard let size = placed else { return SourceAnswer(outcome: .passed, rehashedBytes: hashed) }
        try? entry.touch()  // recently used: `pinfetch gc --max-size` evicts the least recently used
        return SourceAnswer(outcome: .placed(size: size), cache: .local, rehashedBytes: hashed)
    }
}

/// In a batch, a file pinned like one an earlier entry already verified is a copy of that file,
/// checked against the pin like a cache entry, instead of a second download of the same bytes
/// (and a second upload to a remote cache). A file that no longer holds them (changed since)
/// only costs a warning: the next source is asked.
struct SiblingSource: Source {
    /// The earlier entry's verified file.
    let path: String

    func place(_ context: SourceContext) throws(PinFetchError) -> SourceAnswer {
        guard self.path != context.destination else { return .passed }
        // Never through a link, nor a FIFO or a device put there since.
        guard let entry = try? PartialFile(path: self.path, readOnly: true) else {
            context.reporter.warn("\(self.path), pinned the same, is no longer a regular file: downloading this file")
            return .passed
        }
        let (placed, hashed) = try VerifiedCopy(context: context).place(
            entry,
            clone: FileCopy.ficlone,
            named: "the batch's file"
        ) {
            context.reporter.warn(
                "\(self.path), pinned the same, no longer holds the pinned bytes: downloading this file"
            )
        }
        guard let size = placed else { return SourceAnswer(outcome: .passed, rehashedBytes: hashed) }
        context.reporter.decide("copied from \(self.path), pinned the same earlier in this batch: no request")
        return SourceAnswer(outcome: .placed(size: size), cache: .local, rehashedBytes: hashed)
    }
}
