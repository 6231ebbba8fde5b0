import FoundationEssentials
@preconcurrency import Glibc

/// A partial that ``PartialCollector`` removed: the `.part` path (or, for a checkpoint left
/// without its partial, the `.part.state` path) and the bytes it freed.
package struct RemovedPartial: Sendable, Hashable {
    /// The removed `<dest>.part` (or `<dest>.part.state` when there was no partial).
    package var path: String
    /// Bytes freed: the partial's and its checkpoint's sizes.
    package var bytes: Int64
}

/// `pinfetch gc`: whoever keeps partials owns their cleanup. Finds partials that
/// pinfetch left behind and that nobody touched for a while, and removes them with their sidecars.
///
/// A candidate is a `<dest>.part.state` with a slot that starts with pinfetch's checkpoint magic; its
/// `<dest>.part` (if any) goes with it. A `<dest>.part.cache` (a cache entry or remote-cache blob
/// being placed) goes too, and is a candidate of its own when the `<dest>.part.lock` of the run
/// that wrote it is still there: a run removes both as it ends, so only a killed one leaves
/// them. Nothing else is ever removed. A candidate is taken only when all its files are older
/// than the limit (modification time) and its lock can be taken at once: a download in progress
/// holds it (``DestinationLock``), and one that starts meanwhile waits, then finds nothing.
package enum PartialCollector {
    /// Removes the abandoned partials under `directories` (recursively; symbolic links are not
    /// followed), those not modified for `age` seconds.
    /// - Returns: What was removed, in path order.
    /// - Throws: ``PinFetchError/Code/usage`` for a directory that does not exist;
    ///   ``PinFetchError/Code/fileIO`` when a file cannot be removed.
    package static func collect(
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
            for destination in Self.leftovers(under: directory) {
                removed += try Self.collect(destination, olderThan: age, now: now)
            }
        }
        return removed
    }

    /// The destinations under `directory` that pinfetch left files for: a `.part.state` that
    /// carries pinfetch's checkpoint magic, or a `.part.cache` beside a `.part.lock` that is a
    /// plain file. A walk of the tree that never follows a symbolic link.
    private static func leftovers(under directory: String) -> [String] {
        var found: Set<String> = []
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
                    found.insert(String(path.dropLast(".part.state".count)))
                case S_IFREG where name.hasSuffix(".part.cache") && name != ".part.cache":
                    let destination = String(path.dropLast(".part.cache".count))
                    guard FileSystem.isRegularFile(Sidecars(destination: destination).lock, followingLinks: false)
                    else { continue }
                    found.insert(destination)
                default:
                    continue
                }
            }
        }
        return found.sorted()
    }

    /// Removes what a run left for `destination` when it is old enough and unlocked: the partial
    /// (with its checkpoint's bytes) and the cache placement, each named; none when it stays.
    private static func collect(
        _ destination: String,
        olderThan age: Double,
        now: Date
    ) throws(PinFetchError)
        -> [RemovedPartial]
    {
        let sidecars = Sidecars(destination: destination)
        // A lock that is not a plain file (a symbolic link, a FIFO) is not pinfetch's: leave it all.
        var lock = stat()
        let lockFound = lstat(sidecars.lock, &lock) == 0
        if lockFound, (lock.st_mode & S_IFMT) != S_IFREG { return [] }
        // A lock made recently is a run that is starting: leave it all.
        if lockFound, now.timeIntervalSince1970 - Self.modified(lock) < age { return [] }
        // Old enough before the lock is taken (a recent one, or its lock, is not touched at all),
        // and again once it is held: a download that ran meanwhile has touched its files. A
        // placement is a killed run's only with that run's lock left beside it.
        guard Self.abandoned(sidecars, placement: lockFound, olderThan: age, now: now) != nil,
            let held = try? DestinationLock(path: sidecars.lock, timeout: 0)  // else in use
        else { return [] }
        defer { held.release() }
        guard let files = Self.abandoned(sidecars, placement: lockFound, olderThan: age, now: now) else { return [] }
        for file in files { try FileSystem.removeRegularFile(file.path) }
        let sizes = Dictionary(uniqueKeysWithValues: files.map { ($0.path, $0.bytes) })
        var removed: [RemovedPartial] = []
        if sizes[sidecars.partial] != nil || sizes[sidecars.checkpoint] != nil {
            removed.append(
                RemovedPartial(
                    path: sizes[sidecars.partial] == nil ? sidecars.checkpoint : sidecars.partial,
                    bytes: (sizes[sidecars.partial] ?? 0) + (sizes[sidecars.checkpoint] ?? 0)
                )
            )
        }
        if let placement = sizes[sidecars.cachePlacement] {
            removed.append(RemovedPartial(path: sidecars.cachePlacement, bytes: placement))
        }
        return removed
    }

    /// The files of `sidecars` a killed run left (the placement only with `placement`, and only
    /// a regular file), with their sizes in bytes, in the order they go, when there is one
    /// and each is a regular file not modified for `age` seconds; else `nil`. A `.part` is
    /// pinfetch's only with its checkpoint beside it.
    private static func abandoned(
        _ sidecars: Sidecars,
        placement: Bool,
        olderThan age: Double,
        now: Date
    ) -> [(path: String, bytes: Int64)]? {
        let hasCheckpoint = FileSystem.isRegularFile(sidecars.checkpoint, followingLinks: false)
        let candidates =
            (hasCheckpoint ? [sidecars.partial, sidecars.checkpoint] : [])
            + (placement ? [sidecars.cachePlacement] : [])
        var files: [(path: String, bytes: Int64)] = []
        for path in candidates {
            var info = stat()
            guard lstat(path, &info) == 0 else { continue }
            if path == sidecars.cachePlacement, (info.st_mode & S_IFMT) != S_IFREG { continue }  // not ours
            guard (info.st_mode & S_IFMT) == S_IFREG else { return nil }
            guard now.timeIntervalSince1970 - Self.modified(info) >= age else { return nil }
            files.append((path, info.st_nlink > 1 ? 0 : Int64(info.st_size)))  // a second name frees nothing
        }
        return files.isEmpty ? nil : files
    }

    /// The modification time of `info`, in seconds since the epoch.
    private static func modified(_ info: stat) -> Double {
        Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9
    }
}
