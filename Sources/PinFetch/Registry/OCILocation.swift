import FoundationEssentials

/// A blob or a manifest of an OCI registry (the distribution spec's `/v2/` API), named
/// `oci://REGISTRY/REPOSITORY@sha256:HEX` or `oci://REGISTRY/REPOSITORY:TAG`.
///
/// A blob's content is addressed by its digest, which is therefore its pin: it is
/// `GET /v2/REPOSITORY/blobs/sha256:HEX` (OCI Distribution Spec, "Pulling blobs"). A tag names a
/// manifest (`GET /v2/REPOSITORY/manifests/TAG`), as does a digest taken as an artifact's
/// (``manifest``); a manifest's bytes hash to its digest too. Requests go over `https`, or plain
/// `http` for a registry on a loopback address (as docker allows for `localhost` registries).
package struct OCILocation: Hashable, Sendable {
    /// What the URL names in its repository: content by its SHA-256, or a tag.
    package enum Reference: Hashable, Sendable {
        /// `@sha256:HEX`, lower-case hex.
        case digest(String)
        /// `:TAG`: `[A-Za-z0-9_][A-Za-z0-9._-]{0,127}` (OCI Distribution Spec, "Pulling manifests").
        case tag(String)
    }

    /// `host[:port]`, lower-cased; Docker Hub's `docker.io` and `index.docker.io` are its API's
    /// `registry-1.docker.io`.
    package let registry: String
    /// The repository's name: components of `a-z0-9` joined by `.`, `_`, `__` or `-`
    /// runs, separated by `/` (OCI Distribution Spec, "Pulling manifests").
    package let repository: String
    /// The digest or the tag.
    package let reference: Reference
    /// Whether the requests are for a manifest (`/manifests/`), not a blob: always for a tag.
    package private(set) var isManifest: Bool

    /// The SHA-256 of the blob or manifest, lower-case hex; `nil` for a tag.
    package var digestHex: String? {
        if case .digest(let hex) = self.reference { return hex }
        return nil
    }

    /// The same digest, taken as a manifest's (an artifact's).
    package var manifest: OCILocation {
        var manifest = self
        manifest.isManifest = true
        return manifest
    }

    /// The same registry and repository, and a blob of it.
    package func blob(sha256Hex hex: String) -> OCILocation {
        OCILocation(registry: self.registry, repository: self.repository, reference: .digest(hex), isManifest: false)
    }

    private init(registry: String, repository: String, reference: Reference, isManifest: Bool) {
        self.registry = registry
        self.repository = repository
        self.reference = reference
        self.isManifest = isManifest
    }

    /// Whether `text` is written as an `oci://` URL (the scheme in any case).
    package static func names(_ text: String) -> Bool {
        text.utf8.count > 6 && text.prefix(6).lowercased() == "oci://"
    }

    /// Reads `oci://REGISTRY/REPOSITORY@sha256:HEX` (a blob) or `oci://REGISTRY/REPOSITORY:TAG`
    /// (a manifest).
    /// - Throws: ``PinFetchError/Code/usage`` (exit 2) for no registry or repository, a
    ///   repository name or tag the spec does not allow, another digest algorithm than
    ///   `sha256:` and 64 lower-case hex digits, or neither a digest nor a tag.
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
        let repository: Substring
        let reference: Reference
        if let at = path.lastIndex(of: "@") {
            // `REPOSITORY:TAG@sha256:HEX`, as docker writes it: the digest decides, the tag is checked.
            var named = path[..<at]
            if let colon = named.lastIndex(of: ":"), !named[colon...].contains("/") {
                guard Self.isTag(named[named.index(after: colon)...]) else {
                    throw PinFetchError(.usage, "\(shown): '\(named[colon...].dropFirst().prefix(140))' is no tag")
                }
                named = named[..<colon]
            }
            repository = named
            let digest = path[path.index(after: at)...]
            guard digest.hasPrefix("sha256:"), digest.utf8.count == 71,
                digest.dropFirst(7).utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) })
            else {
                throw PinFetchError(.usage, "\(shown): the digest must be sha256: and 64 lower-case hex digits")
            }
            reference = .digest(String(digest.dropFirst(7)))
        } else if let colon = path.lastIndex(of: ":"), !path[colon...].contains("/") {
            repository = path[..<colon]
            let tag = path[path.index(after: colon)...]
            guard Self.isTag(tag) else {
                throw PinFetchError(
                    .usage,
                    "\(shown): '\(tag.prefix(140))' is no tag (letters, digits, '_', '.', '-'; at most 128, "
                        + "not starting with '.' or '-')"
                )
            }
            reference = .tag(String(tag))
        } else {
            throw PinFetchError(
                .usage,
                "\(shown) names neither a digest nor a tag: write oci://REGISTRY/REPOSITORY@sha256:HEX (a blob) "
                    + "or oci://REGISTRY/REPOSITORY:TAG (an artifact)"
            )
        }
        guard Self.isRepository(String(repository)) else {
            throw PinFetchError(
                .usage,
                "\(shown): '\(repository)' is no repository name (lower-case components separated by '/')"
            )
        }
        // Docker Hub's API is registry-1.docker.io, its official images under `library/` (as docker names them).
        let hub = registry == "docker.io" || registry == "index.docker.io"
        self.registry = hub ? "registry-1.docker.io" : registry
        self.repository =
            (hub || registry == "registry-1.docker.io") && !repository.contains("/")
            ? "library/" + repository : String(repository)
        self.reference = reference
        if case .tag = reference { self.isManifest = true } else { self.isManifest = false }
    }

    /// `oci://REGISTRY/REPOSITORY@sha256:HEX` or `…:TAG`, as messages show it.
    package var text: String { "oci://\(self.registry)/\(self.repository)\(self.referenceText)" }

    /// `@sha256:HEX` or `:TAG`.
    private var referenceText: String {
        switch self.reference {
        case .digest(let hex): "@sha256:\(hex)"
        case .tag(let tag): ":\(tag)"
        }
    }

    /// The digest as the pin of the blob or manifest; `nil` for a tag.
    var pin: Pin? { self.digestHex.flatMap { try? Pin(sha256Hex: $0) } }

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

    /// The blob's or manifest's URL.
    var url: String {
        let reference: String
        switch self.reference {
        case .digest(let hex): reference = "sha256:" + hex
        case .tag(let tag): reference = tag
        }
        return "\(self.base)/v2/\(self.repository)/\(self.isManifest ? "manifests" : "blobs")/\(reference)"
    }

    /// The manifest media types a manifest's request accepts (the `Accept` field): OCI's image
    /// manifest and index, docker's schema 2 manifest and manifest list, OCI's artifact manifest.
    static let manifestTypes = [
        "application/vnd.oci.image.manifest.v1+json", "application/vnd.oci.image.index.v1+json",
        "application/vnd.docker.distribution.manifest.v2+json",
        "application/vnd.docker.distribution.manifest.list.v2+json", "application/vnd.oci.artifact.manifest.v1+json",
    ]

    /// The spec's tag grammar: `[a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}`.
    static func isTag(_ tag: Substring) -> Bool {
        func word(_ byte: UInt8) -> Bool {
            (0x61...0x7A).contains(byte) || (0x41...0x5A).contains(byte) || (0x30...0x39).contains(byte) || byte == 0x5F
        }
        guard let first = tag.utf8.first, word(first), tag.utf8.count <= 128 else { return false }
        return tag.utf8.allSatisfy { word($0) || $0 == 0x2E || $0 == 0x2D }
    }

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
