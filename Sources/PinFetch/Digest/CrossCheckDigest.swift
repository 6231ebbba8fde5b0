internal import COpenSSL

/// MD5 (RFC 1321) of one answer's body from byte 0, only to cross-check the MD5 an object store
/// publishes (GCS `x-goog-hash` `md5=`): integrity against a broken store or transfer, never a
/// pin (MD5 has no collision resistance). It lives in memory for one answer and never goes into
/// a checkpoint. Not thread-safe: the hashing thread feeds it, then the download reads it.
final class CrossCheckDigest {
    private var context = MD5_CTX()
    /// Bytes hashed so far.
    private(set) var byteCount: Int64 = 0

    init() {
        _ = openSSLInitialized
        _ = MD5_Init(&self.context)
    }

    /// Hashes `bytes`.
    func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        _ = MD5_Update(&self.context, base, bytes.count)
        self.byteCount += Int64(bytes.count)
    }

    /// The 16-byte digest of the bytes so far, computed on a copy.
    func finalize() -> [UInt8] {
        var copy = self.context
        var out = [UInt8](repeating: 0, count: 16)
        _ = MD5_Final(&out, &copy)
        return out
    }
}
