@preconcurrency import Glibc
import Synchronization

/// Writes the bytes of `-o -` to standard output without ever blocking where a stop signal
/// cannot end the run: a reader that stops reading (`pinfetch -o - URL | slow-consumer`, a
/// suspended pager) would otherwise hold a blocking `write` through every SIGINT and SIGTERM.
///
/// It waits for room with `poll` in slices of 100 ms and looks at
/// ``SignalCancellation/stopRequested`` before each write; a stop ends it with `ECANCELED`.
/// Into a pipe or FIFO it writes through a descriptor of its own opened non-blocking
/// (`/proc/self/fd/N` is a new open file description of the same pipe: the parent's stays as it
/// was), so a write takes what fits and never waits (where it cannot be opened, writes are of at
/// most `PIPE_BUF` bytes, which a pipe that polled writable takes at once); into a socket with
/// `send(MSG_DONTWAIT)`, which takes what fits; elsewhere (a file, a terminal) writes are at most
/// 1 MiB each.
final class StoppableWriter: Sendable {
    private let descriptor: Int32
    /// Where writes go, how many bytes each may carry, and whether they are `send`s without
    /// waiting (a socket), decided at the first write.
    private let target = Mutex<(descriptor: Int32, limit: Int, owned: Bool, socket: Bool)?>(nil)

    init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    deinit { self.target.withLock { if let target = $0, target.owned { close(target.descriptor) } } }

    /// Writes all of `bytes`; returns 0, the `errno` of a failed write, or `ECANCELED` after a
    /// stop signal.
    func write(_ bytes: UnsafeRawBufferPointer) -> Int32 {
        let (target, limit, socket) = self.destination()
        var offset = 0
        while offset < bytes.count {
            var ready = pollfd(fd: target, events: Int16(POLLOUT), revents: 0)
            let polled = poll(&ready, 1, 100)
            if polled < 0, errno != EINTR { return errno }
            // Looked at after every poll, ready or not: at most 100 ms after a signal.
            if SignalCancellation.stopRequested { return ECANCELED }
            guard polled > 0 else { continue }
            let length = min(bytes.count - offset, limit)
            let count =
                socket
                ? send(target, bytes.baseAddress! + offset, length, Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
                : Glibc.write(target, bytes.baseAddress! + offset, length)
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                return errno
            }
            offset += count
        }
        return 0
    }

    /// The descriptor to write to, the most one write may carry, and whether it is a socket
    /// (sent to without waiting): a non-blocking descriptor of the same pipe (any length), the
    /// pipe itself (`PIPE_BUF`), a socket (any length), or the descriptor (1 MiB).
    private func destination() -> (Int32, Int, Bool) {
        self.target.withLock { known in
            if let known { return (known.descriptor, known.limit, known.socket) }
            var info = stat()
            var chosen = (descriptor: self.descriptor, limit: 1 << 20, owned: false, socket: false)
            let type = fstat(self.descriptor, &info) == 0 ? info.st_mode & S_IFMT : 0
            if type == S_IFIFO {
                let fd = open("/proc/self/fd/\(self.descriptor)", O_WRONLY | O_NONBLOCK | O_CLOEXEC)
                chosen = fd >= 0 ? (fd, Int.max, true, false) : (self.descriptor, Int(PIPE_BUF), false, false)
            } else if type == S_IFSOCK {
                chosen = (self.descriptor, Int.max, false, true)
            }
            known = chosen
            return (chosen.descriptor, chosen.limit, chosen.socket)
        }
    }
}
