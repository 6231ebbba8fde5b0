import FoundationEssentials

/// A blob of an OCI registry (the distribution spec's `/v2/` API), named
/// `oci://REGISTRY/REPOSITORY@sha256:HEX`: its content is addressed by its digest, which is
/// therefore its pin.
///
/// The blob is `GET /v2/REPOSITORY/blobs/sha256:HEX` (OCI Distribution Spec, "Pulling blobs"),
/// over `https`, or plain `http` for a registry on a loopback address (as docker allows for
/// `localhost` registries).
package struct OCILocation: Hashable, Sendable {
    /// `host[:port]`, lower-cased.
    package let registry: String
    /// The repository's name: components of `a-z0-9` joined by `.`, `_`, `__` or `-`
    /// runs, separated by `/` (OCI Distribution Spec, "Pulling manifests").
    package let repository: String
    /// The blob's SHA-256, lower-case hex.
    package let digestHex: String

    /// Whether `text` is written as an `oci://` URL (the scheme in any case).
    package static func names(_ text: String) -> Bool {
        text.utf8.count > 6 && text.prefix(6).lowercased() == "oci://"
    }

    /// Reads `oci://REGISTRY/REPOSITORY@sha256:HEX`.
    /// - Throws: ``PinFetchError/Code/usage`` (exit 2) for no registry or repository, a
    ///   repository name the spec does not allow, a tag or another digest algorithm in place
    ///   of `@sha256:` and 64 hex digits.
    package init(_ text: String) throws(PinFetchError) {
        let shown = "'\(String(text.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }.prefix(200)))'"
        let rest = text.dropFirst(6)
        guard let slash = rest.firstIndex(of: "/") else {
            throw PinFetchError(.usage, "\(shown) names no repository: write oci://REGISTRY/REPOSITORY@sha256:HEX")
        }
        let registry = String(rest[..<slash]).lowercased()
        let path = rest[rest.index(after: slash)...]
        guard !registry.isEmpty, !registry.contains("@"),
            registry.utf8.allSatisfy({
                (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || ".-:[]".utf8.contains($0)
            })
        else {
            throw PinFetchError(.usage, "\(shown): '\(Redaction.malformedURL(registry))' is no registry host[:port]")
        }
        guard let at = path.lastIndex(of: "@") else {
            throw PinFetchError(
                .usage,
                "\(shown) names no blob: write oci://REGISTRY/REPOSITORY@sha256:HEX (tags and artifacts "
                    + "are not fetched yet)"
            )
        }
        let repository = String(path[..<at])
        let digest = path[path.index(after: at)...]
        guard Self.isRepository(repository) else {
            throw PinFetchError(
                .usage,
                "\(shown): '\(repository)' is no repository name (lower-case components separated by '/')"
            )
        }
        guard digest.hasPrefix("sha256:"), digest.utf8.count == 71,
            digest.dropFirst(7).utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) })
        else {
            throw PinFetchError(.usage, "\(shown): the digest must be sha256: and 64 lower-case hex digits")
        }
        self.registry = registry
        self.repository = repository
        self.digestHex = String(digest.dropFirst(7))
    }

    /// `oci://REGISTRY/REPOSITORY@sha256:HEX`, as messages show it.
    package var text: String { "oci://\(self.registry)/\(self.repository)@sha256:\(self.digestHex)" }

    /// The digest as the blob's pin.
    var pin: Pin? { try? Pin(sha256Hex: self.digestHex) }

    /// Whether the registry is on a loopback address (`localhost`, `127.x.y.z`, `[::1]`), where
    /// plain HTTP is allowed.
    var isLoopback: Bool {
        let host =
            self.registry.hasPrefix("[")
            ? String(self.registry.prefix { $0 != "]" }) + "]" : String(self.registry.prefix { $0 != ":" })
        return Self.isLoopbackHost(host)
    }

    /// Whether `host` (as a URL writes it, an IPv6 literal in brackets) is a loopback address.
    static func isLoopbackHost(_ host: String) -> Bool {
        host == "localhost" || host == "[::1]"
            || (host.hasPrefix("127.") && host.allSatisfy { $0.isNumber || $0 == "." })
    }

    /// `https://REGISTRY` (`http://` on a loopback address): the base of its `/v2/` API.
    var base: String { (self.isLoopback ? "http://" : "https://") + self.registry }

    /// The blob's URL.
    var url: String { "\(self.base)/v2/\(self.repository)/blobs/sha256:\(self.digestHex)" }

    /// The spec's repository grammar: `[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*(\/[a-z0-9]+(...)*)*`.
    static func isRepository(_ name: String) -> Bool {
        guard !name.isEmpty, name.utf8.count <= 255 else { return false }
        return name.split(separator: "/", omittingEmptySubsequences: false).allSatisfy { component in
            let bytes = Array(component.utf8)
            func alphanumeric(_ byte: UInt8) -> Bool { (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte) }
            guard let first = bytes.first, let last = bytes.last, alphanumeric(first), alphanumeric(last) else {
                return false
            }
            var index = 0
            while index < bytes.count {
                if alphanumeric(bytes[index]) {
                    index += 1
                    continue
                }
                // A separator run: `.`, `_`, `__` or one or more `-`.
                var end = index
                while end < bytes.count, !alphanumeric(bytes[end]) { end += 1 }
                let run = String(decoding: bytes[index..<end], as: UTF8.self)
                guard run == "." || run == "_" || run == "__" || run.allSatisfy({ $0 == "-" }) else { return false }
                index = end
            }
            return true
        }
    }
}
