/// The paths pinfetch keeps beside a destination while it downloads, in one place
/// (<doc:ResumeAndCheckpoints#The-rolling-hash-checkpoint>): the partial, its checkpoint, the lock, and the temporaries
/// of a checkpoint being written and of a cache entry being placed.
struct Sidecars: Hashable, Sendable {
    /// The file the verified bytes end up at.
    let destination: String

    /// `<dest>.part`: the unverified bytes.
    var partial: String { self.destination + ".part" }
    /// `<dest>.part.state`: the checkpoint.
    var checkpoint: String { self.partial + ".state" }
    /// `<dest>.part.lock`: one process per destination (`flock`).
    var lock: String { self.partial + ".lock" }
    /// `<dest>.part.state.tmp`: a checkpoint being written (``FileSystem/replaceAtomically(_:with:)``).
    var checkpointTemporary: String { self.checkpoint + ".tmp" }
    /// `<dest>.part.cache`: a cache entry being placed and hashed before its rename.
    var cachePlacement: String { self.partial + ".cache" }

    /// The destinations of which `path` is a sidecar: `x` for `x.part` or `x.part.state`. A
    /// download to `x.part` renames its file onto the partial of a download to `x`, so it takes
    /// `x`'s lock as well, and the two never run at once (`x` could otherwise be
    /// given the bytes renamed onto `x.part` between the check of the partial and its rename).
    static func owners(of path: String) -> [String] {
        let suffixes = [".part", ".part.state", ".part.lock", ".part.state.tmp", ".part.cache"]
        return suffixes.compactMap { suffix in
            guard path.hasSuffix(suffix), path.count > suffix.count else { return nil }
            let owner = String(path.dropLast(suffix.count))
            return owner.hasSuffix("/") ? nil : owner
        }
    }
}

/// The sidecar paths of a destination, for the command line: a batch in which one
/// output is another's sidecar would have one download rename its file onto the other's partial.
package enum SidecarPaths {
    /// The paths pinfetch may create beside `destination` while it downloads it, with what each is.
    package static func beside(_ destination: String) -> [(path: String, role: String)] {
        let sidecars = Sidecars(destination: destination)
        return [
            (sidecars.partial, "partial"), (sidecars.checkpoint, "checkpoint"), (sidecars.lock, "lock"),
            (sidecars.checkpointTemporary, "checkpoint temporary"), (sidecars.cachePlacement, "cache placement"),
        ]
    }
}
