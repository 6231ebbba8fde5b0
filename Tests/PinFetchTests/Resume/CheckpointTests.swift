import COpenSSL
import Foundation
import Testing

@testable import PinFetch

/// A deterministic generator (SplitMix64), so a failing garbage case can be reproduced.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64

    mutating func next() -> UInt64 {
        self.state &+= 0x9E37_79B9_7F4A_7C15
        var z = self.state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// `count` bytes of a fixed pseudo-random pattern.
/// Made a word at a time into the array's storage: a debug build draws bytes one by one far
/// too slowly for the many-MiB bodies of the segment tests.
func pseudoRandomBytes(_ count: Int, seed: UInt64 = 1) -> [UInt8] {
    var generator = SeededGenerator(state: seed)
    return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
        let raw = UnsafeMutableRawBufferPointer(buffer)
        var offset = 0
        while offset < count {
            var word = generator.next()
            let take = min(8, count - offset)
            withUnsafeBytes(of: &word) {
                raw.baseAddress!.advanced(by: offset).copyMemory(from: $0.baseAddress!, byteCount: take)
            }
            offset += take
        }
        initialized = count
    }
}

/// Whether the file at `path` holds exactly `bytes` (`memcmp`: a debug build compares arrays
/// of many MiB element by element far too slowly).
func fileHolds(_ path: String, _ bytes: [UInt8]) -> Bool {
    guard let data = FileManager.default.contents(atPath: path), data.count == bytes.count else { return false }
    return data.withUnsafeBytes { file in
        bytes.withUnsafeBytes { bytes.isEmpty || memcmp(file.baseAddress!, $0.baseAddress!, bytes.count) == 0 }
    }
}

/// The checkpoint record (`<dest>.part.state`): round trips, and every corruption is `nil`.
struct CheckpointTests {
    static let magic = "pinfetch-checkpoint 1\n"

    /// A checkpoint with a real SHA-256 state after `offset` bytes.
    static func checkpoint(
        url: String = "http://example.test/a/file.tar.gz",
        validator: Validator = Validator(entityTag: #""v1""#, lastModified: nil),
        totalLength: Int64? = 1_048_576,
        offset: Int64 = 400_000,
        algorithm: HashAlgorithm = .sha256
    ) -> Checkpoint {
        let digest = RunningDigest(algorithm: algorithm)
        let bytes = pseudoRandomBytes(Int((offset % 1000).magnitude))
        bytes.withUnsafeBytes { digest.update($0) }
        return Checkpoint(
            url: url,
            validator: validator,
            totalLength: totalLength,
            offset: offset,
            algorithm: algorithm,
            hashState: digest.serializedState(),
            hashStateSize: RunningDigest.stateSize(of: algorithm),
            libraryVersion: RunningDigest.libraryVersion
        )
    }

    /// `body` framed as a record: magic line (or `magic`), body, newline, and a correct CRC line.
    static func sealed(_ body: [UInt8], magic: String = CheckpointTests.magic) -> [UInt8] {
        var bytes = Array(magic.utf8) + body + [0x0A]
        let crc = CRC32.checksum(bytes)
        bytes += Array(String(format: "crc32 %08x\n", crc).utf8)
        return bytes
    }

    static func sealed(_ json: String, magic: String = CheckpointTests.magic) -> [UInt8] {
        Self.sealed(Array(json.utf8), magic: magic)
    }

    /// The JSON line of an encoded record.
    static func json(of checkpoint: Checkpoint) -> String {
        let bytes = checkpoint.encoded()
        let lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false)
        return String(decoding: lines[1], as: UTF8.self)
    }

    @Test func `CRC-32 matches the standard check value`() {
        #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
        #expect(CRC32.checksum([UInt8]()) == 0)
        #expect(CRC32.checksum(Array("The quick brown fox jumps over the lazy dog".utf8)) == 0x414F_A339)
    }

    static let roundTrips: [Checkpoint] = [
        CheckpointTests.checkpoint(),
        CheckpointTests.checkpoint(algorithm: .sha512),
        CheckpointTests.checkpoint(totalLength: nil),
        CheckpointTests.checkpoint(offset: 0),
        CheckpointTests.checkpoint(totalLength: 400_000),
        CheckpointTests.checkpoint(totalLength: 6_000_000_000, offset: 5_368_709_120),
        CheckpointTests.checkpoint(url: "https://h.test:8443/dir/na me/ü.bin?x=1&y=/z#frag\"\\"),
        CheckpointTests.checkpoint(
            validator: Validator(
                entityTag: #"W/"weak""#,
                lastModified: "Sun, 06 Nov 1994 08:49:37 GMT",
                date: "Sun, 06 Nov 1994 08:49:38 GMT"
            )
        ),
        CheckpointTests.checkpoint(validator: Validator(entityTag: nil, lastModified: nil)),
    ]

    @Test(arguments: Self.roundTrips)
    func `a record round-trips`(checkpoint: Checkpoint) throws {
        let bytes = checkpoint.encoded()
        #expect(bytes.starts(with: Array(Self.magic.utf8)))
        #expect(bytes.last == 0x0A)
        let decoded = try #require(Checkpoint(decoding: bytes))
        #expect(decoded == checkpoint)
        #expect(decoded.hashState.count == RunningDigest.stateSize(of: checkpoint.algorithm))
        #expect(decoded.encoded() == bytes)
    }

    @Test(arguments: HashAlgorithm.allCases)
    func `any single flipped byte makes the record unusable`(algorithm: HashAlgorithm) {
        let bytes = Self.checkpoint(algorithm: algorithm).encoded()
        #expect(Checkpoint(decoding: bytes) != nil)
        var accepted: [String] = []
        for index in bytes.indices {
            for mask: UInt8 in [0x01, 0x80, 0xFF] {
                var corrupt = bytes
                corrupt[index] ^= mask
                if Checkpoint(decoding: corrupt) != nil { accepted.append("byte \(index) ^ \(mask)") }
            }
        }
        #expect(accepted == [])
    }

    @Test(arguments: HashAlgorithm.allCases)
    func `every truncation makes the record unusable`(algorithm: HashAlgorithm) {
        let bytes = Self.checkpoint(algorithm: algorithm).encoded()
        let accepted = (0..<bytes.count).filter { Checkpoint(decoding: Array(bytes[..<$0])) != nil }
        #expect(accepted == [])
        // A stray byte after the record, too.
        #expect(Checkpoint(decoding: bytes + [0x0A]) == nil)
        #expect(Checkpoint(decoding: bytes + Array("x".utf8)) == nil)
    }

    @Test func `empty, zeroed and random bytes are no record`() {
        #expect(Checkpoint(decoding: []) == nil)
        #expect(Checkpoint(decoding: [UInt8](repeating: 0, count: 112)) == nil)
        #expect(Checkpoint(decoding: [UInt8](repeating: 0x0A, count: 112)) == nil)
        #expect(Checkpoint(decoding: Array(Self.magic.utf8)) == nil)
        var generator = SeededGenerator(state: 42)
        var accepted = 0
        for round in 0..<500 {
            let count = Int.random(in: 0...600, using: &generator)
            var garbage = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            if round % 2 == 1 { garbage = Array(Self.magic.utf8) + garbage }
            if Checkpoint(decoding: garbage) != nil { accepted += 1 }
            // Garbage under a correct CRC reaches the JSON decoder.
            if Checkpoint(decoding: Self.sealed(garbage.filter { $0 != 0x0A })) != nil { accepted += 1 }
        }
        #expect(accepted == 0)
    }

    @Test func `an intact record that is not self-consistent is ignored`() throws {
        // Sanity: the sealing helper makes records the decoder accepts.
        let good = Self.checkpoint()
        #expect(Checkpoint(decoding: Self.sealed(Self.json(of: good))) == good)

        #expect(Checkpoint(decoding: Self.checkpoint(totalLength: 399_999, offset: 400_000).encoded()) == nil)
        #expect(Checkpoint(decoding: Self.checkpoint(totalLength: 0, offset: 1).encoded()) == nil)
        #expect(Checkpoint(decoding: Self.checkpoint(offset: -1).encoded()) == nil)
        #expect(Checkpoint(decoding: Self.checkpoint(offset: .min).encoded()) == nil)

        var shortState = good
        shortState.hashState.removeLast()
        #expect(Checkpoint(decoding: shortState.encoded()) == nil)
        var otherSize = good
        otherSize.hashStateSize += 1
        #expect(Checkpoint(decoding: otherSize.encoded()) == nil)
    }

    @Test func `a record of another format version, or too large, is ignored`() {
        let json = Self.json(of: Self.checkpoint())
        #expect(Checkpoint(decoding: Self.sealed(json, magic: "pinfetch-checkpoint 2\n")) == nil)
        #expect(Checkpoint(decoding: Self.sealed(json, magic: "pinfetch-checkpoint 1 \n")) == nil)
        let huge = Self.checkpoint(url: "http://h/" + String(repeating: "a", count: Checkpoint.maximumSize))
        #expect(huge.encoded().count > Checkpoint.maximumSize)
        #expect(Checkpoint(decoding: huge.encoded()) == nil)
    }

    /// A minimal record's JSON fields, each value as JSON text.
    static let minimalFields = [
        ("algorithm", #""sha256""#), ("hashState", #""AA==""#), ("hashStateSize", "1"), ("libraryVersion", "1"),
        ("offset", "0"), ("url", #""u""#), ("validator", #"{"lastModifiedIsStrong":false}"#),
    ]

    /// The minimal record with `key` set to `value` (JSON text), or removed when `value` is `nil`.
    static func record(_ key: String? = nil, _ value: String? = nil) -> String {
        var fields = Self.minimalFields.filter { $0.0 != key }
        if let key, let value { fields.append((key, value)) }
        return "{" + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
    }

    @Test func `the minimal well-formed JSON record decodes`() throws {
        let decoded = try #require(Checkpoint(decoding: Self.sealed(Self.record())))
        #expect(decoded.url == "u")
        #expect(decoded.hashState == [0])
        #expect(decoded.totalLength == nil)
        #expect(decoded.offset == 0)
        #expect(decoded.validator.ifRangeValue == nil)
        #expect(Checkpoint(decoding: Self.sealed(Self.record("totalLength", "0")))?.totalLength == 0)
    }

    @Test(
        arguments: [
            ("algorithm", #""sha224""#), ("algorithm", nil), ("hashState", #""%%%""#), ("hashState", "[0]"),
            ("hashStateSize", "2"), ("hashStateSize", "-1"), ("libraryVersion", "-1"), ("offset", #""0""#),
            ("offset", "1e30"), ("offset", "-1"), ("offset", nil), ("totalLength", "-5"), ("url", nil), ("url", "7"),
            ("validator", nil), ("validator", "{}"), ("validator", "null"),
        ] as [(String, String?)]
    )
    func `well-sealed JSON that is not a checkpoint is ignored`(key: String, value: String?) {
        #expect(Checkpoint(decoding: Self.sealed(Self.record(key, value))) == nil)
    }

    @Test(arguments: ["", "{}", "[]", "null", #"{"url":"http://h/f"}"#, "{", "\u{0}"])
    func `well-sealed text that is not a JSON record is ignored`(json: String) {
        #expect(Checkpoint(decoding: Self.sealed(json)) == nil)
    }
}

/// The serializable running hash: a checkpoint's hash state restores to the same digest.
struct RunningDigestTests {
    static let data = pseudoRandomBytes(3000, seed: 7)

    /// The digest of `bytes` in one call to OpenSSL's one-shot function.
    static func oneShot(_ algorithm: HashAlgorithm, _ bytes: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: algorithm.digestLength)
        switch algorithm {
        case .sha256: _ = SHA256(bytes, bytes.count, &out)
        case .sha384: _ = SHA384(bytes, bytes.count, &out)
        case .sha512: _ = SHA512(bytes, bytes.count, &out)
        case .sha1: _ = SHA1(bytes, bytes.count, &out)
        case .md5: _ = MD5(bytes, bytes.count, &out)
        }
        return out
    }

    static func digest(_ algorithm: HashAlgorithm, after bytes: ArraySlice<UInt8>) -> RunningDigest {
        let digest = RunningDigest(algorithm: algorithm)
        bytes.withUnsafeBytes { digest.update($0) }
        return digest
    }

    @Test(arguments: [
        (HashAlgorithm.sha256, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        (
            .sha512,
            "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
                + "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"
        ),
        (.sha1, "a9993e364706816aba3e25717850c26c9cd0d89d"),  // FIPS 180-4's example
        (.md5, "900150983cd24fb0d6963f7d28e17f72"),  // RFC 1321 A.5
    ])
    func `the digest of abc is the published vector`(algorithm: HashAlgorithm, hex: String) {
        let digest = Self.digest(algorithm, after: Array("abc".utf8)[...])
        #expect(Pin.hex(digest.finalize()) == hex)
        #expect(digest.byteCount == 3)
        // finalize works on a copy: hashing goes on.
        #expect(Pin.hex(digest.finalize()) == hex)
    }

    @Test func `the state sizes are those of the OpenSSL contexts`() {
        #expect(RunningDigest.stateSize(of: .sha256) == MemoryLayout<SHA256_CTX>.size)
        #expect(RunningDigest.stateSize(of: .sha512) == MemoryLayout<SHA512_CTX>.size)
        #expect(RunningDigest.stateSize(of: .sha384) == MemoryLayout<SHA512_CTX>.size)
        #expect(RunningDigest.stateSize(of: .sha1) == MemoryLayout<SHA_CTX>.size)
        #expect(RunningDigest.stateSize(of: .md5) == MemoryLayout<MD5_CTX>.size)
        #expect(RunningDigest.libraryVersion == UInt64(OpenSSL_version_num()))
    }

    @Test(
        arguments: HashAlgorithm.allCases,
        [0, 1, 3, 55, 63, 64, 65, 111, 112, 127, 128, 129, 1000, 2999, 3000]
    )
    func `a restored state continues to the one-shot digest`(algorithm: HashAlgorithm, split: Int) throws {
        let first = Self.digest(algorithm, after: Self.data[..<split])
        #expect(first.byteCount == Int64(split))
        let state = first.serializedState()
        #expect(state.count == RunningDigest.stateSize(of: algorithm))

        let restored = try #require(RunningDigest(algorithm: algorithm, restoring: state, offset: Int64(split)))
        #expect(restored.byteCount == Int64(split))
        Self.data[split...].withUnsafeBytes { restored.update($0) }
        #expect(restored.byteCount == Int64(Self.data.count))
        #expect(restored.finalize() == Self.oneShot(algorithm, Self.data))
        #expect(restored.serializedState() != state || split == Self.data.count)
    }

    @Test(arguments: HashAlgorithm.allCases, [0, 1, 64, 129, 1000])
    func `a state is only restored at its own offset and size`(algorithm: HashAlgorithm, split: Int) {
        let state = Self.digest(algorithm, after: Self.data[..<split]).serializedState()
        let offset = Int64(split)
        #expect(RunningDigest(algorithm: algorithm, restoring: state, offset: offset + 1) == nil)
        #expect(RunningDigest(algorithm: algorithm, restoring: state, offset: offset - 1) == nil)
        #expect(RunningDigest(algorithm: algorithm, restoring: state, offset: offset + 64) == nil)
        #expect(RunningDigest(algorithm: algorithm, restoring: state, offset: -1) == nil)
        #expect(RunningDigest(algorithm: algorithm, restoring: Array(state.dropLast()), offset: offset) == nil)
        #expect(RunningDigest(algorithm: algorithm, restoring: state + [0], offset: offset) == nil)
        #expect(RunningDigest(algorithm: algorithm, restoring: [], offset: offset) == nil)
        let other: HashAlgorithm = algorithm == .sha256 ? .sha512 : .sha256
        #expect(RunningDigest(algorithm: other, restoring: state, offset: offset) == nil)
    }

    /// Where the counters sit in the context, and how wide they are.
    struct Layout {
        var low: Int
        var high: Int
        var num: Int
        /// Where the digest length sits; MD5's and SHA-1's contexts have none.
        var digestLength: Int?
        var counterWidth: Int

        init(_ algorithm: HashAlgorithm) {
            switch algorithm {
            case .sha256:
                self.low = MemoryLayout<SHA256_CTX>.offset(of: \.Nl)!
                self.high = MemoryLayout<SHA256_CTX>.offset(of: \.Nh)!
                self.num = MemoryLayout<SHA256_CTX>.offset(of: \.num)!
                self.digestLength = MemoryLayout<SHA256_CTX>.offset(of: \.md_len)!
                self.counterWidth = 4
            case .sha384, .sha512:
                self.low = MemoryLayout<SHA512_CTX>.offset(of: \.Nl)!
                self.high = MemoryLayout<SHA512_CTX>.offset(of: \.Nh)!
                self.num = MemoryLayout<SHA512_CTX>.offset(of: \.num)!
                self.digestLength = MemoryLayout<SHA512_CTX>.offset(of: \.md_len)!
                self.counterWidth = 8
            case .sha1:
                self.low = MemoryLayout<SHA_CTX>.offset(of: \.Nl)!
                self.high = MemoryLayout<SHA_CTX>.offset(of: \.Nh)!
                self.num = MemoryLayout<SHA_CTX>.offset(of: \.num)!
                self.digestLength = nil
                self.counterWidth = 4
            case .md5:
                self.low = MemoryLayout<MD5_CTX>.offset(of: \.Nl)!
                self.high = MemoryLayout<MD5_CTX>.offset(of: \.Nh)!
                self.num = MemoryLayout<MD5_CTX>.offset(of: \.num)!
                self.digestLength = nil
                self.counterWidth = 4
            }
        }
    }

    enum Tampering: String, CaseIterable, Sendable {
        case bitCountPlusOneByte, bitCountNotWholeBytes, highCounterSet, bufferedCount, bufferedPastBlock
        case digestLength
    }

    @Test(arguments: HashAlgorithm.allCases, Tampering.allCases)
    func `a context with tampered counters is not restored`(algorithm: HashAlgorithm, tampering: Tampering) {
        let split = 1000
        var state = Self.digest(algorithm, after: Self.data[..<split]).serializedState()
        #expect(RunningDigest(algorithm: algorithm, restoring: state, offset: Int64(split)) != nil)
        let layout = Layout(algorithm)
        if tampering == .digestLength, layout.digestLength == nil { return }  // nothing to tamper with
        state.withUnsafeMutableBytes { raw in
            func add(_ delta: UInt64, at offset: Int) {
                if layout.counterWidth == 4 {
                    let value = raw.load(fromByteOffset: offset, as: UInt32.self)
                    raw.storeBytes(of: value &+ UInt32(delta), toByteOffset: offset, as: UInt32.self)
                } else {
                    let value = raw.load(fromByteOffset: offset, as: UInt64.self)
                    raw.storeBytes(of: value &+ delta, toByteOffset: offset, as: UInt64.self)
                }
            }
            func addInt32(_ delta: UInt32, at offset: Int) {
                let value = raw.load(fromByteOffset: offset, as: UInt32.self)
                raw.storeBytes(of: value &+ delta, toByteOffset: offset, as: UInt32.self)
            }
            switch tampering {
            case .bitCountPlusOneByte: add(8, at: layout.low)
            case .bitCountNotWholeBytes: add(1, at: layout.low)
            case .highCounterSet: add(1, at: layout.high)
            case .bufferedCount: addInt32(1, at: layout.num)
            case .bufferedPastBlock: addInt32(algorithm.digestLength > 32 ? 128 : 64, at: layout.num)
            case .digestLength: addInt32(1, at: layout.digestLength!)
            }
        }
        #expect(RunningDigest(algorithm: algorithm, restoring: state, offset: Int64(split)) == nil)
    }

    @Test(arguments: HashAlgorithm.allCases)
    func `a state that claims more bytes than its offset is not restored`(algorithm: HashAlgorithm) {
        // Consistent counters for 1064 bytes, but the checkpoint says 1000.
        let state = Self.digest(algorithm, after: Self.data[..<1064]).serializedState()
        #expect(RunningDigest(algorithm: algorithm, restoring: state, offset: 1000) == nil)
        #expect(RunningDigest(algorithm: algorithm, restoring: state, offset: 1064) != nil)
    }

    @Test(arguments: HashAlgorithm.allCases)
    func `zeroed and random states are not restored`(algorithm: HashAlgorithm) {
        let size = RunningDigest.stateSize(of: algorithm)
        #expect(RunningDigest(algorithm: algorithm, restoring: [UInt8](repeating: 0, count: size), offset: 0) == nil)
        var generator = SeededGenerator(state: 9)
        var accepted = 0
        for _ in 0..<200 {
            let state = (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) }
            for offset: Int64 in [0, 1, 64, 1000]
            where RunningDigest(algorithm: algorithm, restoring: state, offset: offset) != nil {
                accepted += 1
            }
        }
        #expect(accepted == 0)
    }
}
