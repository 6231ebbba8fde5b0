import FoundationEssentials
@preconcurrency import Glibc

/// One checkpoint of a partial download: a record in one slot of `<dest>.part.state`
/// (``CheckpointFile``, <doc:ResumeAndCheckpoints#The-rolling-hash-checkpoint>).
///
/// It says which representation the partial belongs to (original URL, validator, total
/// length), how many bytes of `<dest>.part` it covers (`offset`, bytes), the hash state after
/// exactly those bytes, so a resume hashes only what comes next. A durable record's bytes were
/// `fsync`ed before it was written, and it keeps a digest of the 64 KiB before `offset` and the
/// partial's identity, so a resume can tell a partial that changed since; a light record's bytes
/// were only written: it keeps the same and the boot it was written in, and a resume in another
/// boot hashes its span again before using it. One record:
///
/// ```text
/// pinfetch-checkpoint 1
/// {"algorithm":"sha256","hashState":"<base64>",...}
/// crc32 1a2b3c4d
/// ```
///
/// The CRC-32 covers the first two lines. Anything that does not decode, fails the CRC or is
/// inconsistent makes ``init(decoding:)`` return `nil`: a corrupt checkpoint is never an error,
/// only a partial that cannot be resumed.
struct Checkpoint: Hashable, Sendable, Codable {
    /// The record's format; a record of another version is ignored.
    static let formatVersion = 1
    private static let magic = "pinfetch-checkpoint \(Checkpoint.formatVersion)\n"
    /// How every record starts, whatever its version.
    static let magicPrefix = Array("pinfetch-checkpoint ".utf8)
    /// Records larger than this are not read (bytes).
    static let maximumSize = 64 * 1024

    /// The mirror that served the bytes (the URL asked for, before redirects), without its
    /// secrets (``HTTPURL/redacted``): nothing derived from a secret is written to a sidecar.
    var url: String
    /// `true` when the bytes came from more than one mirror (a pinned cross-mirror resume):
    /// `validator` is the last one's, and only a pin can vouch for them all; `nil` otherwise.
    /// Where a redirect from ``url`` led the answer whose validator this is, without its query
    /// (``PartialState/location``); `nil` without a redirect.
    var location: String?
    var mixedSources: Bool?
    /// `true` when a segmented phase may have put bytes of several answers in the partial: only
    /// a pin or the server's digest of the whole file vouches for them, so a run with neither
    /// fetches the file again over one stream (``DigestCheck``); `nil` otherwise.
    var pieced: Bool?
    /// The representation's validator when the partial was written.
    var validator: Validator
    /// The representation's length in bytes, when the server said it.
    var totalLength: Int64?
    /// Durable bytes of `<dest>.part` covered by `hashState`.
    var offset: Int64
    /// The hash algorithm of `hashState`.
    var algorithm: HashAlgorithm
    /// The raw OpenSSL context after `offset` bytes.
    var hashState: [UInt8]
    /// `MemoryLayout<SHA256_CTX>.size` (or SHA-512's) of the writer; a different size is ignored.
    var hashStateSize: Int
    /// `OpenSSL_version_num()` of the writer; another version's context is not restored.
    var libraryVersion: UInt64
    /// What `<dest>.part` looked like when the record was written, so a resume can tell a partial
    /// that was replaced or edited since; `nil` in records that do not say.
    var partialIdentity: PartialIdentity?
    /// SHA-256 of the ``tailLength(before:)`` bytes before `offset`; `nil` in records of the
    /// first format and in light records written before ``bootID`` was.
    var tailDigest: [UInt8]?
    /// The boot a light record was written in (``BootID``): in the same boot its bytes are still
    /// in the partial after any kill, so a resume trusts it after the tail check, without hashing
    /// its span again; `nil` in durable records and in older light ones.
    var bootID: String?
    /// Orders durable records: the one with the highest number is the newest; `nil` in light
    /// records and in records of the first format, which had one record per file.
    var sequence: UInt64?
    /// A segmented download's byte ranges past `offset` already in the partial, as `[start, end)`
    /// pairs, sorted and apart; only in durable records, whose `fsync` came after
    /// they were written. `nil` for a partial written in order.
    var spans: [[Int64]]?
    /// For each of ``spans``, the CRC-32 of all its bytes, taken as they were delivered: a resume
    /// reads the whole span back and keeps it only when it matches (a torn, lost or stray write
    /// anywhere in it); a record with spans but without these keeps none of them.
    var spanChecksums: [UInt32]?
    /// How the run that wrote the record ended, when it failed at ``offset`` in a way another
    /// run could meet again (``RepeatedFailure``); `nil` otherwise.
    var failure: Failure?

    /// A run's final failure at an offset: its kind and the libcurl code or HTTP status behind it.
    struct Failure: Hashable, Sendable, Codable {
        /// The partial's offset when the last attempt failed there, in bytes.
        var offset: Int64
        /// `kind/underlying`, e.g. `network/18`, `protocolViolation/0`, `serverResponse/503`.
        var signature: String
    }

    /// Bytes of `<dest>.part` before an offset that ``tailDigest`` covers: 64 KiB, or all of them.
    static func tailLength(before offset: Int64) -> Int64 { min(offset, 64 * 1024) }

    /// The record's bytes, as written to disk.
    func encoded() -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding a struct of strings and numbers cannot fail.
        let json = (try? encoder.encode(self)) ?? Data()
        var body = Array(Self.magic.utf8)
        body += json
        body.append(0x0A)
        let crc = String(CRC32.checksum(body), radix: 16)
        body += Array("crc32 \(String(repeating: "0", count: 8 - crc.count))\(crc)\n".utf8)
        return body
    }

    /// Decodes a record; `nil` for anything but a well-formed, CRC-intact, self-consistent one.
    init?(decoding bytes: [UInt8]) {
        guard bytes.count <= Self.maximumSize, bytes.starts(with: Self.magic.utf8) else { return nil }
        // The last line is the CRC; everything before it is covered by it.
        guard bytes.last == 0x0A, let crcStart = bytes.dropLast().lastIndex(of: 0x0A).map({ $0 + 1 }) else {
            return nil
        }
        let trailer = String(decoding: bytes[crcStart..<(bytes.count - 1)], as: UTF8.self)
        guard trailer.hasPrefix("crc32 "), trailer.count == 14,
            let stored = UInt32(trailer.dropFirst(6), radix: 16),
            CRC32.checksum(bytes[..<crcStart]) == stored
        else { return nil }
        let json = Data(bytes[Self.magic.utf8.count..<crcStart])
        guard let record = try? JSONDecoder().decode(Checkpoint.self, from: json) else { return nil }
        guard record.offset >= 0, record.hashState.count == record.hashStateSize,
            record.totalLength.map({ $0 >= record.offset }) ?? true,
            record.spans.map({ Self.spansAreValid($0, after: record.offset, within: record.totalLength) }) ?? true,
            record.spanChecksums.map({ $0.count == record.spans?.count }) ?? true
        else { return nil }
        self = record
    }

    /// Whether `spans` are `[start, end)` pairs past `offset`, sorted, apart, within the length.
    static func spansAreValid(_ spans: [[Int64]], after offset: Int64, within length: Int64?) -> Bool {
        guard let length, spans.count <= 4096 else { return false }
        var previousEnd = offset
        for pair in spans {
            guard pair.count == 2, pair[0] > previousEnd || (pair[0] == previousEnd && pair[0] == offset),
                pair[0] < pair[1], pair[1] <= length
            else { return false }
            previousEnd = pair[1]
        }
        return true
    }

    private enum CodingKeys: String, CodingKey {
        case url, location, mixedSources, pieced, validator, totalLength, offset, algorithm, hashState, hashStateSize,
            libraryVersion
        case partialIdentity, tailDigest, bootID, sequence, spans, spanChecksums, failure
    }

    init(
        url: String,
        validator: Validator,
        totalLength: Int64?,
        offset: Int64,
        algorithm: HashAlgorithm,
        hashState: [UInt8],
        hashStateSize: Int,
        libraryVersion: UInt64,
        partialIdentity: PartialIdentity? = nil,
        tailDigest: [UInt8]? = nil,
        sequence: UInt64? = nil
    ) {
        self.url = url
        self.validator = validator
        self.totalLength = totalLength
        self.offset = offset
        self.algorithm = algorithm
        self.hashState = hashState
        self.hashStateSize = hashStateSize
        self.libraryVersion = libraryVersion
        self.partialIdentity = partialIdentity
        self.tailDigest = tailDigest
        self.sequence = sequence
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.url = try container.decode(String.self, forKey: .url)
        self.location = try container.decodeIfPresent(String.self, forKey: .location)
        self.mixedSources = try container.decodeIfPresent(Bool.self, forKey: .mixedSources)
        self.pieced = try container.decodeIfPresent(Bool.self, forKey: .pieced)
        self.validator = try container.decode(Validator.self, forKey: .validator)
        self.totalLength = try container.decodeIfPresent(Int64.self, forKey: .totalLength)
        self.offset = try container.decode(Int64.self, forKey: .offset)
        self.algorithm = try container.decode(HashAlgorithm.self, forKey: .algorithm)
        let state = try container.decode(String.self, forKey: .hashState)
        guard let data = Data(base64Encoded: state) else {
            throw DecodingError.dataCorruptedError(forKey: .hashState, in: container, debugDescription: "not base64")
        }
        self.hashState = [UInt8](data)
        self.hashStateSize = try container.decode(Int.self, forKey: .hashStateSize)
        self.libraryVersion = try container.decode(UInt64.self, forKey: .libraryVersion)
        self.partialIdentity = try container.decodeIfPresent(PartialIdentity.self, forKey: .partialIdentity)
        if let tail = try container.decodeIfPresent(String.self, forKey: .tailDigest) {
            guard let data = Data(base64Encoded: tail), data.count == HashAlgorithm.sha256.digestLength else {
                throw DecodingError.dataCorruptedError(
                    forKey: .tailDigest,
                    in: container,
                    debugDescription: "not a digest"
                )
            }
            self.tailDigest = [UInt8](data)
        }
        // A UUID (random(4)); anything else is no boot this kernel could have named.
        self.bootID = try container.decodeIfPresent(String.self, forKey: .bootID)
        if let boot = self.bootID,
            boot.utf8.count != 36 || !boot.utf8.allSatisfy({ $0 == 0x2D || Character(Unicode.Scalar($0)).isHexDigit })
        {
            throw DecodingError.dataCorruptedError(forKey: .bootID, in: container, debugDescription: "not a boot id")
        }
        self.sequence = try container.decodeIfPresent(UInt64.self, forKey: .sequence)
        self.spans = try container.decodeIfPresent([[Int64]].self, forKey: .spans)
        self.spanChecksums = try container.decodeIfPresent([UInt32].self, forKey: .spanChecksums)
        self.failure = try container.decodeIfPresent(Failure.self, forKey: .failure)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.url, forKey: .url)
        try container.encodeIfPresent(self.location, forKey: .location)
        try container.encodeIfPresent(self.mixedSources, forKey: .mixedSources)
        try container.encodeIfPresent(self.pieced, forKey: .pieced)
        try container.encode(self.validator, forKey: .validator)
        try container.encodeIfPresent(self.totalLength, forKey: .totalLength)
        try container.encode(self.offset, forKey: .offset)
        try container.encode(self.algorithm, forKey: .algorithm)
        try container.encode(Data(self.hashState).base64EncodedString(), forKey: .hashState)
        try container.encode(self.hashStateSize, forKey: .hashStateSize)
        try container.encode(self.libraryVersion, forKey: .libraryVersion)
        try container.encodeIfPresent(self.partialIdentity, forKey: .partialIdentity)
        try container.encodeIfPresent(self.tailDigest.map { Data($0).base64EncodedString() }, forKey: .tailDigest)
        try container.encodeIfPresent(self.bootID, forKey: .bootID)
        try container.encodeIfPresent(self.sequence, forKey: .sequence)
        try container.encodeIfPresent(self.spans, forKey: .spans)
        try container.encodeIfPresent(self.spanChecksums, forKey: .spanChecksums)
        try container.encodeIfPresent(self.failure, forKey: .failure)
    }
}

/// The file-system identity of a partial: device and inode, size in bytes and modification time
/// in nanoseconds since 1970, as `fstat` reports them.
struct PartialIdentity: Hashable, Sendable, Codable {
    var device: UInt64
    var inode: UInt64
    var size: Int64
    var modified: Int64

    /// Whether `current` (the partial now) may still hold the bytes this identity described:
    /// `false` when it is another file, or when it has the size it had then but was modified
    /// since (edited in place). A larger partial is not judged: after a crash, bytes written
    /// past the last checkpoint are expected (and cut off before resuming).
    func mayDescribe(_ current: PartialIdentity) -> Bool {
        guard current.device == self.device, current.inode == self.inode else { return false }
        return current.size != self.size || current.modified == self.modified
    }
}
