internal import COpenSSL

/// The fingerprint of an OpenPGP version 4 public key or subkey: SHA-1 of `0x99`, the packet
/// body's length in two bytes and the body (RFC 4880 §12.2), as `gpgv` prints it in `VALIDSIG`
/// (40 upper-case hex digits). Computed by OpenSSL.
enum OpenPGPFingerprint {
    /// The fingerprint of the key packet `body`, or `nil` when it is not a version 4 key.
    static func of(keyPacketBody body: ArraySlice<UInt8>) -> String? {
        _ = openSSLInitialized
        guard body.first == 4, body.count <= 0xFFFF else { return nil }
        let framed = [0x99, UInt8(body.count >> 8), UInt8(body.count & 0xFF)] + body
        var digest = [UInt8](repeating: 0, count: 20)
        var length: UInt32 = 0
        let done = framed.withUnsafeBufferPointer { bytes in
            EVP_Digest(bytes.baseAddress, bytes.count, &digest, &length, EVP_sha1(), nil)
        }
        guard done == 1, length == 20 else { return nil }
        return Pin.hex(digest).uppercased()
    }
}
