import FoundationEssentials
@preconcurrency import Glibc
import Synchronization

extension CommandLineTool {
    /// Where the command writes: standard output and standard error, and what stderr can show.
    public struct Output: Sendable {
        /// Writes all of the bytes, returning 0, or the `errno` that stopped it (`EPIPE`).
        public typealias BinaryWriter = @Sendable (UnsafeRawBufferPointer) -> Int32

        public var standardOutput: @Sendable (String) -> Void
        public var standardError: @Sendable (String) -> Void
        /// The `errno` of the first write to standard output that failed (`EPIPE`: the reader
        /// closed the pipe; `ENOSPC`), or `nil`: what `--json`, `--dry-run` or `gc` printed was lost.
        public var standardOutputFailure: @Sendable () -> Int32?
        /// Standard error's capabilities as a terminal, or `nil` for a log (sparse progress lines).
        public var terminal: TerminalCapabilities?
        /// The verified bytes of `-o -`.
        public var standardOutputBytes: BinaryWriter

        public init(
            standardOutput: @escaping @Sendable (String) -> Void,
            standardError: @escaping @Sendable (String) -> Void,
            terminal: TerminalCapabilities?,
            standardOutputBytes: @escaping BinaryWriter = Output.writeAll(to: 1),
            standardOutputFailure: @escaping @Sendable () -> Int32? = { nil }
        ) {
            self.standardOutput = standardOutput
            self.standardError = standardError
            self.standardOutputFailure = standardOutputFailure
            self.terminal = terminal
            self.standardOutputBytes = standardOutputBytes
        }

        /// The process's own stdout and stderr, written with `write(2)`: a closed pipe or
        /// descriptor never stops the run (`FileHandle` traps on `EPIPE`); the first failure on
        /// stdout is kept for ``standardOutputFailure`` (the run then ends with exit 3).
        public static var process: Output {
            let out = Self.writeAll(to: 1)
            let err = Self.writeAll(to: 2)
            let failure = Mutex<Int32?>(nil)
            let closed = Self.closedAtStart.withLock { $0 }
            // `-o -` into a closed stdout fails too: the verified bytes never reach /dev/null.
            let bytes: BinaryWriter
            if closed.contains(1) {
                bytes = { (_: UnsafeRawBufferPointer) -> Int32 in Glibc.EBADF }
            } else {
                bytes = Self.writeAll(to: 1, stoppable: true)
            }
            return Output(
                standardOutput: { text in
                    // A closed stdout took nothing, though /dev/null holds its place.
                    let code = closed.contains(1) ? EBADF : Self.send(text, with: out)
                    if code != 0 { failure.withLock { $0 = $0 ?? code } }
                },
                standardError: { text in _ = Self.send(text, with: err) },
                terminal: TerminalCapabilities.standardError(environment: ProcessInfo.processInfo.environment),
                standardOutputBytes: bytes,
                standardOutputFailure: { failure.withLock { $0 } }
            )
        }

        /// Which of the standard descriptors (0, 1, 2) were closed when the process started.
        private static let closedAtStart = Mutex<Set<Int32>>([])

        /// Opens `/dev/null` on each of the descriptors 0, 1 and 2 that the process started without
        /// (`pinfetch >&-`), before any thread exists: else the first file, socket or event
        /// descriptor opened would take that number, and `--json` lines or messages would be
        /// written into it. What is printed for a closed stdout is then reported as lost
        /// (``standardOutputFailure``, exit 3).
        public static func reserveStandardDescriptors() {
            for descriptor: Int32 in 0...2 where fcntl(descriptor, F_GETFD) < 0 && errno == EBADF {
                let opened = open("/dev/null", O_RDWR)
                if opened == descriptor {
                    Self.closedAtStart.withLock { _ = $0.insert(descriptor) }
                } else if opened >= 0 {
                    close(opened)  // a lower one was free after all: leave things as they are
                }
            }
        }

        private static func send(_ text: String, with writer: BinaryWriter) -> Int32 {
            var text = text
            return text.withUTF8 { writer(UnsafeRawBufferPointer($0)) }
        }

        /// `write(2)` to `descriptor` until all bytes are out (`SIGPIPE` must be ignored, as
        /// `main` does, for `EPIPE` to come back instead). A `stoppable` writer (the bytes of
        /// `-o -`) is a ``StoppableWriter``: a stop signal ends it, never a reader that stopped.
        public static func writeAll(to descriptor: Int32, stoppable: Bool = false) -> BinaryWriter {
            if stoppable {
                let writer = StoppableWriter(descriptor: descriptor)
                return { bytes in writer.write(bytes) }
            }
            return { bytes in
                var offset = 0
                while offset < bytes.count {
                    let count = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                    if count < 0 {
                        if errno == EINTR { continue }
                        return errno
                    }
                    offset += count
                }
                return 0
            }
        }
    }
}
