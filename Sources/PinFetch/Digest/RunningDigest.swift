internal import COpenSSL

/// A running SHA-256, SHA-384, SHA-512, SHA-1 or MD5 over the bytes of a partial, whose state
/// can be saved and restored: the hash half of a checkpoint (<doc:ResumeAndCheckpoints#The-rolling-hash-checkpoint>).
///
/// Owns one OpenSSL `SHA256_CTX` / `SHA512_CTX` / `SHA_CTX` / `MD5_CTX` (SHA-384 is SHA-512's
/// function in the same context, started from other values and cut to 48 bytes, so it
/// checkpoints the same way). The serialized state is the raw context
/// bytes; it is only restored on the same context size and OpenSSL version (the checkpoint
/// records both) and when the context's own byte counter equals the checkpoint offset.
/// Not thread-safe: one thread feeds it at a time.
/// libcrypto set up once, before anything else uses it, without its atexit cleanup
/// (see `copenssl_init_without_atexit`); libcurl's own OpenSSL setup then finds it done.
let openSSLInitialized: Bool = copenssl_init_without_atexit() == 1

final class RunningDigest {
    let algorithm: HashAlgorithm
    private let context: UnsafeMutableRawPointer

    /// The context size in bytes of `algorithm` (112 for SHA-256, 216 for SHA-512 on x86_64).
    static func stateSize(of algorithm: HashAlgorithm) -> Int {
        switch algorithm {
        case .sha256: MemoryLayout<SHA256_CTX>.size
        case .sha384, .sha512: MemoryLayout<SHA512_CTX>.size
        case .sha1: MemoryLayout<SHA_CTX>.size
        case .md5: MemoryLayout<MD5_CTX>.size
        }
    }

    /// `OpenSSL_version_num()` of the library in use; a saved state from another version is ignored.
    static var libraryVersion: UInt64 { UInt64(OpenSSL_version_num()) }

    /// A fresh digest of zero bytes.
    init(algorithm: HashAlgorithm) {
        _ = openSSLInitialized
        self.algorithm = algorithm
        self.context = .allocate(byteCount: Self.stateSize(of: algorithm), alignment: 16)
        self.reset()
    }

    /// Restores a digest saved by ``serializedState()``.
    ///
    /// Returns `nil` (never traps) unless `state` has the context size of `algorithm`, the
    /// context is internally consistent, and it has hashed exactly `offset` bytes.
    init?(algorithm: HashAlgorithm, restoring state: [UInt8], offset: Int64) {
        _ = openSSLInitialized
        guard state.count == Self.stateSize(of: algorithm), offset >= 0 else { return nil }
        self.algorithm = algorithm
        self.context = .allocate(byteCount: state.count, alignment: 16)
        state.withUnsafeBytes { self.context.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        guard self.isConsistent(withOffset: offset) else { return nil }
    }

    deinit { self.context.deallocate() }

    /// Starts over at zero bytes.
    func reset() {
        switch self.algorithm {
        case .sha256: _ = SHA256_Init(self.context.assumingMemoryBound(to: SHA256_CTX.self))
        case .sha384: _ = SHA384_Init(self.context.assumingMemoryBound(to: SHA512_CTX.self))
        case .sha512: _ = SHA512_Init(self.context.assumingMemoryBound(to: SHA512_CTX.self))
        case .sha1: _ = SHA1_Init(self.context.assumingMemoryBound(to: SHA_CTX.self))
        case .md5: _ = MD5_Init(self.context.assumingMemoryBound(to: MD5_CTX.self))
        }
    }

    /// Hashes `bytes`. The corresponding C functions are `SHA256_Update` / `SHA512_Update`
    /// (which `SHA384_Update` is).
    func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        switch self.algorithm {
        case .sha256: _ = SHA256_Update(self.context.assumingMemoryBound(to: SHA256_CTX.self), base, bytes.count)
        case .sha384, .sha512:
            _ = SHA512_Update(self.context.assumingMemoryBound(to: SHA512_CTX.self), base, bytes.count)
        case .sha1: _ = SHA1_Update(self.context.assumingMemoryBound(to: SHA_CTX.self), base, bytes.count)
        case .md5: _ = MD5_Update(self.context.assumingMemoryBound(to: MD5_CTX.self), base, bytes.count)
        }
    }

    /// The number of bytes hashed so far, read from the context's own bit counter.
    var byteCount: Int64 {
        switch self.algorithm {
        case .sha256:
            let c = self.context.assumingMemoryBound(to: SHA256_CTX.self).pointee
            return Int64(bitPattern: (UInt64(c.Nh) << 32 | UInt64(c.Nl)) >> 3)
        case .sha384, .sha512:
            let c = self.context.assumingMemoryBound(to: SHA512_CTX.self).pointee
            guard c.Nh >> 61 == 0 else { return -1 }  // more bytes than Int64 holds: corrupt
            return Int64(bitPattern: c.Nl >> 3 | c.Nh << 61)
        case .sha1:
            let c = self.context.assumingMemoryBound(to: SHA_CTX.self).pointee
            return Int64(bitPattern: (UInt64(c.Nh) << 32 | UInt64(c.Nl)) >> 3)
        case .md5:
            let c = self.context.assumingMemoryBound(to: MD5_CTX.self).pointee
            return Int64(bitPattern: (UInt64(c.Nh) << 32 | UInt64(c.Nl)) >> 3)
        }
    }

    /// The raw context bytes (``stateSize(of:)`` bytes), for a checkpoint.
    func serializedState() -> [UInt8] {
        [UInt8](UnsafeRawBufferPointer(start: self.context, count: Self.stateSize(of: self.algorithm)))
    }

    /// The digest of the bytes so far, computed on a copy so hashing can go on.
    func finalize() -> [UInt8] {
        var out = [UInt8](repeating: 0, count: self.algorithm.digestLength)
        switch self.algorithm {
        case .sha256:
            var copy = self.context.assumingMemoryBound(to: SHA256_CTX.self).pointee
            _ = SHA256_Final(&out, &copy)
        case .sha384:
            var copy = self.context.assumingMemoryBound(to: SHA512_CTX.self).pointee
            _ = SHA384_Final(&out, &copy)
        case .sha512:
            var copy = self.context.assumingMemoryBound(to: SHA512_CTX.self).pointee
            _ = SHA512_Final(&out, &copy)
        case .sha1:
            var copy = self.context.assumingMemoryBound(to: SHA_CTX.self).pointee
            _ = SHA1_Final(&out, &copy)
        case .md5:
            var copy = self.context.assumingMemoryBound(to: MD5_CTX.self).pointee
            _ = MD5_Final(&out, &copy)
        }
        return out
    }

    /// A context is consistent when its buffered count is below one block, agrees with its
    /// bit counter, its digest length is the algorithm's (SHA-2's contexts record one), and its
    /// counter says `offset` bytes.
    private func isConsistent(withOffset offset: Int64) -> Bool {
        let buffered: Int
        var digestLength = self.algorithm.digestLength
        let blockSize: Int
        switch self.algorithm {
        case .sha256:
            let c = self.context.assumingMemoryBound(to: SHA256_CTX.self).pointee
            (buffered, digestLength, blockSize) = (Int(c.num), Int(c.md_len), Int(SHA256_CBLOCK))
            guard c.Nl & 7 == 0 else { return false }
        case .sha384, .sha512:
            let c = self.context.assumingMemoryBound(to: SHA512_CTX.self).pointee
            (buffered, digestLength, blockSize) = (Int(c.num), Int(c.md_len), Int(SHA512_CBLOCK))
            guard c.Nl & 7 == 0 else { return false }
        case .sha1:
            let c = self.context.assumingMemoryBound(to: SHA_CTX.self).pointee
            (buffered, blockSize) = (Int(c.num), Int(SHA_CBLOCK))
            guard c.Nl & 7 == 0 else { return false }
        case .md5:
            let c = self.context.assumingMemoryBound(to: MD5_CTX.self).pointee
            (buffered, blockSize) = (Int(c.num), Int(MD5_CBLOCK))
            guard c.Nl & 7 == 0 else { return false }
        }
        let count = self.byteCount
        guard count == offset, digestLength == self.algorithm.digestLength, buffered < blockSize,
            Int64(buffered) == count % Int64(blockSize)
        else { return false }
        // MD5's and SHA-1's contexts carry no digest length, so a zeroed one would pass the
        // checks above: of zero bytes, their chaining values are the initial ones.
        guard count == 0, self.algorithm.isWeak else { return true }
        let chaining = self.algorithm.digestLength
        return self.serializedState().prefix(chaining)
            == RunningDigest(algorithm: self.algorithm).serializedState().prefix(chaining)
    }
}

extension HashAlgorithm {
    /// The digest of `bytes` in this algorithm.
    package func digest(of bytes: [UInt8]) -> [UInt8] {
        let running = RunningDigest(algorithm: self)
        bytes.withUnsafeBytes { running.update($0) }
        return running.finalize()
    }
}
