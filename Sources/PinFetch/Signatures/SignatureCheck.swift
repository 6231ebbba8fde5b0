/// Checks that a checksum file was signed by a trusted key, before any pin in it is
/// used: a minisign or signify signature in-process (`Ed25519`), an OpenPGP one (detached, or
/// a clear-signed file) by Debian's `gpgv` (`GPGVerifier`).
public struct SignatureCheck: Sendable {
    /// The keys a signature must come from.
    public let keys: TrustedKeys

    public init(keys: TrustedKeys) {
        self.keys = keys
    }

    /// Checks `checksumFile` against `signature` (a detached minisign, signify or OpenPGP
    /// signature file), or, without one, its own clear-signed OpenPGP signature.
    /// - Returns: Who signed, in words (e.g. `minisign key E7620F1842B4E81F`), and the bytes the
    ///   signature covers, to be parsed instead of `checksumFile`: the file itself for a
    ///   detached signature, the signed text (as `gpgv` gives it) for a clear-signed one.
    /// - Throws: ``PinFetchError/Code/digestMismatch`` (exit 9) for an unsigned checksum file, a
    ///   signature that cannot be read, one by a key not trusted (named when the signature says
    ///   which), or one that does not verify; ``PinFetchError/Code/generic`` when `gpgv` cannot
    ///   be run.
    public func verify(
        checksumFile: [UInt8],
        signature: [UInt8]?
    ) throws(PinFetchError) -> (signer: String, content: [UInt8]) {
        guard let signature else {
            guard ChecksumFile.isClearSigned(checksumFile) else {
                throw PinFetchError(
                    .digestMismatch,
                    "the checksum file is not signed (--signature names its detached signature)"
                )
            }
            let verified = try self.openPGP().verify(clearSigned: checksumFile)
            return (verified.signer, verified.content)
        }
        if MinisignSignature.looksLike(signature) {
            return (try self.minisign(MinisignSignature(parsing: signature), of: checksumFile), checksumFile)
        }
        let verified = try self.openPGP().verify(detached: signature, of: checksumFile)
        return (verified.signer, verified.content)
    }

    private func minisign(_ signature: MinisignSignature, of message: [UInt8]) throws(PinFetchError) -> String {
        let id = MinisignPublicKey.keyIDText(signature.keyID)
        let kind = signature.trusted == nil ? "signify" : "minisign"
        let candidates = self.keys.minisign.filter { $0.keyID == signature.keyID }
        guard !candidates.isEmpty else {
            throw PinFetchError(
                .digestMismatch,
                "the checksum file is signed by \(kind) key \(id), which is not trusted"
            )
        }
        let signed = signature.algorithm == .prehashed ? Ed25519.blake2b512(message) : message
        // Two keys may share an ID (it is only 8 bytes): the one whose signature verifies is it.
        let verifies = { (key: MinisignPublicKey) in
            Ed25519.verify(signature: signature.signature, of: signed, publicKey: key.key)
        }
        guard let key = candidates.first(where: verifies) else {
            throw PinFetchError(
                .digestMismatch,
                "the \(kind) signature by key \(id) does not verify: the checksum file is not the one signed"
            )
        }
        guard let trusted = signature.trusted else { return "\(kind) key \(id)" }
        guard
            Ed25519.verify(signature: trusted.signature, of: signature.signature + trusted.comment, publicKey: key.key)
        else {
            throw PinFetchError(
                .digestMismatch,
                "the minisign signature by key \(id) has a trusted comment that is not the one signed"
            )
        }
        return "minisign key \(id) (\(signature.trustedComment ?? ""))"
    }

    private func openPGP() throws(PinFetchError) -> GPGVerifier {
        guard !self.keys.openPGP.isEmpty else {
            throw PinFetchError(
                .digestMismatch,
                "the signature is not a minisign or signify one, and no --trusted-key is an OpenPGP key to check it with"
            )
        }
        return GPGVerifier(keyring: self.keys.openPGP)
    }
}
