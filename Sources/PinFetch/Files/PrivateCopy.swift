import FoundationEssentials
@preconcurrency import Glibc

/// A copy of a small file's bytes that no other process can reach or replace, for a library that
/// opens a file by path again for each request (libcurl's netrc): the copy has no name (created,
/// unlinked, then written: the bytes never sit under a name in `$TMPDIR`), and ``path`` is its
/// `/proc/self/fd/N` link, which opens the same file. Gone with the process, even after SIGKILL.
///
/// So a file swapped for a FIFO while the run goes on (an open that would wait forever inside a
/// transfer, through every stop signal) or edited meanwhile changes nothing: the run uses what
/// the file held when it started. `Sendable`: never written after ``init(_:)``.
package final class PrivateCopy: Sendable {
    private let descriptor: Int32

    /// The path libcurl opens: `/proc/self/fd/N`.
    package var path: String { "/proc/self/fd/\(self.descriptor)" }

    /// A nameless copy of `bytes`, readable by this process only; `nil` when the temporary
    /// directory cannot hold it.
    package init?(_ bytes: [UInt8]) {
        let directory = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array((directory + "/pinfetch-copy-XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }  // mode 0600
        guard fd >= 0 else { return nil }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        _ = template.withUnsafeBufferPointer { unlink($0.baseAddress!) }
        var written = 0
        let complete = bytes.withUnsafeBytes { buffer -> Bool in
            while written < buffer.count {
                let count = write(fd, buffer.baseAddress! + written, buffer.count - written)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { return false }
                written += count
            }
            return true
        }
        guard complete else {
            close(fd)
            return nil
        }
        self.descriptor = fd
    }

    deinit { close(self.descriptor) }
}
