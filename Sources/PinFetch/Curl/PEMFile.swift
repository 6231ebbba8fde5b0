internal import COpenSSL

/// What a PEM file for TLS holds, as OpenSSL reads it (`PEM_read_bio_X509`,
/// `PEM_read_bio_PrivateKey`): `--cacert`, `--cert` and `--key` are checked when the option is
/// read, so a file that only looks like PEM (a `BEGIN` line over junk, no `END` line) is bad
/// input at once (exit 2) instead of a failed handshake on the first HTTPS request. OpenSSL is
/// set up first as everywhere (``openSSLInitialized``): this may be its first use in the process.
package enum PEMFile {
    /// How many certificates OpenSSL reads from `bytes` before the first block that is not one.
    package static func certificateCount(in bytes: [UInt8]) -> Int {
        Self.withBIO(bytes, otherwise: 0) { bio in
            var count = 0
            while let certificate = PEM_read_bio_X509(bio, nil, nil, nil) {
                X509_free(certificate)
                count += 1
            }
            return count
        }
    }

    /// Whether every `BEGIN CERTIFICATE` block of `bytes` is a certificate OpenSSL reads, and
    /// there is at least one: libcurl refuses a bundle or client file with one bad block in it.
    package static func holdsOnlyCertificates(_ bytes: [UInt8]) -> Bool {
        let blocks = bytes.ranges(of: Array("-----BEGIN CERTIFICATE-----".utf8)).count
        return blocks > 0 && Self.certificateCount(in: bytes) >= blocks
    }

    /// Whether the first private key in `key` belongs to the first certificate in `certificate`
    /// (`X509_check_private_key`): a client key of another certificate fails the handshake.
    package static func key(_ key: [UInt8], matchesCertificateIn certificate: [UInt8]) -> Bool {
        Self.withBIO(certificate, otherwise: false) { certificateBIO in
            guard let x509 = PEM_read_bio_X509(certificateBIO, nil, nil, nil) else { return false }
            defer { X509_free(x509) }
            return Self.withBIO(key, otherwise: false) { keyBIO in
                let read = "".withCString { empty in
                    PEM_read_bio_PrivateKey(keyBIO, nil, nil, UnsafeMutableRawPointer(mutating: empty))
                }
                guard let read else { return false }
                defer { EVP_PKEY_free(read) }
                return X509_check_private_key(x509, read) == 1
            }
        }
    }

    /// Whether OpenSSL reads an unencrypted private key from `bytes` (any of the PEM forms:
    /// `PRIVATE KEY`, `RSA PRIVATE KEY`, `EC PRIVATE KEY`). The passphrase given is the empty
    /// one, so an encrypted key is not read, and OpenSSL never asks on the terminal.
    package static func holdsPrivateKey(_ bytes: [UInt8]) -> Bool {
        Self.withBIO(bytes, otherwise: false) { bio in
            let key = "".withCString { empty in
                PEM_read_bio_PrivateKey(bio, nil, nil, UnsafeMutableRawPointer(mutating: empty))
            }
            guard let key else { return false }
            EVP_PKEY_free(key)
            return true
        }
    }

    /// `body` with a memory BIO over `bytes`; `otherwise` when none can be made. OpenSSL's
    /// error queue is emptied after (a failed read leaves entries there).
    private static func withBIO<T>(_ bytes: [UInt8], otherwise: T, _ body: (OpaquePointer) -> T) -> T {
        _ = openSSLInitialized  // first, without the atexit cleanup (it may be the first use of OpenSSL)
        return bytes.withUnsafeBytes { buffer in
            guard let bio = BIO_new_mem_buf(buffer.baseAddress, Int32(clamping: buffer.count)) else { return otherwise }
            defer {
                BIO_free(bio)
                ERR_clear_error()
            }
            return body(bio)
        }
    }
}
