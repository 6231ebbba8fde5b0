/// A place a file's bytes may come from: the local cache, an earlier entry of the batch pinned
/// the same, the remote cache, the file's mirrors (Architecture, "Sources").
///
/// The sources of a file are tried in one order (``Download/sources``); the pin decides: a
/// source's bytes are placed only once they hash to the pin, and a source that fails or holds
/// other bytes only moves the fetch on to the next. A source that lied is not asked again in
/// the run: a cache entry with other bytes is removed, a remote cache that is down, silent or
/// slow is not asked again, a mirror that sent other bytes is excluded. The mirrors
/// (``MirrorSource``) come last and are the only source of a file without a pin. Adding a source
/// is one type conforming to this protocol and one line in that order.
protocol Source {
    /// Places the file at the destination, or says why it could not.
    /// - Throws: a local failure (disk) or a cancellation, which end the run; from the last
    ///   source, the failure of the file. Never a failure of a source before the last (that is
    ///   a ``SourceAnswer/Outcome/passed`` answer).
    func place(_ context: SourceContext) throws(PinFetchError) -> SourceAnswer
}

/// What a source needs to place a file: a value the download makes for each file.
struct SourceContext {
    /// The pin; a file without one has only its mirrors as a source.
    let pin: Pin?
    /// The file to create, and the sidecar a copy or blob is written to first
    /// (``Sidecars/cachePlacement``).
    let sidecars: Sidecars
    let placement: Placement
    let requester: Requester
    let easy: EasyHandle
    /// The local cache, when the caller chose one (``FetchOptions/cacheDirectory``).
    let cache: DigestCache?
    /// The file's length in bytes as its first mirror's `HEAD` says it (asked at the first call,
    /// advisory, and kept for the resume decision), `nil` when it says none.
    let originLength: () -> Int64?
    /// Body bytes the sources asked so far received (for the progress meter).
    var receivedBefore: Int64 = 0

    var destination: String { self.placement.destination }
    var reporter: Reporter { self.requester.reporter }
}

/// How a source's turn ended.
struct SourceAnswer {
    enum Outcome: Equatable {
        /// The file is at the destination now, `size` bytes with `digest` (the pin's, when pinned).
        case placed(size: Int64, digest: [UInt8])
        /// Nothing placed: the next source is asked.
        case passed
    }

    var outcome: Outcome
    /// How the file came to be there (`--json` `status`), when placed: a copy is already
    /// complete, a remote cache's blob or a mirror's bytes were downloaded.
    var status: FetchResult.Status = .downloaded
    /// Which cache the file came from (`--json` `cache`).
    var cache: FetchResult.CacheKind?
    /// The URL of what was placed, when it was not the file's own (`--json` `source`).
    var source: String?
    /// How asking it ended, for `--json` `mirrors` (listed first), when worth listing.
    var listed: FetchResult.MirrorOutcome?
    /// Body bytes it received, and bytes read back to hash them.
    var receivedBytes: Int64 = 0
    var rehashedBytes: Int64 = 0

    static let passed = SourceAnswer(outcome: .passed)
}

/// Copies a file (a cache entry, an earlier entry's file) beside the destination
/// (``Sidecars/cachePlacement``; ``FileCopy``: a reflink or a copy, never a hard link), hashes
/// the copy's own bytes, and places it only when they are the pinned ones: what a cache entry
/// or another file of the batch held is trusted no more than a download.
struct VerifiedCopy {
    let context: SourceContext
    let pin: Pin

    /// - Parameters:
    ///   - named: What `entry` is, for the warning when it cannot be copied.
    ///   - mismatch: Called when the copy does not hold the pinned bytes (it is removed).
    /// - Returns: The size in bytes of the file placed (`nil` when nothing was: a warning said
    ///   why), the bytes hashed, and the copy's digest (empty when it could not be copied).
    /// - Throws: ``PinFetchError/Code/cancelled`` when cancelled or past `--max-time`;
    ///   ``PinFetchError/Code/fileIO`` when the copy cannot be written or placed.
    func place(
        _ entry: PartialFile,
        clone: @escaping FileCopy.Clone,
        named: String,
        mismatch: () -> Void
    ) throws(PinFetchError) -> (size: Int64?, hashed: Int64, digest: [UInt8]) {
        let context = self.context
        let path = context.sidecars.cachePlacement
        try SidecarOwnership.checkCachePlacement(context.sidecars)
        let copy = try PartialFile(path: path, fresh: true, partialOf: context.sidecars.destination)
        defer { try? FileSystem.remove(path) }  // gone once renamed; else nothing stays behind
        do throws(PinFetchError) {
            _ = try FileCopy.copy(from: entry, to: copy, clone: clone) { context.requester.shouldStop }
        } catch {
            if error.code == .cancelled { throw error }
            context.reporter.warn("cannot copy \(named) \(entry.path): \(error.message)")
            return (nil, 0, [])
        }
        let size = try copy.size()
        let digest = RunningDigest(algorithm: self.pin.algorithm)
        try copy.hash(from: 0, to: size, into: digest) { context.requester.shouldStop }  // the copy's own bytes
        let copied = digest.finalize()
        guard self.pin.matches(copied) else {
            mismatch()
            return (nil, size, copied)
        }
        try context.placement.place(copy, at: path, verified: .init(digests: [self.pin.algorithm: copied]))
        return (size, size, copied)
    }
}
