@preconcurrency import Glibc

/// Which files beside a destination a download may empty, replace or remove: only those it can
/// tell are the sidecars of this destination's downloads (<doc:ResumeAndCheckpoints#Whose-file-is-it>).
///
/// Destinations can overlap: `-o x.part` names the partial of `-o x`. The two downloads take
/// each other's locks (``Sidecars/owners(of:)``), so they never run at once; these checks make
/// the one that runs second leave the other's files alone, whichever order they ran in.
enum SidecarOwnership {
    /// Checks that the partial and checkpoint paths of `sidecars` hold nothing but this
    /// destination's own: a partial with its ``PartialMark`` (its checkpoint is then its own,
    /// damaged or not), or with a checkpoint beside it; a checkpoint that is one (or was zeroed
    /// by a crash); empty files (a crash between creating a sidecar and marking it leaves one,
    /// and it holds nothing to lose). Where the file system keeps no marks, a partial is its
    /// own. Anything but a regular file there (a symbolic link, dangling or not, a FIFO, a
    /// directory) is never pinfetch's.
    /// - Throws: ``PinFetchError/Code/fileIO`` naming the first path that holds another file;
    ///   nothing was changed.
    static func checkOwn(_ sidecars: Sidecars) throws(PinFetchError) {
        try Self.checkNothingElse(at: sidecars.partial)
        try Self.checkNothingElse(at: sidecars.checkpoint)
        switch PartialMark.read(sidecars.partial) {
        case .unsupported: return
        case .partial(let name) where name == Text.lastPathComponent(sidecars.destination): return
        case .partial, .none: break
        }
        let checkpointed = Self.isCheckpoint(sidecars.checkpoint)
        if FileSystem.isRegularFile(sidecars.checkpoint, followingLinks: false), !checkpointed {
            throw PinFetchError(
                .fileIO,
                "\(sidecars.checkpoint) is not a checkpoint pinfetch wrote: it is left alone; move it away, "
                    + "or choose another output"
            )
        }
        if !checkpointed, FileSystem.isRegularFile(sidecars.partial, followingLinks: false),
            Self.size(sidecars.partial) > 0
        {
            throw PinFetchError(
                .fileIO,
                "\(sidecars.partial) is not a partial pinfetch wrote for \(sidecars.destination) (no checkpoint, "
                    + "no mark): it is left alone; move it away, or choose another output"
            )
        }
    }

    /// Checks that the cache placement path holds nothing but an empty file or one a cache copy
    /// for this destination left (its ``PartialMark``): a file there with bytes and no mark is
    /// someone's (`-o x.part.cache` is a destination too), never to be emptied by a copy. Asked
    /// just before a copy is made there (a run that copies nothing leaves the path alone).
    /// - Throws: ``PinFetchError/Code/fileIO`` naming it; nothing was changed.
    static func checkCachePlacement(_ sidecars: Sidecars) throws(PinFetchError) {
        let path = sidecars.cachePlacement
        try Self.checkNothingElse(at: path)
        guard FileSystem.isRegularFile(path, followingLinks: false), Self.size(path) > 0 else { return }
        switch PartialMark.read(path) {
        case .unsupported: return
        case .partial(let name) where name == Text.lastPathComponent(sidecars.destination): return
        case .partial, .none:
            throw PinFetchError(
                .fileIO,
                "\(path) is not a copy pinfetch placed for \(sidecars.destination): it is left alone; "
                    + "move it away, or choose another output"
            )
        }
    }

    /// Checks that `destination` is not a sidecar another destination's download still needs:
    /// `x.part` while `x` has a checkpoint or a marked partial there.
    /// - Throws: ``PinFetchError/Code/fileIO`` naming that download; nothing was changed.
    static func checkNotInUse(_ destination: String) throws(PinFetchError) {
        for owner in Sidecars.owners(of: destination) {
            let theirs = Sidecars(destination: owner)
            let marked = PartialMark.read(theirs.partial) == .partial(of: Text.lastPathComponent(owner))
            guard Self.isCheckpoint(theirs.checkpoint) || marked else { continue }
            throw PinFetchError(
                .fileIO,
                "\(destination) is kept by the unfinished download of \(owner) (its partial or checkpoint): "
                    + "it is left alone; finish that download or remove \(theirs.partial) and "
                    + "\(theirs.checkpoint), or choose another output"
            )
        }
    }

    /// Checks that `path` holds nothing or a regular file (not following a link).
    /// - Throws: ``PinFetchError/Code/fileIO`` naming it; it is left alone.
    private static func checkNothingElse(at path: String) throws(PinFetchError) {
        guard FileSystem.exists(path), !FileSystem.isRegularFile(path, followingLinks: false) else { return }
        throw PinFetchError(
            .fileIO,
            "\(path) is not a regular file, so not one pinfetch wrote: it is left alone; move it away, "
                + "or choose another output"
        )
    }

    /// Whether `path` is a regular file that is a checkpoint: it looks like one, or is empty or
    /// all zeros (what a crash may leave of one).
    private static func isCheckpoint(_ path: String) -> Bool {
        guard FileSystem.isRegularFile(path, followingLinks: false),
            let head = FileSystem.readSmallFile(path, limit: CheckpointFile.maximumSize)
        else { return false }
        return CheckpointSlots.looksLikeStateFile(head) || head.allSatisfy { $0 == 0 }
    }

    /// The size of `path` in bytes (not following a link), 0 when it cannot be told.
    private static func size(_ path: String) -> Int64 {
        var info = stat()
        return lstat(path, &info) == 0 ? Int64(info.st_size) : 0
    }
}
