/// A hash-addressed mirror (`--hashed-mirror`): a URL template with `{hex}` (the
/// pinned digest in lower-case hex) and optionally `{algo}` (`sha256` or `sha512`), such as
/// Nix's hashed mirrors (`https://tarballs.nixos.org/{algo}/{hex}`) or a bazel-remote's
/// `https://cache.example.org/cas/{hex}`. For a pinned file it is asked before the file's own
/// URLs; its bytes are verified like any mirror's, and a mismatch or a miss moves on to the
/// next source.
public struct HashedMirror: Sendable, Hashable {
    /// The template as given.
    public let template: String

    /// - Throws: ``PinFetchError/Code/usage`` (exit 2) for a template without `{hex}`, with a
    ///   fragment, or that does not make an absolute `http`/`https` URL.
    public init(_ template: String) throws(PinFetchError) {
        // Messages show the template as URLs are shown: a password or a token as `***`.
        let shown = "--hashed-mirror \(SafeFileName.quoted(Redaction.url(template)))"
        guard template.contains("{hex}") else {
            throw PinFetchError(.usage, "\(shown) has no {hex} for the digest")
        }
        let example = Self.expand(template, algorithm: "sha256", hex: String(repeating: "0", count: 64))
        let fragment = example.utf8.contains(UInt8(ascii: "#"))
        guard (try? HTTPURL(example)) != nil, !fragment else {
            let why = fragment ? "has a fragment (#...)" : "does not make an http or https URL"
            throw PinFetchError(.usage, "\(shown) \(why)")
        }
        self.template = template
    }

    /// The URL of the file `pin` names.
    public func url(for pin: Pin) -> String {
        Self.expand(self.template, algorithm: pin.algorithm.rawValue, hex: pin.hex)
    }

    private static func expand(_ template: String, algorithm: String, hex: String) -> String {
        template.replacing("{algo}", with: algorithm).replacing("{hex}", with: hex)
    }
}
