import FoundationEssentials
@preconcurrency import Glibc
import Synchronization

/// A private directory (mode 0700, `mkdtemp`) for files of one run: an input file fetched from
/// a URL, a download to standard output, the files `gpgv` reads.
package enum TemporaryDirectory {
    /// Where temporary directories go: `$TMPDIR` when it names an existing directory, else
    /// `/tmp`, as glibc's own temporary files do (a `TMPDIR` that is missing or a file is
    /// passed over, never created).
    package static var base: String {
        if let base = ProcessInfo.processInfo.environment["TMPDIR"], !base.isEmpty {
            var info = stat()
            if stat(base, &info) == 0, info.st_mode & S_IFMT == S_IFDIR { return base }
        }
        return "/tmp"
    }

    /// Makes a new directory `<base>/<prefix>XXXXXX` and returns its path.
    /// - Throws: ``PinFetchError/Code/fileIO`` when it cannot be created.
    package static func make(prefix: String) throws(PinFetchError) -> String {
        let base = Self.base
        var template = Array("\(base)/\(prefix)XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else {
            throw PinFetchError(
                .fileIO,
                "cannot create a temporary directory in \(base): \(String(cString: strerror(errno)))"
            )
        }
        return String(cString: made)
    }
}

/// A temporary directory this process holds (``TemporaryDirectory/make(prefix:)``): an exclusive
/// `flock` on the directory's own descriptor until ``remove()``, so a later run or `pinfetch gc`
/// that finds it (``TemporaryDirectory/collectAbandoned(prefix:)``) leaves it alone while this
/// process lives, and removes it once a `SIGKILL` left it behind. It holds the file
/// ``TemporaryDirectory/markName`` from its start, which tells it from a directory of the same
/// name that someone else made.
package final class HeldTemporaryDirectory: Sendable {
    package let path: String
    /// The directory's descriptor holding the lock, `-1` once let go.
    private let descriptor: Mutex<Int32>

    /// - Throws: ``PinFetchError/Code/fileIO`` when it cannot be created.
    package init(prefix: String) throws(PinFetchError) {
        self.path = try TemporaryDirectory.make(prefix: prefix)
        let descriptor = open(self.path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        if descriptor >= 0 { _ = flock(descriptor, LOCK_EX | LOCK_NB) }  // new: nobody else has it
        self.descriptor = Mutex(descriptor)
        let mark = open("\(self.path)/\(TemporaryDirectory.markName)", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if mark >= 0 {
            let written = TemporaryDirectory.markText.withUnsafeBytes { write(mark, $0.baseAddress, $0.count) }
            if written != TemporaryDirectory.markText.count { _ = ftruncate(mark, 0) }  // never a torn mark
            close(mark)
        }
    }

    /// Removes the directory and what is in it, then lets its lock go.
    package func remove() {
        try? FileManager.default.removeItem(atPath: self.path)
        self.descriptor.withLock { descriptor in
            if descriptor >= 0 { close(descriptor) }
            descriptor = -1
        }
    }

    deinit { self.descriptor.withLock { if $0 >= 0 { close($0) } } }
}

extension TemporaryDirectory {
    /// Seconds a directory must be left untouched before it is taken for abandoned: between
    /// `mkdtemp` and its `flock` a live run's directory holds no lock yet.
    static let abandonedAfter = 60.0

    /// The file a ``HeldTemporaryDirectory`` holds from its start, and what it says: only a
    /// directory with it is ever collected, so one of the same name that the user made is not.
    static let markName = ".pinfetch-temporary"
    static let markText = Array("a temporary directory of pinfetch, removed when no process holds it\n".utf8)

    /// Removes the directories `<base>/<prefix>*` that runs killed without a chance to clean up
    /// left: only a directory (never a link) this user owns, of mode 0700 as `mkdtemp` makes it,
    /// holding pinfetch's mark (``markName``) and otherwise only what one download leaves (a
    /// file and its sidecars, regular files all: ``holdsOnlyOneDownload(_:)``), untouched for
    /// ``abandonedAfter`` seconds, whose lock (``HeldTemporaryDirectory``) no process holds; it
    /// is removed while this process holds that lock. A directory with anything else in it is
    /// left as it is: what it holds is not provably pinfetch's.
    /// - Returns: The paths removed, with the bytes of the regular files each held.
    package static func collectAbandoned(prefix: String) -> [(path: String, bytes: Int64)] {
        let base = Self.base
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: base) else { return [] }
        var removed: [(path: String, bytes: Int64)] = []
        let now = Date().timeIntervalSince1970
        for name in names.sorted() where name.hasPrefix(prefix) {
            let path = "\(base)/\(name)"
            var info = stat()
            guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR, info.st_mode & 0o7777 == 0o700,
                info.st_uid == geteuid(),
                now - (Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9) >= Self.abandonedAfter
            else { continue }
            let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            guard descriptor >= 0 else { continue }
            defer { close(descriptor) }
            var opened = stat()
            // The lock is on the directory that was looked at, not one put in its place since.
            guard fstat(descriptor, &opened) == 0, opened.st_ino == info.st_ino, opened.st_dev == info.st_dev,
                Self.isMarked(path), Self.holdsOnlyOneDownload(path), flock(descriptor, LOCK_EX | LOCK_NB) == 0
            else { continue }
            let bytes = Self.regularFileBytes(under: path)
            if (try? FileManager.default.removeItem(atPath: path)) != nil { removed.append((path, bytes)) }
        }
        return removed
    }

    /// Whether `directory` holds pinfetch's mark: a regular file of this user's (not a link)
    /// that says ``markText``.
    private static func isMarked(_ directory: String) -> Bool {
        let path = "\(directory)/\(Self.markName)"
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_uid == geteuid() else { return false }
        return FileSystem.readSmallFile(path, limit: Self.markText.count + 1) == Self.markText
    }

    /// Whether `directory` holds, besides its mark, only regular files of one destination: a
    /// name `N` and any of `N.part`, `N.part.state`, `N.part.state.tmp`, `N.part.lock` and
    /// `N.part.cache` (``Sidecars``).
    static func holdsOnlyOneDownload(_ directory: String) -> Bool {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return false }
        let suffixes = [".part.state.tmp", ".part.state", ".part.lock", ".part.cache", ".part"]
        var destination: String?
        for name in names where name != Self.markName {
            var info = stat()
            guard lstat("\(directory)/\(name)", &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return false }
            let base = suffixes.first(where: { name.hasSuffix($0) }).map { String(name.dropLast($0.count)) } ?? name
            guard !base.isEmpty, destination == nil || destination == base else { return false }
            destination = base
        }
        return true
    }

    /// The bytes of the regular files under `directory`, links not followed.
    private static func regularFileBytes(under directory: String) -> Int64 {
        guard let names = try? FileManager.default.subpathsOfDirectory(atPath: directory) else { return 0 }
        return names.reduce(Int64(0)) { total, name in
            var info = stat()
            guard lstat("\(directory)/\(name)", &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return total }
            return total + Int64(info.st_size)
        }
    }
}
