@preconcurrency import Glibc

/// What a fetch would do for one file, found without a request (`--dry-run`):
/// the same checks the download starts with, and nothing written.
package enum DryRun {
    /// The first step the fetch of a file would take.
    package enum Action: Sendable, Equatable {
        /// A regular file the user owns already holds the pinned bytes.
        case alreadyComplete
        /// A trusted cache entry for the pin would be copied into place.
        case fromCache(entry: String)
        /// A partial of this many bytes with a checkpoint would be offered to the server for a
        /// resume (the server's answer decides).
        case resume(bytes: Int64)
        /// The file would be downloaded from byte 0.
        case download
        /// The file would be a copy of the file of an earlier entry of the batch pinned the same,
        /// once that one is verified (``Batch``).
        case copy(of: String)

        /// The action in words, for a line of output.
        package var description: String {
            switch self {
            case .alreadyComplete: "already complete"
            case .fromCache(let entry): "from the cache (\(entry))"
            case .resume(let bytes): "resume after \(bytes) bytes kept"
            case .download: "download"
            case .copy(let path): "copy of \(path), pinned the same"
            }
        }
    }

    /// The action for `job` under `options` (the cache among them). Reads the destination to
    /// verify it against the pin; makes no request and writes nothing.
    /// - Throws: ``PinFetchError/Code/cancelled`` when `isCancelled` says so while hashing.
    package static func action(
        for job: FetchJob,
        options: FetchOptions,
        isCancelled: () -> Bool = { false }
    ) throws(PinFetchError) -> Action {
        let sidecars = Sidecars(destination: job.destination)
        if let pin = job.pin {
            if FileSystem.isRegularFile(job.destination, followingLinks: false),
                let existing = try? PartialFile(path: job.destination, readOnly: true),
                (try? existing.owner()) == geteuid(), let size = try? existing.size()
            {
                let digest = RunningDigest(algorithm: pin.algorithm)
                try existing.hash(from: 0, to: size, into: digest, isCancelled: isCancelled)
                if pin.matches(digest.finalize()) { return .alreadyComplete }
            }
            if let directory = options.cacheDirectory,
                case .hit(let entry) = DigestCache(directory: directory).lookup(pin.algorithm, digest: pin.digest)
            {
                return .fromCache(entry: entry.path)
            }
        }
        if CheckpointFile.read(sidecars.checkpoint) != nil, let size = FileSystem.size(of: sidecars.partial),
            size > 0, FileSystem.isRegularFile(sidecars.partial, followingLinks: false)
        {
            return .resume(bytes: size)
        }
        return .download
    }
}
