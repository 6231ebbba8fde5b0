import FoundationEssentials
@preconcurrency import Glibc

/// What was verified of a placed file, kept on the file in the extended attribute
/// `user.pinfetch` (<doc:ResumeAndCheckpoints#The-verified-record>): its digests, size, device,
/// inode, modification and change times (nanoseconds), and the validator and URL it came from.
///
/// A rerun whose destination still matches the record takes the recorded digest instead of
/// reading the file (``describes(_:)``); anything else is hashed as before. The change time is
/// what makes the record hard to fool by accident: any write, `truncate`, `chmod`, `touch -r`,
/// `cp -p` or restore sets it to "now", and no call lets a process set it back. Setting the
/// record is itself a change, so the record cannot hold the file's final change time: it holds
/// the change time a provisional record left just before (``changed``) and a bound
/// ``changedBy`` at most ``window`` later, and the set is repeated until the change time it
/// left lies between the two (else no record is left). A change within that window after the
/// record (or within one clock tick, where the file system keeps coarse times) is not told
/// apart. What the record does not prove: that nobody who can write the file (its owner, who
/// can also write the record) forged it, or anything written to the block device underneath.
struct VerifiedRecord: Codable, Equatable, Sendable {
    /// The attribute's name (xattr(7), `user.` namespace).
    static let attribute = "user.pinfetch"
    /// The record's format; another version is ignored.
    static let formatVersion = 1
    /// How long after the provisional record's change time the file's may lie (nanoseconds):
    /// one `fstat` and one `fsetxattr` take microseconds; 1 ms leaves room for a loaded machine.
    static let window: Int64 = 1_000_000
    /// Records larger than this are neither written nor read (bytes): one attribute block.
    static let maximumSize = 2048

    var version = Self.formatVersion
    /// The file's length in bytes.
    var size: Int64
    var device: UInt64
    var inode: UInt64
    /// `st_mtim`, and the provisional record's `st_ctim` and the latest the final one's may be,
    /// in nanoseconds since the epoch.
    var modified: Int64
    var changed: Int64
    var changedBy: Int64
    /// Lower-case hex digests by algorithm name (`sha256`, `sha384`, `sha512`).
    var digests: [String: String]
    /// The validator of the representation the bytes came from, when a mirror served them.
    var validator: Validator?
    /// That mirror's URL, without its secrets (``Redaction/url(_:)``).
    var url: String?

    /// The recorded digest for `algorithm`, if the record has one.
    func digest(for algorithm: HashAlgorithm) -> [UInt8]? {
        guard let bytes = self.digests[algorithm.rawValue].flatMap(Pin.bytes(fromHex:)),
            bytes.count == algorithm.digestLength
        else { return nil }
        return bytes
    }

    /// Whether `info` (an `fstat` of the file now) is the file this record describes: a regular
    /// file of the same device, inode, size and modification time, owned by this user and
    /// writable by no one else, whose change time lies between ``changed`` and ``changedBy``.
    /// Whoever may write a file may also write its `user.` attributes, so a record on a file
    /// that the group or others may write (placed under umask 002 or 000) could be theirs,
    /// forged together with the bytes: only its owner can change its mode.
    func describes(_ info: stat) -> Bool {
        let changed = Self.nanoseconds(info.st_ctim)
        return (info.st_mode & S_IFMT) == S_IFREG && info.st_uid == geteuid() && (info.st_mode & 0o022) == 0
            && UInt64(info.st_dev) == self.device && UInt64(info.st_ino) == self.inode
            && Int64(info.st_size) == self.size && Self.nanoseconds(info.st_mtim) == self.modified
            && changed >= self.changed && changed <= self.changedBy && self.changedBy - self.changed <= Self.window
    }

    /// The record on the open `file` when it still describes the file, else `nil` (none, another
    /// format, malformed, or the file changed since).
    static func read(_ file: PartialFile) -> VerifiedRecord? {
        var info = stat()
        guard
            case .bytes(let value) = ExtendedAttribute.read(
                Self.attribute,
                on: file.descriptor,
                limit: Self.maximumSize
            ),
            fstat(file.descriptor, &info) == 0,
            let record = try? JSONDecoder().decode(VerifiedRecord.self, from: Data(value)),
            record.version == Self.formatVersion, record.describes(info)
        else { return nil }
        return record
    }

    /// Records on the open `file` that it holds `digests` (by algorithm), from `validator` at
    /// `url` when a mirror served it. Called after the file's last change (placed, its partial
    /// mark taken off). Best effort: where the file system keeps no user extended attributes,
    /// the user may not write them (a read-only file), or the set took longer than ``window``
    /// eight times, no record is left and a rerun hashes the file, as without one. With
    /// `unchangedSince` (the file's identity after pinfetch's own last change), a file whose size
    /// or mtime moved since gets none either: another process wrote it.
    /// - Returns: Whether a record is on the file now.
    @discardableResult
    static func record(
        on file: PartialFile,
        digests: [HashAlgorithm: [UInt8]],
        validator: Validator? = nil,
        url: String? = nil,
        unchangedSince expected: PartialIdentity? = nil
    ) -> Bool {
        let fd = file.descriptor
        // The provisional record: its change time is what the final one states. Read the change
        // time first: where the kernel keeps coarse times unless they were read since the last
        // change (multigrain timestamps, Linux 6.13), the provisional's is then fine-grained, and
        // the final set lands microseconds after it, not a clock tick.
        var read = stat()
        _ = fstat(fd, &read)
        // A file the group or others may write gets none: no record on it is ever trusted.
        guard (read.st_mode & 0o022) == 0 else { return false }
        guard ExtendedAttribute.set(Self.attribute, to: Array("{}".utf8), on: fd) else { return false }
        let hex = Dictionary(uniqueKeysWithValues: digests.map { ($0.key.rawValue, Pin.hex($0.value)) })
        let shown = url.map { Redaction.url($0) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        for _ in 0..<8 {
            var before = stat()
            guard fstat(fd, &before) == 0 else { break }
            if let expected,
                Int64(before.st_size) != expected.size || Self.nanoseconds(before.st_mtim) != expected.modified
            {
                break  // written by someone else since pinfetch's last change: no record
            }
            let changed = Self.nanoseconds(before.st_ctim)
            let record = VerifiedRecord(
                size: Int64(before.st_size),
                device: UInt64(before.st_dev),
                inode: UInt64(before.st_ino),
                modified: Self.nanoseconds(before.st_mtim),
                changed: changed,
                changedBy: changed + Self.window,
                digests: hex,
                validator: validator,
                url: shown
            )
            guard let bytes = try? encoder.encode(record), bytes.count <= Self.maximumSize else { break }
            guard ExtendedAttribute.set(Self.attribute, to: Array(bytes), on: fd) else { break }
            var after = stat()
            if fstat(fd, &after) == 0, record.describes(after) { return true }
        }
        ExtendedAttribute.remove(Self.attribute, from: fd)
        return false
    }

    /// Takes the record off the open `file` (before the file changes under pinfetch's hands).
    static func remove(from file: PartialFile) {
        ExtendedAttribute.remove(Self.attribute, from: file.descriptor)
    }

    static func nanoseconds(_ time: timespec) -> Int64 {
        Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }
}
