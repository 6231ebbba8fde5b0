@preconcurrency import Glibc
import Synchronization

/// `<dest>.part.state`: the checkpoints of one partial in fixed slots (``CheckpointSlots``),
/// updated in place with `pwrite` so that no write can tear or lose the newest durable record
/// (<doc:ResumeAndCheckpoints#The-rolling-hash-checkpoint>). Durable records go to the two durable
/// slots in turn, each write followed by `fsync`, so the one before survives a torn write; a
/// torn light slot fails its CRC and is ignored.
///
/// Not thread-safe for writes of the same kind; a light write and a durable write may run at
/// once (they touch different slots).
final class CheckpointFile: Sendable {
    typealias Records = CheckpointSlots.Records
    static let slotSize = CheckpointSlots.slotSize
    static let lightSlot = CheckpointSlots.lightSlot
    static let maximumSize = CheckpointSlots.maximumSize

    let path: String
    /// The open file (`-1` until the first write creates it), and whether this object created
    /// it and has not yet made its name durable.
    private let opened = Mutex((descriptor: Int32(-1), created: false))
    /// The sequence number of the next durable record.
    private let nextSequence: Mutex<UInt64>

    /// The state file at `path`, continuing its durable sequence. Nothing is created before
    /// the first write: a body that ends before its first checkpoint leaves no file.
    init(path: String) {
        self.path = path
        self.nextSequence = Mutex((Self.read(path)?.newestSequence ?? 0) &+ 1)
    }

    deinit {
        self.opened.withLock { if $0.descriptor >= 0 { close($0.descriptor) } }
    }

    /// Writes `record` to the next durable slot with the next sequence number and makes it
    /// durable (`fsync`; the first time, also the directory that holds the new file). The caller
    /// has made the bytes it describes durable first.
    /// - Throws: ``PinFetchError/Code/fileIO`` when a write or `fsync` fails.
    func writeDurable(_ record: Checkpoint) throws(PinFetchError) {
        try self.nextSequence.withLock { (next: inout UInt64) throws(PinFetchError) in
            var record = record
            record.sequence = next
            try self.write(record, slot: Int(next % 2))
            guard fsync(try self.descriptor()) == 0 else { throw FileSystem.error("cannot fsync", self.path) }
            next &+= 1
        }
        let created = self.opened.withLock { opened in
            defer { opened.created = false }
            return opened.created
        }
        if created { try FileSystem.synchronizeDirectory(of: self.path) }
    }

    /// Writes `record` to the light slot, without `fsync`.
    /// - Throws: ``PinFetchError/Code/fileIO`` when the write fails.
    func writeLight(_ record: Checkpoint) throws(PinFetchError) {
        var record = record
        record.sequence = nil
        try self.write(record, slot: Self.lightSlot)
    }

    /// Empties the light slot (after the partial was cut below its offset).
    /// - Throws: ``PinFetchError/Code/fileIO`` when the write fails.
    func clearLight() throws(PinFetchError) {
        try self.write(bytes: [0], at: Self.lightSlot * Self.slotSize)
    }

    /// Whether `record` fits in a slot.
    static func fits(_ record: Checkpoint) -> Bool { CheckpointSlots.slot(of: record) != nil }

    /// The intact records of the state file at `path`; `nil` when there is none, it is not a
    /// regular file (never read through a symbolic link, never waited on as a FIFO), or it cannot
    /// be read.
    static func read(_ path: String) -> Records? {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        guard Self.isRegularFile(fd) else { return nil }
        return CheckpointSlots.records(in: Self.readAll(fd))
    }

    private static func isRegularFile(_ fd: Int32) -> Bool {
        var info = stat()
        return fstat(fd, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
    }

    private static func readAll(_ fd: Int32) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: Self.maximumSize)
        var total = 0
        while total < bytes.count {
            let count = bytes.withUnsafeMutableBytes {
                pread(fd, $0.baseAddress! + total, $0.count - total, off_t(total))
            }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            total += count
        }
        return Array(bytes[..<total])
    }

    private func write(_ record: Checkpoint, slot: Int) throws(PinFetchError) {
        guard let bytes = CheckpointSlots.slot(of: record) else {
            throw PinFetchError(.fileIO, "cannot write \(self.path): a checkpoint larger than its slot")
        }
        try self.write(bytes: bytes, at: slot * Self.slotSize)
    }

    /// The open file, created on first use with mode 0600 (it describes a download nobody else
    /// needs); never opened through a symbolic link, never anything but a regular file.
    private func descriptor() throws(PinFetchError) -> Int32 {
        try self.opened.withLock { (opened: inout (descriptor: Int32, created: Bool)) throws(PinFetchError) in
            if opened.descriptor >= 0 { return opened.descriptor }
            let existed = FileSystem.exists(self.path)
            let fd = open(self.path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0o600)
            guard fd >= 0 else { throw FileSystem.error("cannot open", self.path) }
            guard Self.isRegularFile(fd) else {
                close(fd)
                throw PinFetchError(.fileIO, "cannot write \(self.path): not a regular file")
            }
            opened = (fd, !existed)
            return fd
        }
    }

    private func write(bytes: [UInt8], at offset: Int) throws(PinFetchError) {
        let descriptor = try self.descriptor()
        var written = 0
        while written < bytes.count {
            let count = bytes.withUnsafeBytes {
                pwrite(descriptor, $0.baseAddress! + written, $0.count - written, off_t(offset + written))
            }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { throw FileSystem.error("cannot write", self.path) }
            written += count
        }
    }
}
