import FoundationEssentials
@preconcurrency import Glibc
import PinFetch

/// `-o -`: the body goes to a partial in a private temporary directory, and
/// only once the pin matched are the verified bytes copied to standard output, so a pipe never
/// sees an unverified byte. A mismatch writes nothing. A reader that closes the pipe early
/// (`| head -c 10`) ends the run with exit 3. The directory is removed in every case: a
/// download to standard output cannot be resumed by a later run. One a `SIGKILL` left behind is
/// removed by the next `-o -` run or `pinfetch gc` (``HeldTemporaryDirectory``).
struct StandardOutputDelivery {
    /// The prefix of the private directories in ``TemporaryDirectory/base``.
    static let prefix = "pinfetch-stdout-"
    /// The private directory (mode 0700) the file is downloaded into, held by this process.
    let held: HeldTemporaryDirectory
    var directory: String { self.held.path }
    /// Where the verified file lands before it is copied out.
    let path: String

    /// Makes the directory under ``TemporaryDirectory/base``, naming the file after `url`.
    /// - Throws: ``PinFetchError/Code/fileIO`` when it cannot be created.
    init(for url: String) throws(PinFetchError) {
        _ = TemporaryDirectory.collectAbandoned(prefix: Self.prefix)  // what killed runs left
        self.held = try HeldTemporaryDirectory(prefix: Self.prefix)
        let name = (try? HTTPURL(url)).flatMap { try? Arguments.fileName(of: $0) } ?? "download"
        self.path = "\(self.held.path)/\(name)"
    }

    /// Copies the verified file to `write` (standard output), then returns `result` as the user
    /// sees it: path `-`, or failed with exit 3 when standard output would not take the bytes.
    func deliver(_ result: FetchResult, to write: CommandLineTool.Output.BinaryWriter) -> FetchResult {
        var shown = result
        shown.path = "-"
        shown.partial = nil
        if let error = result.error {
            // The private file is gone with its directory: messages name standard output instead.
            shown.error = PinFetchError(
                error.code,
                error.message.replacing(self.path, with: "-"),
                underlying: error.underlying
            )
            return shown
        }
        let fd = open(self.path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            shown.error = PinFetchError(.fileIO, "cannot read \(self.path): \(String(cString: strerror(errno)))")
            return shown
        }
        defer { close(fd) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        var written: Int64 = 0
        while true {
            let count = read(fd, buffer.baseAddress, buffer.count)
            if count < 0, errno == EINTR { continue }
            guard count > 0 else {
                if count < 0 {
                    shown.error = PinFetchError(
                        .fileIO,
                        "cannot read \(self.path): \(String(cString: strerror(errno)))"
                    )
                }
                return shown
            }
            let code = write(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
            if code == ECANCELED {
                shown.error = PinFetchError(
                    .cancelled,
                    "stopped while writing to standard output, after \(written) of \(result.bytes) bytes"
                )
                return shown
            }
            guard code == 0 else {
                let why = code == EPIPE ? "the reader closed the pipe" : String(cString: strerror(code))
                shown.error = PinFetchError(.fileIO, "standard output took \(written) of \(result.bytes) bytes: \(why)")
                return shown
            }
            written += Int64(count)
        }
    }

    /// Removes the directory and what is in it.
    func remove() {
        self.held.remove()
    }
}
