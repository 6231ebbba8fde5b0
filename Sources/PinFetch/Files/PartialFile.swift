import FoundationEssentials
@preconcurrency import Glibc

/// The unverified bytes of a download, `<dest>.part`, opened for reading and writing.
///
/// Writes go to explicit offsets (`pwrite`), so the file position never matters. Every
/// failing call throws ``PinFetchError/Code/fileIO`` with `strerror` and the path. Owns its
/// file descriptor and closes it once.
final class PartialFile: Sendable {
    let path: String
    /// The open file; closed by `deinit` only.
    let descriptor: Int32

    /// Opens `path` for reading and writing, creating it (mode 0600: unverified bytes are
    /// private until the commit gives them the usual mode) when absent; or, with
    /// `readOnly`, opens an existing file for reading only. Only a regular file is opened: never
    /// through a symbolic link (unless `followingLinks`, for a destination the user named), and
    /// never waiting on a FIFO (what is planted beside a destination).
    /// A `fresh` file is made anew: whatever is at `path` is removed (a link name only, never
    /// what it points to) and the file is created with `O_EXCL`, so nothing planted there in
    /// between (a hard link to another file) is ever truncated or written. A file opened as the
    /// partial of a destination (`partialOf`) gets its ``PartialMark``.
    /// - Throws: ``PinFetchError/Code/fileIO`` naming the path when it cannot be opened or is
    ///   not a regular file.
    init(
        path: String,
        readOnly: Bool = false,
        followingLinks: Bool = false,
        fresh: Bool = false,
        partialOf destination: String? = nil
    )
        throws(PinFetchError)
    {
        let flags = O_CLOEXEC | O_NONBLOCK | (followingLinks ? 0 : O_NOFOLLOW)
        var fd =
            readOnly
            ? open(path, O_RDONLY | flags) : open(path, O_RDWR | O_CREAT | (fresh ? O_EXCL : 0) | flags, 0o600)
        if fresh, fd < 0, errno == EEXIST {
            // Something is there: its name goes (never what a link points to), then the new file
            // is made, still exclusively. Asked only when it is there: an `unlink` takes the
            // directory's lock, which every file of a batch in that directory contends for.
            try FileSystem.remove(path)
            fd = open(path, O_RDWR | O_CREAT | O_EXCL | flags, 0o600)
        }
        guard fd >= 0 else {
            if errno == ELOOP {
                throw PinFetchError(.fileIO, "\(path) is a symbolic link: pinfetch does not write through one")
            }
            throw FileSystem.error("cannot open", path)
        }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            close(fd)
            throw PinFetchError(.fileIO, "\(path) is not a regular file: remove it, or choose another output")
        }
        if let destination { PartialMark.set(fd, destination: destination) }
        self.path = path
        self.descriptor = fd
    }

    /// Whether `path` still names this open file (`lstat` of the path has the descriptor's
    /// device and inode): the commit renames a path, and must rename the file it hashed.
    func isStill(at path: String) -> Bool {
        var open = stat()
        var named = stat()
        return fstat(self.descriptor, &open) == 0 && lstat(path, &named) == 0 && open.st_dev == named.st_dev
            && open.st_ino == named.st_ino
    }

    deinit { close(self.descriptor) }

    /// The file's size in bytes.
    func size() throws(PinFetchError) -> Int64 {
        var info = stat()
        guard fstat(self.descriptor, &info) == 0 else { throw FileSystem.error("cannot stat", self.path) }
        return Int64(info.st_size)
    }

    /// Bytes an unprivileged writer may still add on the file's file system (`fstatvfs`:
    /// `f_bavail × f_frsize`), or `nil` when it cannot tell.
    func freeBytes() -> Int64? {
        var info = statvfs()
        guard fstatvfs(self.descriptor, &info) == 0 else { return nil }
        let bytes = UInt64(info.f_bavail).multipliedReportingOverflow(by: UInt64(info.f_frsize))
        return bytes.overflow ? Int64.max : Int64(clamping: bytes.partialValue)
    }

    /// Device, inode, size and modification time of the open file (`fstat`).
    func identity() throws(PinFetchError) -> PartialIdentity {
        var info = stat()
        guard fstat(self.descriptor, &info) == 0 else { throw FileSystem.error("cannot stat", self.path) }
        return PartialIdentity(
            device: UInt64(info.st_dev),
            inode: UInt64(info.st_ino),
            size: Int64(info.st_size),
            modified: Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
        )
    }

    /// The file's `st_ctim` in nanoseconds since the epoch, `nil` when it cannot be read.
    func changeTime() -> Int64? {
        var info = stat()
        guard fstat(self.descriptor, &info) == 0 else { return nil }
        return Int64(info.st_ctim.tv_sec) * 1_000_000_000 + Int64(info.st_ctim.tv_nsec)
    }

    /// The user ID that owns the file (`fstat`).
    func owner() throws(PinFetchError) -> uid_t {
        var info = stat()
        guard fstat(self.descriptor, &info) == 0 else { throw FileSystem.error("cannot stat", self.path) }
        return info.st_uid
    }

    /// Sets the file's access and modification times to now (`futimens` with `UTIME_NOW`), as
    /// `touch` does; the caller must own the file or be able to write it.
    func touch() throws(PinFetchError) {
        let now = timespec(tv_sec: 0, tv_nsec: (1 << 30) - 1)  // UTIME_NOW (sys/stat.h), not imported
        var times = [now, now]
        guard futimens(self.descriptor, &times) == 0 else { throw FileSystem.error("cannot touch", self.path) }
    }

    /// Sets the modification time to `seconds` since the epoch; the access time is left as is.
    func setModificationTime(_ seconds: Int64) throws(PinFetchError) {
        let omit = timespec(tv_sec: 0, tv_nsec: (1 << 30) - 2)  // UTIME_OMIT (sys/stat.h), not imported
        var times = [omit, timespec(tv_sec: Int(seconds), tv_nsec: 0)]
        guard futimens(self.descriptor, &times) == 0 else {
            throw FileSystem.error("cannot set the modification time of", self.path)
        }
    }

    /// Cuts the file to `length` bytes (bytes past a checkpoint were never covered by a durable hash).
    func truncate(to length: Int64) throws(PinFetchError) {
        guard ftruncate(self.descriptor, off_t(length)) == 0 else {
            throw FileSystem.error("cannot truncate", self.path)
        }
    }

    /// Writes all of `bytes` at `offset`, retrying short writes and `EINTR`.
    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(PinFetchError) {
        guard var base = bytes.baseAddress else { return }
        var remaining = bytes.count
        var position = off_t(offset)
        while remaining > 0 {
            let written = pwrite(self.descriptor, base, remaining, position)
            if written < 0 {
                if errno == EINTR { continue }
                throw FileSystem.error("cannot write", self.path)
            }
            base += written
            remaining -= written
            position += off_t(written)
        }
    }

    /// Reads up to `buffer.count` bytes at `offset`; returns how many (0 at end of file).
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(PinFetchError) -> Int {
        while true {
            let count = pread(self.descriptor, buffer.baseAddress, buffer.count, off_t(offset))
            if count >= 0 { return count }
            if errno != EINTR { throw FileSystem.error("cannot read", self.path) }
        }
    }

    /// Sets the file's permission bits (`fchmod`).
    func setMode(_ mode: mode_t) throws(PinFetchError) {
        guard fchmod(self.descriptor, mode) == 0 else { throw FileSystem.error("cannot chmod", self.path) }
    }

    /// Bytes written between two calls of ``startWriteback(from:count:)`` by a streaming writer.
    static let writebackStep: Int64 = 8 << 20

    /// Asks the kernel to start writing `count` bytes at `offset` back to the disk now, without
    /// waiting (`sync_file_range(SYNC_FILE_RANGE_WRITE)`, the pattern Linux documents for
    /// streaming writers): the disk works while the network does, and a later `fsync` finds
    /// little left to flush. Advisory: it makes nothing durable, and a failure is ignored.
    func startWriteback(from offset: Int64, count: Int64) {
        _ = syncFileRange(self.descriptor, off_t(offset), off_t(count), 2)  // SYNC_FILE_RANGE_WRITE
    }

    /// Makes the written bytes durable (`fsync`).
    func synchronize() throws(PinFetchError) {
        guard fsync(self.descriptor) == 0 else { throw FileSystem.error("cannot fsync", self.path) }
    }
}

/// Small file-system steps of the commit protocol, each throwing ``PinFetchError/Code/fileIO``.
enum FileSystem {
    static func error(_ what: String, _ path: String, errno code: Int32 = errno) -> PinFetchError {
        PinFetchError(.fileIO, "\(what) \(path): \(String(cString: strerror(code)))", underlying: Int(code))
    }

    /// The mode a new file gets from `open(…, 0666)` under this process's umask, as curl's and
    /// wget's output files do; read from `/proc/self/status` (setting the umask to read it would
    /// race with other threads creating files). 0644 when it cannot be read.
    static let creationMode: mode_t = {
        let status = String(decoding: Self.readSmallFile("/proc/self/status", limit: 1 << 16) ?? [], as: UTF8.self)
        let line = status.split(separator: "\n").first { $0.hasPrefix("Umask:") }
        let mask = line.flatMap { mode_t($0.dropFirst("Umask:".count).trimmingWhitespace(), radix: 8) }
        return 0o666 & ~(mask ?? 0o022)
    }()

    /// `true` when something exists at `path` (not following a final symbolic link).
    static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    /// `true` when `path` names a regular file (following symbolic links unless told not to).
    static func isRegularFile(_ path: String, followingLinks: Bool = true) -> Bool {
        var info = stat()
        return (followingLinks ? stat(path, &info) : lstat(path, &info)) == 0 && (info.st_mode & S_IFMT) == S_IFREG
    }

    /// Size in bytes of the file at `path`, or `nil` when there is none.
    static func size(of path: String) -> Int64? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Int64(info.st_size)
    }

    /// Removes `path`; a missing file is fine.
    static func remove(_ path: String) throws(PinFetchError) {
        guard unlink(path) == 0 || errno == ENOENT else { throw Self.error("cannot remove", path) }
    }

    /// Removes `path` only when it is a regular file (not following a link): what someone
    /// planted at a sidecar's name (a FIFO, a link) is left alone, as its error said.
    static func removeRegularFile(_ path: String) throws(PinFetchError) {
        var info = stat()
        guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return }
        try Self.remove(path)
    }

    /// Reads a whole small regular file, at most `limit` bytes; `nil` when absent, unreadable,
    /// larger, or not a regular file (never waiting on a FIFO swapped in after a check).
    static func readSmallFile(_ path: String, limit: Int) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        // Sized by the file (one byte more shows that it grew), not by `limit`: zeroing a 64 MiB
        // buffer to read a 200 KiB CA bundle cost more than the rest of a small batch.
        var bytes = [UInt8](repeating: 0, count: min(limit + 1, max(4096, Int(info.st_size) + 1)))
        var total = 0
        while total <= limit {
            if total == bytes.count { bytes += [UInt8](repeating: 0, count: min(limit + 1, 2 * bytes.count) - total) }
            let count = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + total, $0.count - total) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { return nil }
            if count == 0 { break }
            total += count
        }
        guard total <= limit else { return nil }
        return Array(bytes[..<total])
    }

    /// Writes `bytes` to `path` durably and atomically: temporary file → `fsync` → `rename`.
    static func replaceAtomically(_ path: String, with bytes: [UInt8]) throws(PinFetchError) {
        let temporary = path + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw Self.error("cannot create", temporary) }
        var failure: PinFetchError?
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0, errno == EINTR { continue }
                guard written > 0 else {
                    failure = Self.error("cannot write", temporary)
                    return
                }
                offset += written
            }
        }
        if failure == nil, fsync(fd) != 0 { failure = Self.error("cannot fsync", temporary) }
        close(fd)
        if failure == nil, rename(temporary, path) != 0 { failure = Self.error("cannot rename onto", path) }
        if let failure {
            unlink(temporary)
            throw failure
        }
    }

    /// Creates `directory` and its missing parents (mode 0755 under the umask), like `mkdir -p`,
    /// and `fsync`s the parent of each one created, so a file committed into a new directory
    /// (a mirrored tree) is reachable after a crash.
    static func createDirectories(_ directory: String) throws(PinFetchError) {
        guard !Self.exists(directory) else { return }
        let parent = Self.directory(of: directory)
        if parent != directory { try Self.createDirectories(parent) }
        guard mkdir(directory, 0o755) == 0 || errno == EEXIST else {
            throw Self.error("cannot create directory", directory)
        }
        try Self.synchronizeDirectory(of: directory)
    }

    /// `rename(from, to)` then `fsync` of the directory holding `to`, so the new name is durable.
    static func renameDurably(_ from: String, to: String) throws(PinFetchError) {
        guard rename(from, to) == 0 else { throw Self.error("cannot rename \(from) onto", to) }
        try Self.synchronizeDirectory(of: to)
    }

    /// Moves `from` to `to` only if nothing is at `to` (a hard link, then the old name removed:
    /// `link` fails where `rename` would replace), then `fsync`s the directory. For names a
    /// server chose, which never replace a file, even one created while the download ran. On a
    /// file system without hard links it falls back to `rename`.
    /// - Throws: ``PinFetchError/Code/fileIO``; for an existing `to`, naming it.
    static func renameWithoutReplacing(_ from: String, to: String) throws(PinFetchError) {
        if link(from, to) != 0 {
            let code = errno
            guard code == EPERM || code == EOPNOTSUPP || code == EMLINK else {
                if code == EEXIST {
                    throw PinFetchError(.fileIO, "\(to) exists already: a name the server chose never replaces a file")
                }
                throw Self.error("cannot link \(from) to", to, errno: code)
            }
            return try Self.renameDurably(from, to: to)
        }
        try Self.remove(from)
        try Self.synchronizeDirectory(of: to)
    }

    /// `fsync` of the directory holding `path`, so a name created or renamed there is durable.
    /// Concurrent calls for one directory share `fsync`s (``DirectorySync``).
    static func synchronizeDirectory(of path: String) throws(PinFetchError) {
        try DirectorySync.shared.synchronize(Self.directory(of: path))
    }

    /// The directory part of `path` (`.` for a bare name).
    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}

/// glibc's `sync_file_range` (declared only with `_GNU_SOURCE`, so not in the Glibc module).
@_silgen_name("sync_file_range")
private func syncFileRange(_ fd: Int32, _ offset: off_t, _ count: off_t, _ flags: UInt32) -> Int32
