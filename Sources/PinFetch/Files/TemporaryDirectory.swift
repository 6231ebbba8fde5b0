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
/// process lives, and removes it once a `SIGKILL` left it behind.
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

    /// Removes the directories `<base>/<prefix>*` that runs killed without a chance to clean up
    /// left: only a directory (never a link) this user owns, untouched for ``abandonedAfter``
    /// seconds, whose lock (``HeldTemporaryDirectory``) no process holds; it is removed while
    /// this process holds that lock.
    /// - Returns: The paths removed, with the bytes of the regular files each held.
    package static func collectAbandoned(prefix: String) -> [(path: String, bytes: Int64)] {
        let base = Self.base
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: base) else { return [] }
        var removed: [(path: String, bytes: Int64)] = []
        let now = Date().timeIntervalSince1970
        for name in names.sorted() where name.hasPrefix(prefix) {
            let path = "\(base)/\(name)"
            var info = stat()
            guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR, info.st_uid == geteuid(),
                now - (Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9) >= Self.abandonedAfter
            else { continue }
            let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            guard descriptor >= 0 else { continue }
            defer { close(descriptor) }
            var opened = stat()
            // The lock is on the directory that was looked at, not one put in its place since.
            guard fstat(descriptor, &opened) == 0, opened.st_ino == info.st_ino, opened.st_dev == info.st_dev,
                flock(descriptor, LOCK_EX | LOCK_NB) == 0
            else { continue }
            let bytes = Self.regularFileBytes(under: path)
            if (try? FileManager.default.removeItem(atPath: path)) != nil { removed.append((path, bytes)) }
        }
        return removed
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
