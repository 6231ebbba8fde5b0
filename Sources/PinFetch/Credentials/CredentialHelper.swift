import FoundationEssentials

/// A program that gives the header fields a request needs (a token that expires), in Bazel's
/// credential helper protocol (EngFlow's credential-helper spec): run as `PATH get` without a
/// shell, it reads `{"uri": "…"}` on its standard input and prints
/// `{"headers": {"Name": ["value", …]}, "expires": "RFC 3339 time"}`.
///
/// Which helper a request's host gets (Bazel's rule): a pattern naming the host exactly wins
/// over a wildcard `*.NAME` (which matches `NAME` and every name under it), the longer wildcard
/// over the shorter, and any of them over a helper without a pattern; of two helpers given for
/// one pattern the later wins.
public struct CredentialHelper: Sendable, Hashable {
    /// The host (lower case), `*.NAME`, or `nil` for every host.
    public var pattern: String?
    /// The program: a path, or a name looked up in `PATH`.
    public var path: String

    /// A helper for the hosts `pattern` matches (`nil`: every host).
    public init(pattern: String?, path: String) {
        self.pattern = pattern?.lowercased()
        self.path = path
    }

    /// Reads `[HOST_PATTERN=]PATH`: the pattern is what comes before the first `=`, unless
    /// that holds a `/` (then the whole text is a path).
    /// - Throws: ``PinFetchError/Code/usage`` for an empty path or a pattern that is no host
    ///   name (`*` alone, `a.*.com`, a port or a scheme).
    public init(parsing text: String) throws(PinFetchError) {
        guard let equals = text.firstIndex(of: "="), !text[..<equals].contains("/") else {
            guard !text.isEmpty else { throw PinFetchError(.usage, "--credential-helper needs a program") }
            self.init(pattern: nil, path: text)
            return
        }
        let pattern = String(text[..<equals])
        let path = String(text[text.index(after: equals)...])
        guard Self.isPattern(pattern) else {
            throw PinFetchError(
                .usage,
                "--credential-helper '\(Redaction.text(String(pattern.prefix(100))))=…': the pattern is a host "
                    + "name (example.com) or one under a wildcard (*.example.com)"
            )
        }
        guard !path.isEmpty else { throw PinFetchError(.usage, "--credential-helper \(pattern)= names no program") }
        self.init(pattern: pattern, path: path)
    }

    /// Whether ``path`` names an executable (itself, or a name found in `PATH`).
    package var isRunnable: Bool { ChildCommand.resolve(self.path) != nil }

    /// How closely the pattern matches `host` (larger is more specific), or `nil` when it does
    /// not: an exact name beats every wildcard, a wildcard scores its length.
    func specificity(for host: String) -> Int? {
        let host = host.lowercased()
        guard let pattern = self.pattern else { return 0 }
        if pattern.hasPrefix("*.") {
            let name = pattern.dropFirst(2)
            guard host == name || host.hasSuffix("." + name) else { return nil }
            return 1 + name.utf8.count
        }
        return host == pattern ? Int.max : nil
    }

    /// The helper of `helpers` for `host`: the most specific match, the later of two equal ones.
    static func chosen(from helpers: [CredentialHelper], for host: String) -> CredentialHelper? {
        var best: (helper: CredentialHelper, score: Int)?
        for helper in helpers {
            guard let score = helper.specificity(for: host) else { continue }
            if best == nil || score >= best!.score { best = (helper, score) }
        }
        return best?.helper
    }

    /// A DNS name (letters, digits, `-`, `_`, dots between labels), alone or after `*.`.
    private static func isPattern(_ text: String) -> Bool {
        let name = text.hasPrefix("*.") ? text.dropFirst(2) : Substring(text)
        let labels = name.split(separator: ".", omittingEmptySubsequences: false)
        return !name.isEmpty && name.utf8.count <= 253
            && labels.allSatisfy { label in
                !label.isEmpty && label.utf8.count <= 63
                    && label.utf8.allSatisfy {
                        (0x61...0x7A).contains($0 | 0x20) || (0x30...0x39).contains($0) || $0 == 0x2D || $0 == 0x5F
                    }
            }
    }
}
