import FoundationEssentials
@preconcurrency import Glibc

/// A content-addressed store of verified files: `<directory>/<algorithm>/<lower-case hex>`
/// (<doc:Architecture#Many-files>: the cache is opt-in, with `--cache-dir` or `PINFETCH_CACHE_DIR`).
///
/// Every entry is an independent file (``FileCopy``: a reflink or a copy, never a hard link), so
/// a `chmod` or an edit of a downloaded file never shows in the entry or in another download.
/// Entries are read-only (0444), written under a temporary name and then `rename`d, so a
/// concurrent reader sees a whole entry or none, and two writers of one digest write the same
/// bytes. Only pinned, verified bytes are stored.
///
/// Trust: the cache is used only when its directories are owned by the user and not writable
/// by others, and an entry only when it is a regular file owned by the user (another
/// user must not plant what becomes a destination). Even then an entry is hashed again when it
/// is placed. Entries are not `fsync`ed: one lost to a crash is a miss, or fails that hash and
/// is replaced.
package struct DigestCache: Sendable {
    /// The cache's root directory.
    let directory: String

    package init(directory: String) {
        self.directory = directory
    }
    /// How entries are cloned (the test seam of ``FileCopy/Clone``).
    var clone: FileCopy.Clone = FileCopy.ficlone

    /// What ``lookup(_:digest:)`` found.
    enum Lookup {
        /// No entry for the digest.
        case miss
        /// The entry, open for reading.
        case hit(PartialFile)
        /// The cache or the entry is not to be trusted, for the reason given (one line).
        case untrusted(String)
    }

    /// The entry's path for `digest` of `algorithm`.
    func path(for algorithm: HashAlgorithm, digest: [UInt8]) -> String {
        "\(self.folder(for: algorithm))/\(Pin.hex(digest))"
    }

    /// `<directory>/<algorithm>`.
    func folder(for algorithm: HashAlgorithm) -> String {
        "\(self.directory)/\(algorithm.rawValue)"
    }

    /// The entry for `digest`, opened without following a symbolic link.
    func lookup(_ algorithm: HashAlgorithm, digest: [UInt8]) -> Lookup {
        if let reason = self.distrust(algorithm) { return .untrusted(reason) }
        let path = self.path(for: algorithm, digest: digest)
        var info = stat()
        guard lstat(path, &info) == 0 else { return .miss }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            let what = (info.st_mode & S_IFMT) == S_IFLNK ? "a symbolic link" : "not a regular file"
            return .untrusted("cache entry \(path) is \(what): ignored")
        }
        do throws(PinFetchError) {
            let entry = try PartialFile(path: path, readOnly: true)
            let owner = try entry.owner()
            guard owner == geteuid() else {
                return .untrusted("cache entry \(path) is owned by another user (uid \(owner)): ignored")
            }
            return .hit(entry)
        } catch {
            return .untrusted("cache entry \(error.message): ignored")
        }
    }

    /// Why the cache cannot be trusted for `algorithm`, as one line, or `nil` when it can (or
    /// does not exist yet). The root may be a symbolic link the user made (not one another user
    /// made, say in `/tmp`), in a directory others cannot rename it in; the algorithm's folder
    /// may not be a link.
    func distrust(_ algorithm: HashAlgorithm) -> String? {
        self.distrust(folder: self.folder(for: algorithm))
    }

    /// ``distrust(_:)`` for the cache's subdirectory `folder` (a path inside it).
    private func distrust(folder: String) -> String? {
        var link = stat()
        if lstat(self.directory, &link) == 0, (link.st_mode & S_IFMT) == S_IFLNK, link.st_uid != geteuid() {
            return "cache \(self.directory) is a symbolic link owned by another user (uid \(link.st_uid)): not used"
        }
        var parent = stat()
        let above = FileSystem.directory(of: self.directory)
        if stat(above, &parent) == 0, (parent.st_mode & S_IWOTH) != 0, (parent.st_mode & S_ISVTX) == 0 {
            return "cache \(self.directory) is in \(above), which other users can write: not used"
        }
        for (path, followingLinks) in [(self.directory, true), (folder, false)] {
            var info = stat()
            guard (followingLinks ? stat(path, &info) : lstat(path, &info)) == 0 else { return nil }
            let reason: String? =
                (info.st_mode & S_IFMT) != S_IFDIR
                ? "is not a directory"
                : info.st_uid != geteuid()
                    ? "is owned by another user (uid \(info.st_uid))"
                    : (info.st_mode & S_IWOTH) != 0 ? "is writable by other users" : nil
            if let reason { return "cache \(path) \(reason): not used" }
        }
        return nil
    }

    /// Stores the verified bytes of `file` under `digest`, unless a trusted entry is there
    /// already (then it is only marked used). Returns a one-line warning when the cache is not
    /// to be trusted or the entry cannot be written; a cache never fails a download.
    func store(from file: PartialFile, algorithm: HashAlgorithm, digest: [UInt8]) -> String? {
        if let reason = self.distrust(algorithm) { return reason }
        if case .hit(let entry) = self.lookup(algorithm, digest: digest), (try? entry.size()) == (try? file.size()) {
            try? entry.touch()
            return nil
        }
        let folder = self.folder(for: algorithm)
        let temporary = "\(folder)/.tmp-\(UUID().uuidString)"
        do throws(PinFetchError) {
            try Self.createDirectory(self.directory, parents: true)
            try Self.createDirectory(folder, parents: false)
            if let reason = self.distrust(algorithm) { return reason }  // what was there before the mkdir
            let copy = try PartialFile(path: temporary, fresh: true)
            _ = try FileCopy.copy(from: file, to: copy, clone: self.clone)
            try copy.setMode(0o444)
            let target = self.path(for: algorithm, digest: digest)
            guard rename(temporary, target) == 0 else { throw FileSystem.error("cannot rename onto", target) }
            return nil
        } catch {
            unlink(temporary)
            return "cannot store in the cache: \(error.message)"
        }
    }

    /// Where a checksum file or manifest fetched from `url` is kept between runs, with its
    /// verified record, so a rerun asks for it with a condition (``ConditionalRefresh``):
    /// `<directory>/inputs/<SHA-256 of the URL>`, its folders made. `nil`, with a one-line
    /// reason, when the cache is not to be trusted or the folder cannot be made.
    package func inputPath(for url: String) -> (path: String?, warning: String?) {
        let folder = "\(self.directory)/inputs"
        if let reason = self.distrust(folder: folder) { return (nil, reason) }
        do throws(PinFetchError) {
            try Self.createDirectory(self.directory, parents: true)
            try Self.createDirectory(folder, parents: false)
        } catch {
            return (nil, "cannot keep \(Redaction.url(url)) in the cache: \(error.message)")
        }
        if let reason = self.distrust(folder: folder) { return (nil, reason) }
        let digest = RunningDigest(algorithm: .sha256)
        Array(url.utf8).withUnsafeBytes { digest.update($0) }
        return ("\(folder)/\(Pin.hex(digest.finalize()))", nil)
    }

    /// Removes `entry` from the cache if its path still names it (a corrupt entry; another
    /// process may have replaced it with a good one meanwhile).
    func remove(_ entry: PartialFile) {
        if entry.isStill(at: entry.path) { unlink(entry.path) }
    }

    /// `mkdir` with mode 0755 (less under the umask, never more: a umask of 0 must not make a
    /// cache others can write), and with `parents` its missing parents alike; an existing
    /// directory is fine.
    private static func createDirectory(_ path: String, parents: Bool) throws(PinFetchError) {
        if parents, !FileSystem.exists(path) {
            let parent = FileSystem.directory(of: path)
            if parent != path, parent != ".", parent != "/" { try Self.createDirectory(parent, parents: true) }
        }
        guard mkdir(path, 0o755) == 0 || errno == EEXIST else {
            throw FileSystem.error("cannot create directory", path)
        }
    }
}
