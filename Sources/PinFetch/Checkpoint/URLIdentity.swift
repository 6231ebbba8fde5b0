import FoundationEssentials

/// The mirror a partial's bytes came from, as a checkpoint keeps it: the URL without its
/// secrets (``HTTPURL/redacted``, shown and compared) and a salted SHA-256 of the whole URL,
/// secrets included, so `?key=A` and `?key=B` (both shown as `?key=***`) are told apart
/// without writing a secret to a sidecar (DESIGN.md, "Secrets ... never written to a sidecar").
///
/// The salt is 16 random bytes per identity: the same URL gives another digest in each
/// partial, so a digest cannot be looked up in a table made in advance.
struct URLIdentity: Hashable, Sendable {
    /// ``HTTPURL/redacted`` of the URL.
    let redacted: String
    /// The salt and SHA-256(salt ‖ URL text), as the checkpoint's `urlDigest` field stores them
    /// (`<salt base64>:<digest base64>`); `nil` in records written before the field existed.
    let sealed: String?

    /// The identity of `url`, with a new random salt.
    init(_ url: HTTPURL) {
        let salt = (0..<16).map { _ in UInt8.random(in: .min ... .max) }
        self.redacted = url.redacted
        self.sealed = Self.seal(url.text, salt: salt)
    }

    /// The identity a checkpoint recorded.
    init(redacted: String, sealed: String?) {
        self.redacted = redacted
        self.sealed = sealed
    }

    /// Whether `url` is the URL this identity was made from. A record without a digest (an
    /// older one) names only a URL that has no secret to hide: for any other, it cannot say
    /// which of the URLs shown alike it was.
    func names(_ url: HTTPURL) -> Bool {
        guard url.redacted == self.redacted else { return false }
        guard let sealed else { return url.redacted == url.text }
        guard let colon = sealed.firstIndex(of: ":"),
            let salt = Data(base64Encoded: String(sealed[..<colon])), salt.count == 16
        else { return false }
        return Self.seal(url.text, salt: [UInt8](salt)) == sealed
    }

    private static func seal(_ text: String, salt: [UInt8]) -> String {
        let digest = RunningDigest(algorithm: .sha256)
        salt.withUnsafeBytes { digest.update($0) }
        Array(text.utf8).withUnsafeBytes { digest.update($0) }
        return Data(salt).base64EncodedString() + ":" + Data(digest.finalize()).base64EncodedString()
    }
}
