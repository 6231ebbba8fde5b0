internal import COpenSSL

/// Ed25519 signatures (RFC 8032) and BLAKE2b-512 (RFC 7693), as minisign and signify use them,
/// computed by OpenSSL's EVP interface: nothing of the curve or the hash is our own code.
enum Ed25519 {
    /// Bytes of a public key.
    static let publicKeyLength = 32
    /// Bytes of a signature.
    static let signatureLength = 64

    /// Whether `signature` (64 bytes) is `publicKey`'s (32 bytes) signature of `message`
    /// (pure Ed25519, RFC 8032 §5.1.7). `false` for a key or signature of the wrong length, a
    /// key OpenSSL refuses, or a signature that does not verify; never throws.
    static func verify(signature: [UInt8], of message: [UInt8], publicKey: [UInt8]) -> Bool {
        _ = openSSLInitialized
        guard signature.count == Self.signatureLength, publicKey.count == Self.publicKeyLength,
            let key = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nil, publicKey, publicKey.count)
        else { return false }
        defer { EVP_PKEY_free(key) }
        guard let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, nil, nil, key) == 1 else { return false }
        return message.withUnsafeBufferPointer { bytes in
            EVP_DigestVerify(context, signature, signature.count, bytes.baseAddress, bytes.count) == 1
        }
    }

    /// The BLAKE2b-512 digest (64 bytes) of `message`: what minisign's pre-hashed signatures
    /// (`ED`) sign instead of the file.
    static func blake2b512(_ message: [UInt8]) -> [UInt8] {
        _ = openSSLInitialized
        var digest = [UInt8](repeating: 0, count: 64)
        var length: UInt32 = 0
        let done = message.withUnsafeBufferPointer { bytes in
            EVP_Digest(bytes.baseAddress, bytes.count, &digest, &length, EVP_blake2b512(), nil)
        }
        precondition(done == 1 && length == 64, "OpenSSL has no BLAKE2b-512")
        return digest
    }
}
