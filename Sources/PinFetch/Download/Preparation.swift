/// What happens before anything of a file is written: its name is checked and claimed in the
/// batch, its directory made, its lock taken (and those of the destinations whose sidecar it
/// is), and, once they are held, what a killed run of an older version left is cleared.
struct Preparation {
    let destination: String
    /// Whether the server chose the name (`Content-Disposition`): a bad one fails that file
    /// alone (exit 3), where a name the user gave is bad input (exit 2).
    let serverNamed: Bool
    let claims: DestinationClaims?
    let lockTimeout: Double?
    let deadline: Deadline
    let control: TransferControl
    /// Called while another process holds a lock this one waits for (for progress).
    var waiting: () -> Void = {}

    /// Checks and claims the name, then takes the locks, names shortest last (so two processes
    /// never wait for each other in a cycle); `map` turns a lock's failure into the file's.
    /// - Returns: The locks held, to release in reverse order.
    /// - Throws: ``PinFetchError/Code/usage`` or ``PinFetchError/Code/fileIO`` for a name that
    ///   cannot be a file here; a failure to create the directory; a lock's failure, mapped.
    func lock(
        mapping map: (PinFetchError) throws(PinFetchError) -> PinFetchError
    ) throws(PinFetchError) -> [DestinationLock] {
        let badName: PinFetchError.Code = self.serverNamed ? .fileIO : .usage
        let name = Text.lastPathComponent(self.destination)
        if name.utf8.count > SafeFileName.maximumNameBytes {
            // Every sidecar must fit in NAME_MAX too; found before anything is created.
            throw PinFetchError(badName, "\(SafeFileName.quoted(name)) \(SafeFileName.tooLong(name.utf8.count))")
        }
        if let refusal = DestinationType.refusal(self.destination) { throw PinFetchError(badName, refusal) }
        // A name decided now (by the server, or the URL's when the server gave none) is claimed
        // now: the later claimant of a path fails.
        if self.serverNamed, self.claims?.claim(self.destination) == false {
            throw PinFetchError(
                .fileIO,
                "\(self.destination): another file of this batch has this name, or keeps a sidecar under it (Content-Disposition)"
            )
        }
        try FileSystem.createDirectories(FileSystem.directory(of: self.destination))
        let sidecars = Sidecars(destination: self.destination)
        // --max-time bounds the wait for another process's lock too.
        let timeout = [self.lockTimeout, self.deadline.remaining.map { max(0, $0) }].compactMap { $0 }.min()
        var locks: [DestinationLock] = []
        let paths = [sidecars.lock] + Sidecars.owners(of: self.destination).map { Sidecars(destination: $0).lock }
        for path in paths {
            do throws(PinFetchError) {
                locks.append(
                    try DestinationLock(
                        path: path,
                        timeout: timeout,
                        isCancelled: { [control] in control.isCancelled },
                        waiting: self.waiting
                    )
                )
            } catch {
                for lock in locks.reversed() { lock.release() }
                throw try map(error)
            }
        }
        return locks
    }

    /// A run of a version before the checkpoint slots, killed while writing a checkpoint, left a
    /// temporary; holding the lock, no one else writes it. Only one that is pinfetch's goes (a
    /// placement left by a killed run goes when the cache is used again: it is made afresh).
    /// Before that, what is beside the destination must be its own, and the destination no
    /// sidecar another destination's download still needs (``SidecarOwnership``).
    /// - Throws: ``PinFetchError/Code/fileIO`` when a sidecar path holds another file.
    static func clearLeftovers(_ sidecars: Sidecars) throws(PinFetchError) {
        try SidecarOwnership.checkNotInUse(sidecars.destination)
        try SidecarOwnership.checkOwn(sidecars)
        if let head = FileSystem.readSmallFile(sidecars.checkpointTemporary, limit: CheckpointFile.maximumSize),
            CheckpointSlots.looksLikeStateFile(head)
        {
            try FileSystem.remove(sidecars.checkpointTemporary)
        }
    }
}
