/// A minisign signature file (`.minisig`), or an OpenBSD signify one (`.sig`, the same first
/// two lines without a trusted comment):
///
///     untrusted comment: <anything>
///     base64(<algorithm> <key ID, 8 bytes> <Ed25519 signature, 64 bytes>)
///     trusted comment: <text>                    (minisign only)
///     base64(<global signature, 64 bytes>)        (minisign only)
///
/// The algorithm `Ed` signs the file itself; minisign's `ED` signs its BLAKE2b-512 digest (the
/// default since minisign 0.8). The global signature signs the signature bytes followed by the
/// trusted comment's text, so the comment cannot be changed without the key.
///
/// Pure Swift without C imports (the libFuzzer target `MinisignFuzz` compiles it alone); the
/// checks with keys are ``verify(_:with:)``'s, through ``Ed25519``.
struct MinisignSignature: Sendable {
    enum Algorithm: Hashable, Sendable {
        /// `Ed`: the signature is of the file's bytes.
        case pure
        /// `ED`: the signature is of the BLAKE2b-512 digest of the file's bytes.
        case prehashed
    }

    let algorithm: Algorithm
    /// The 8-byte ID of the key that made it.
    let keyID: [UInt8]
    /// The 64-byte Ed25519 signature.
    let signature: [UInt8]
    /// minisign's trusted comment (its text after `trusted comment: `) and the global signature
    /// over `signature` + that text; `nil` for a signify signature.
    let trusted: (comment: [UInt8], signature: [UInt8])?

    /// Whether `bytes` begin as a minisign or signify signature (an `untrusted comment:` line).
    static func looksLike(_ bytes: [UInt8]) -> Bool {
        MinisignText.lines(Array(bytes.prefix(4096))).first?.hasPrefix("untrusted comment:") == true
    }

    /// - Throws: ``PinFetchError/Code/digestMismatch`` (a signature that cannot be read cannot
    ///   vouch for anything: <doc:CommandLine#Exit-status>, exit 9) with a one-line reason.
    init(parsing bytes: [UInt8]) throws(PinFetchError) {
        func refuse(_ reason: String) -> PinFetchError {
            PinFetchError(.digestMismatch, "not a minisign or signify signature: \(reason)")
        }
        guard bytes.count <= MinisignText.largestFile else {
            throw refuse("over \(MinisignText.largestFile) bytes")
        }
        let lines = MinisignText.lines(bytes)
        guard lines.count >= 2, lines[0].hasPrefix("untrusted comment:") else {
            throw refuse("it must begin with an 'untrusted comment:' line and a line of base64")
        }
        guard let decoded = MinisignText.base64(lines[1]), decoded.count == 74 else {
            throw refuse("its second line is not base64 of 74 bytes")
        }
        switch (decoded[0], decoded[1]) {
        case (UInt8(ascii: "E"), UInt8(ascii: "d")): self.algorithm = .pure
        case (UInt8(ascii: "E"), UInt8(ascii: "D")): self.algorithm = .prehashed
        default: throw refuse("an algorithm other than Ed25519")
        }
        self.keyID = Array(decoded[2..<10])
        self.signature = Array(decoded[10..<74])
        if lines.count == 2 {
            guard self.algorithm == .pure else { throw refuse("a pre-hashed signature without a trusted comment") }
            self.trusted = nil
            return
        }
        let prefix = "trusted comment: "
        guard lines.count == 4, lines[2].hasPrefix(prefix) else {
            throw refuse("its third line must be a 'trusted comment:' and its fourth the global signature")
        }
        guard let global = MinisignText.base64(lines[3]), global.count == 64 else {
            throw refuse("its global signature is not base64 of 64 bytes")
        }
        self.trusted = (Array(lines[2].utf8.dropFirst(prefix.utf8.count)), global)
    }

    /// The trusted comment as text (for messages), if any.
    var trustedComment: String? { self.trusted.map { String(decoding: $0.comment, as: UTF8.self) } }
}
