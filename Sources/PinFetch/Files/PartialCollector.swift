import FoundationEssentials
@preconcurrency import Glibc

/// A partial that ``PartialCollector`` removed: the `.part` path (or, for a checkpoint left
/// without its partial, the `.part.state` path) and the bytes it freed.
@_spi(CLI) public struct RemovedPartial: Sendable, Hashable {
    /// The removed `<dest>.part` (or `<dest>.part.state` when there was no partial).
    public var path: String
    /// Bytes freed: the partial's and its checkpoint's sizes.
    public var bytes: Int64
}

/// `pinfetch gc`: whoever keeps partials owns their cleanup (issue 9). Finds partials that
/// pinfetch left behind and that nobody touched for a while, and removes them with their sidecars.
///
/// A candidate is a `<dest>.part.state` with a slot that starts with pinfetch's checkpoint magic; its
/// `<dest>.part` (if any) goes with it. Nothing else is ever removed. A partial is taken only
/// when both files are older than the limit (modification time) and its lock can be taken at
/// once: a download in progress holds it (``DestinationLock``), and one that starts meanwhile
/// waits, then finds no partial.
@_spi(CLI) public enum PartialCollector {
    /// Removes the abandoned partials under `directories` (recursively; symbolic links are not
    /// followed), those not modified for `age` seconds.
    /// - Returns: What was removed, in path order.
    /// - Throws: ``PinFetchError/Code/usage`` for a directory that does not exist;
    ///   ``PinFetchError/Code/fileIO`` when a file cannot be removed.
    public static func collect(
        in directories: [String],
        olderThan age: Double
    ) throws(PinFetchError)
        -> [RemovedPartial]
    {
        try Self.collect(in: directories, olderThan: age, now: Date())
    }

    /// ``collect(in:olderThan:)`` as of `now`.
    static func collect(
        in directories: [String],
        olderThan age: Double,
        now: Date
    ) throws(PinFetchError)
        -> [RemovedPartial]
    {
        for directory in directories {  // all checked before anything is removed
            var info = stat()
            guard stat(directory, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
                throw PinFetchError(.usage, "\(directory) is not a directory")
            }
        }
        var removed: [RemovedPartial] = []
        for directory in directories {
            for state in Self.checkpoints(under: directory) {
                if let partial = try Self.collect(state, olderThan: age, now: now) { removed.append(partial) }
            }
        }
        return removed
    }

    /// The `.part.state` files under `directory` that carry pinfetch's checkpoint magic: a walk
    /// of the tree that never follows a symbolic link.
    private static func checkpoints(under directory: String) -> [String] {
        var found: [String] = []
        var pending = [directory]
        while let folder = pending.popLast() {
            for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] {
                let path = Text.path(folder, name)
                var info = stat()
                guard lstat(path, &info) == 0 else { continue }
                switch info.st_mode & S_IFMT {
                case S_IFDIR:
                    pending.append(path)
                // pinfetch never names a file ".part" (an empty name before the suffix): that one is not ours.
                case S_IFREG where name.hasSuffix(".part.state") && name != ".part.state":
                    guard let head = FileSystem.readSmallFile(path, limit: CheckpointFile.maximumSize),
                        CheckpointSlots.looksLikeStateFile(head)
                    else { continue }
                    found.append(path)
                default:
                    continue
                }
            }
        }
        return found.sorted()
    }

    /// Removes one partial when it is old enough and unlocked; `nil` when it stays.
    private static func collect(
        _ state: String,
        olderThan age: Double,
        now: Date
    ) throws(PinFetchError)
        -> RemovedPartial?
    {
        let sidecars = Sidecars(destination: String(state.dropLast(".part.state".count)))
        // A lock that is not a plain file (a symbolic link, a FIFO) is not pinfetch's: leave it all.
        if let type = (try? FileManager.default.attributesOfItem(atPath: sidecars.lock))?[.type] as? FileAttributeType,
            type != .typeRegular
        {
            return nil
        }
        // The lock first, then the ages: a download that ran meanwhile has touched its files.
        guard let lock = try? DestinationLock(path: sidecars.lock, timeout: 0) else { return nil }  // in use
        defer { lock.release() }
        var bytes: Int64 = 0
        for path in [sidecars.partial, sidecars.checkpoint] {
            guard let attributes = try? FileManager.default.attributesOfItem(atPath: path) else { continue }
            guard attributes[.type] as? FileAttributeType == .typeRegular else { return nil }
            let modified = (attributes[.modificationDate] as? Date) ?? now
            guard now.timeIntervalSince(modified) >= age else { return nil }
            bytes += (attributes[.size] as? Int64) ?? 0
        }
        let hadPartial = FileSystem.exists(sidecars.partial)
        try FileSystem.remove(sidecars.partial)
        try FileSystem.removeRegularFile(sidecars.checkpoint)
        return RemovedPartial(path: hadPartial ? sidecars.partial : sidecars.checkpoint, bytes: bytes)
    }
}
