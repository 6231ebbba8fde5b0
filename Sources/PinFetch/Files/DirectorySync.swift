@preconcurrency import Glibc

/// `fsync`s of directories shared between the files of a batch: a group
/// commit. A caller that renamed a file into a directory asks for a sync and returns only once an
/// `fsync` that began after its request has completed; one `fsync` then covers every rename
/// asked about before it began, so 8 workers finishing together cost one directory `fsync`, not
/// 8. The guarantee for each file is unchanged: when ``synchronize(_:)`` returns, its name is
/// durable.
final class DirectorySync: @unchecked Sendable {
    /// The one instance of the process: the files of every batch share it.
    static let shared = DirectorySync()

    private struct Directory {
        /// Requests made so far; each gets the next number.
        var requested = 0
        /// Requests covered by a completed `fsync`.
        var completed = 0
        /// An `fsync` runs now.
        var running = false
        /// The last `fsync` that failed, the requests it covered and its error.
        var failed: (through: Int, error: PinFetchError)?
    }

    private let condition = Condition()
    /// The `fsync` itself (a stand-in in tests).
    private let perform: @Sendable (String) throws(PinFetchError) -> Void
    /// One small entry per directory ever synced, kept: a waiter may still read it.
    private var directories: [String: Directory] = [:]
    private var fsyncs = 0

    /// - Parameter perform: What syncs a directory; `fsync` of it unless a test says otherwise.
    init(perform: @escaping @Sendable (String) throws(PinFetchError) -> Void = DirectorySync.fsync) {
        self.perform = perform
    }

    /// Requests made for `directory` so far (for tests).
    func requests(for directory: String) -> Int {
        self.condition.lock()
        defer { self.condition.unlock() }
        return self.directories[directory]?.requested ?? 0
    }

    /// `fsync`s run so far (for tests and the benchmark).
    var fsyncCount: Int {
        self.condition.lock()
        defer { self.condition.unlock() }
        return self.fsyncs
    }

    /// Makes the names in `directory` durable: returns once an `fsync` of it that began after
    /// this call has completed, running that `fsync` itself when none is running.
    /// - Throws: ``PinFetchError/Code/fileIO`` when the `fsync` that covers this call failed.
    func synchronize(_ directory: String) throws(PinFetchError) {
        self.condition.lock()
        defer { self.condition.unlock() }
        self.directories[directory, default: Directory()].requested += 1
        let ticket = self.directories[directory]!.requested
        while self.directories[directory]!.completed < ticket {
            if self.directories[directory]!.running {
                self.condition.wait()
                continue
            }
            // Every request made so far was made after its rename: this fsync covers them all.
            let through = self.directories[directory]!.requested
            self.directories[directory]!.running = true
            self.fsyncs += 1
            self.condition.unlock()
            var failure: PinFetchError?
            do throws(PinFetchError) {
                try self.perform(directory)
            } catch {
                failure = error
            }
            self.condition.lock()
            self.directories[directory]!.running = false
            self.directories[directory]!.completed = through
            // A later fsync that succeeded covers the requests of an earlier one that failed too.
            self.directories[directory]!.failed = failure.map { (through, $0) }
            self.condition.broadcast()
        }
        // The fsync that covered this request failed, and none has succeeded since.
        if let failed = self.directories[directory]!.failed, failed.through >= ticket {
            throw failed.error
        }
    }

    static func fsync(_ directory: String) throws(PinFetchError) {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw FileSystem.error("cannot open directory", directory) }
        defer { close(fd) }
        guard Glibc.fsync(fd) == 0 else { throw FileSystem.error("cannot fsync directory", directory) }
    }
}
