import FoundationEssentials

/// The files of an artifact: the layers of an OCI image manifest (or the blobs of an OCI
/// artifact manifest) that carry an `org.opencontainers.image.title` annotation, the file name
/// ORAS gives each file it pushes (OCI Image Spec, "Pre-Defined Annotation Keys").
///
/// Only what the manifest says is read here; the file names are made safe where they are joined
/// to a directory (``SafeFileName/resolve(_:in:)``), and each file is pinned by its layer's digest.
package struct ArtifactManifest: Sendable, Equatable {
    /// One titled layer.
    package struct File: Sendable, Equatable {
        /// The title as the manifest gives it (a relative path).
        package let title: String
        /// The layer's SHA-256, lower-case hex.
        package let digestHex: String
        /// The layer's size in bytes, as the manifest declares it.
        package let size: Int64
    }

    /// The titled layers, in the manifest's order.
    package let files: [File]
    /// How many layers carry no title (an image's layers, a config): not fetched.
    package let untitled: Int

    /// The largest manifest read, in bytes (the distribution registry refuses larger ones).
    package static let maximumSize = 4 << 20

    private static let titleKey = "org.opencontainers.image.title"

    private struct Descriptor: Decodable {
        var mediaType: String?
        var digest: String?
        var size: Int64?
        var annotations: [String: String]?
        var platform: Platform?
    }

    private struct Platform: Decodable {
        var os: String?
        var architecture: String?
    }

    private struct Document: Decodable {
        var schemaVersion: Int?
        var mediaType: String?
        var layers: [Descriptor]?
        var blobs: [Descriptor]?
        var manifests: [Descriptor]?
    }

    /// Reads a manifest's bytes; `shown` names it in messages (`oci://REGISTRY/REPOSITORY:TAG`).
    /// - Throws: ``PinFetchError/Code/protocolViolation`` (exit 7) for bytes that are no
    ///   manifest (no JSON object, a layer without a `sha256:` digest of 64 hex digits or a
    ///   size); ``PinFetchError/Code/usage`` (exit 2) for a manifest that names no files: an
    ///   index of manifests (one must be named by its digest), schema 1, no titled layer, or a
    ///   titled layer of another digest algorithm.
    package init(parsing bytes: [UInt8], shown: String) throws(PinFetchError) {
        guard let document = try? JSONDecoder().decode(Document.self, from: Data(bytes)) else {
            throw PinFetchError(.protocolViolation, "\(shown): the registry's manifest is no JSON manifest")
        }
        if let manifests = document.manifests, document.layers == nil, document.blobs == nil {
            let platforms = manifests.compactMap { entry in
                entry.platform.map { "\($0.os ?? "?")/\($0.architecture ?? "?")" }
            }
            let listed = platforms.isEmpty ? "" : " (\(platforms.prefix(4).joined(separator: ", ")))"
            throw PinFetchError(
                .usage,
                "\(shown) is an index of \(manifests.count) manifests\(listed): name one by its digest, "
                    + "oci://REGISTRY/REPOSITORY@sha256:HEX"
            )
        }
        guard document.schemaVersion == 2 else {
            throw PinFetchError(
                .usage,
                "\(shown): a manifest of schema \(document.schemaVersion ?? 0) is not read (2 is)"
            )
        }
        guard let layers = document.layers ?? document.blobs else {
            throw PinFetchError(.protocolViolation, "\(shown): the registry's manifest lists no layers")
        }
        var files: [File] = []
        for (index, layer) in layers.enumerated() {
            guard let title = layer.annotations?[Self.titleKey] else { continue }
            guard let digest = layer.digest, let size = layer.size, size >= 0 else {
                throw PinFetchError(
                    .protocolViolation,
                    "\(shown): layer \(index + 1) of the manifest has no digest or size"
                )
            }
            guard digest.hasPrefix("sha256:") else {
                let algorithm = digest.prefix { $0 != ":" }.prefix(20)
                throw PinFetchError(
                    .usage,
                    "\(shown): layer \(index + 1) is addressed by \(algorithm); only sha256 is fetched"
                )
            }
            let hex = digest.dropFirst(7)
            guard hex.utf8.count == 64,
                hex.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) })
            else {
                throw PinFetchError(
                    .protocolViolation,
                    "\(shown): layer \(index + 1)'s digest is not sha256: and 64 lower-case hex digits"
                )
            }
            files.append(File(title: title, digestHex: String(hex), size: size))
        }
        guard !files.isEmpty else {
            throw PinFetchError(
                .usage,
                "\(shown) has no layer titled by \(Self.titleKey) (\(layers.count) untitled): it is no artifact of "
                    + "files; fetch a layer by its digest, oci://REGISTRY/REPOSITORY@sha256:HEX"
            )
        }
        self.files = files
        self.untitled = layers.count - files.count
    }
}
