import FoundationEssentials
@preconcurrency import Glibc

/// The advisory lock on `<dest>.part.lock` that keeps one process per destination (<doc:ResumeAndCheckpoints#One-process-per-destination>).
///
/// Uses `flock(2)`. The lock file is removed while still held when the fetch ends, so a
/// failed fetch leaves nothing behind; a waiter that then wins the lock on the removed file
/// notices that the path no longer names its file (inode check) and starts over, so two
/// processes never both believe they hold the lock.
final class DestinationLock {
    let path: String
    private var descriptor: Int32

    /// Takes the lock, waiting up to `timeout` seconds (`nil` waits forever) or until `isCancelled`;
    /// `waiting` is called every 50 ms while another process holds it.
    /// - Throws: ``PinFetchError/Code/destinationLocked`` when the time runs out;
    ///   ``PinFetchError/Code/cancelled`` when cancelled while waiting;
    ///   ``PinFetchError/Code/fileIO`` when the lock file cannot be created.
    init(
        path: String,
        timeout: Double?,
        isCancelled: () -> Bool = { false },
        waiting: () -> Void = {}
    ) throws(PinFetchError) {
        self.path = path
        let deadline = timeout.map { Date().addingTimeInterval($0) }
        while true {
            // Never through a symbolic link: one planted there would create or lock another file.
            let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0o600)
            guard fd >= 0 else { throw FileSystem.error("cannot create lock file", path) }
            var opened = stat()
            guard fstat(fd, &opened) == 0, (opened.st_mode & S_IFMT) == S_IFREG else {
                close(fd)
                throw PinFetchError(.fileIO, "\(path) is not a regular file: remove it, or choose another output")
            }
            // pinfetch's lock files are empty: one with bytes is someone's file (another
            // download's output named so), and a lock is removed when released.
            guard opened.st_size == 0 else {
                close(fd)
                throw PinFetchError(
                    .fileIO,
                    "\(path) is not a lock file pinfetch made (it holds bytes): it is left alone; move it away, "
                        + "or choose another output"
                )
            }
            while flock(fd, LOCK_EX | LOCK_NB) != 0 {
                let code = errno
                guard code == EWOULDBLOCK || code == EINTR else {
                    close(fd)
                    throw FileSystem.error("cannot lock", path, errno: code)
                }
                if isCancelled() {
                    close(fd)
                    throw PinFetchError(.cancelled, "cancelled while waiting for \(path)")
                }
                if let deadline, Date() >= deadline {
                    close(fd)
                    // The option is the command line's; the library's is FetchOptions.lockTimeout.
                    let waited = (timeout ?? 0) > 0 ? " after \(Text.number(timeout ?? 0)) s" : ""
                    throw PinFetchError(
                        .destinationLocked,
                        "\(path) is held by another process\(waited) (another pinfetch? --lock-timeout S waits longer)"
                    )
                }
                waiting()
                usleep(50_000)
            }
            var held = stat()
            var named = stat()
            if fstat(fd, &held) == 0, stat(path, &named) == 0, held.st_ino == named.st_ino, held.st_dev == named.st_dev
            {
                self.descriptor = fd
                return
            }
            close(fd)  // the holder before us removed this file: lock the new one
        }
    }

    /// Removes the lock file (only if the path still names it: something planted there meanwhile
    /// is left alone) and releases the lock. Idempotent.
    func release() {
        guard self.descriptor >= 0 else { return }
        var held = stat()
        var named = stat()
        if fstat(self.descriptor, &held) == 0, lstat(self.path, &named) == 0, held.st_ino == named.st_ino,
            held.st_dev == named.st_dev
        {
            unlink(self.path)
        }
        close(self.descriptor)
        self.descriptor = -1
    }

    deinit { self.release() }
}
