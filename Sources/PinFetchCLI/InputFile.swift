@preconcurrency import Glibc
import PinFetch

/// The small files pinfetch is handed as input (`-H @FILE`, `-i`, `--checksum-file`,
/// `--signature`, `--trusted-key`), read to their end so that a pipe works as well as a file
/// (`-i -`, `-H @<(vault read …)`, `/dev/stdin`).
///
/// A pipe may have no writer yet, or one that never writes: a plain `open` or `read` would then
/// wait forever while the stop signals are held for the fetch, and only SIGKILL would end the
/// process. So the file is opened without waiting for a writer (`O_NONBLOCK`, which a FIFO
/// allows) and each read waits in `poll` in steps of 0.1 s, giving up as soon as a stop signal
/// came (``SignalCancellation/stopRequested``) or the task was cancelled.
enum InputFile {
    /// How often a wait for a writer looks at the stop signals, in milliseconds.
    private static let stepMilliseconds: Int32 = 100

    /// The bytes of the file at `path` (`-` for standard input); `nil` when it cannot be opened
    /// or read, or holds more than `limit` bytes.
    /// - Throws: ``PinFetchError/Code/cancelled`` when a stop signal comes (or the task is
    ///   cancelled) before the file is read to its end; nothing was created by then.
    static func contents(of path: String, limit: Int) throws(PinFetchError) -> [UInt8]? {
        // Standard input is shared with the parent: its file status flags are left alone.
        let fd = path == "-" ? dup(0) : open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            guard try Self.waitReadable(fd, path: path) else { return nil }
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR || errno == EAGAIN { continue }
            guard count >= 0 else { return nil }
            // The end may come with the stop signal (Ctrl-C ends `producer | pinfetch -i -` too).
            if count == 0 {
                try Self.checkStopped(path)
                return bytes
            }
            bytes += chunk[..<count]
            if bytes.count > limit { return nil }
        }
    }

    /// Throws when a stop signal came or the task was cancelled.
    private static func checkStopped(_ path: String) throws(PinFetchError) {
        guard SignalCancellation.stopRequested || Task.isCancelled else { return }
        throw PinFetchError(.cancelled, "stopped while waiting for \(SafeFileName.quoted(path)) to be written")
    }

    /// Waits until `fd` has bytes or its end to read (a FIFO without a writer has neither:
    /// Linux reports no hang-up before a writer came); `false` when `poll` fails.
    private static func waitReadable(_ fd: Int32, path: String) throws(PinFetchError) -> Bool {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        while true {
            try Self.checkStopped(path)
            let ready = poll(&entry, 1, Self.stepMilliseconds)
            if ready > 0 { return true }
            if ready < 0, errno != EINTR { return false }
        }
    }
}
