/// The local cache (``FetchOptions/cacheDirectory``, `<dir>/sha256/<hex>`): a trusted entry for
/// the pin is copied into place (``VerifiedCopy``) with no request. An entry that does not hold
/// the pinned bytes is removed with a warning, and the fetch goes on (storing a good entry).
struct LocalCacheSource: Source {
    func place(_ context: SourceContext) throws(PinFetchError) -> SourceAnswer {
        guard let pin = context.pin, let cache = context.cache else { return .passed }
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
        let (placed, hashed, digest) = try VerifiedCopy(context: context, pin: pin).place(
            entry,
            clone: cache.clone,
            named: "cache entry"
        ) {
            cache.remove(entry)  // the copy goes with it
            context.reporter.warn("cache entry \(entry.path) did not hold the pinned bytes: removed")
        }
        guard let size = placed else { return SourceAnswer(outcome: .passed, rehashedBytes: hashed) }
        try? entry.touch()  // recently used: `pinfetch gc --max-size` evicts the least recently used
        return SourceAnswer(
            outcome: .placed(size: size, digest: digest),
            status: .alreadyComplete,
            cache: .local,
            rehashedBytes: hashed
        )
    }
}
