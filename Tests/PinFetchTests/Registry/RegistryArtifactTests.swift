import Foundation
@preconcurrency import Glibc
import Testing

@testable import PinFetch

/// `oci://REGISTRY/REPOSITORY:TAG` (or `@sha256:MANIFEST` with `-P DIR`): the layers of an
/// artifact titled by `org.opencontainers.image.title` (as ORAS pushes files), each a file
/// pinned by its layer's digest, from a real registry (Debian's docker-registry).
@Suite(.serialized) struct RegistryArtifactTests {
    static let credentials = "\(DockerRegistry.user):\(DockerRegistry.password)"
    static let tool = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 7) }
    static let notes = Array("release notes\n".utf8)
    static let readme = Array("read me first\n".utf8)
    static let untitled = Array("an image layer without a title".utf8)
    /// ORAS's empty config (`application/vnd.oci.empty.v1+json`).
    static let config = Array("{}".utf8)

    /// A layer's descriptor, titled `title` (or untitled for `nil`).
    static func layer(_ body: [UInt8], _ title: String?) -> String {
        let annotations = title.map { #","annotations":{"org.opencontainers.image.title":"\#($0)"}"# } ?? ""
        return
            #"{"mediaType":"application/octet-stream","digest":"sha256:\#(Fixtures.sha256(body))","size":\#(body.count)\#(annotations)}"#
    }

    /// An OCI image manifest with ORAS's empty config and `layers`.
    static func manifest(_ layers: [String]) -> [UInt8] {
        let config =
            #"{"mediaType":"application/vnd.oci.empty.v1+json","digest":"sha256:\#(Fixtures.sha256(Self.config))","size":2}"#
        return Array(
            #"{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","artifactType":"application/vnd.example.tools","config":\#(config),"layers":[\#(layers.joined(separator: ","))]}"#
                .utf8
        )
    }

    /// Pushes the four layers, the config, and `manifest` under `tag`.
    static func pushArtifact(_ registry: DockerRegistry, _ manifest: [UInt8], tag: String) async throws {
        for body in [Self.tool, Self.notes, Self.readme, Self.untitled, Self.config] {
            try await registry.push(body, to: "tools/cli")
        }
        try await registry.pushManifest(manifest, to: "tools/cli", reference: tag)
    }

    static let titled = Self.manifest([
        Self.layer(Self.tool, "tool"), Self.layer(Self.untitled, nil), Self.layer(Self.notes, "NOTES.txt"),
        Self.layer(Self.readme, "docs/README"),
    ])

    static func run(_ arguments: [String], in work: String) async throws -> ChildProcess {
        try await RegistryBlobTests.pinfetch(["-u", Self.credentials] + arguments, in: work)
    }

    /// The JSON lines of `child`'s standard output, decoded.
    static func lines(_ child: ChildProcess) -> [[String: Any]] {
        child.standardOutput.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    @Test func `an artifact by tag becomes its titled layers in -P DIR, and a rerun asks only for the manifest`()
        async throws
    {
        try await withDockerRegistry { registry in
            try await Self.pushArtifact(registry, Self.titled, tag: "v1.0")
            try await withTemporaryDirectory { work in
                let url = "oci://\(registry.host)/tools/cli:v1.0"
                let first = try await Self.run(["-P", "\(work)/out", url], in: work)
                #expect(RegistryBlobTests.status(first) == 0, "\(first.transcript)")
                let tool = contents("\(work)/out/tool") == Self.tool
                let notes = contents("\(work)/out/NOTES.txt") == Self.notes
                let readme = contents("\(work)/out/docs/README") == Self.readme
                #expect(tool && notes && readme)
                let placed = try FileManager.default.subpathsOfDirectory(atPath: "\(work)/out").sorted()
                #expect(placed == ["NOTES.txt", "docs", "docs/README", "tool"], "\(placed)")

                // The manifest is reported: its digest on standard error and in its JSON line.
                let digest = Fixtures.sha256(Self.titled)
                #expect(first.standardError.contains("manifest sha256:\(digest), 3 files (1 untitled"))
                let lines = Self.lines(first)
                let manifest = lines.first { $0["input"] as? String == "artifact" }
                #expect(manifest?["sha256"] as? String == digest, "\(first.standardOutput)")
                #expect(manifest?["url"] as? String == url)
                let files = lines.filter { $0["input"] == nil }
                #expect(files.count == 3)
                let tools = files.first { ($0["path"] as? String)?.hasSuffix("/out/tool") == true }
                #expect(
                    tools?["url"] as? String == "oci://\(registry.host)/tools/cli@sha256:\(Fixtures.sha256(Self.tool))"
                )
                #expect(tools?["sha256"] as? String == Fixtures.sha256(Self.tool))

                // A rerun: the manifest again (a tag may move), the files complete by their records.
                let again = try await Self.run(["-P", "\(work)/out", url], in: work)
                #expect(RegistryBlobTests.status(again) == 0, "\(again.transcript)")
                let statuses = Self.lines(again).filter { $0["input"] == nil }.compactMap { $0["status"] as? String }
                #expect(statuses == ["already-complete", "already-complete", "already-complete"], "\(statuses)")

                // The same files by the manifest's digest with -P; --include picks by title.
                let byDigest = try await Self.run(
                    [
                        "-P", "\(work)/digest", "--include", "*.txt",
                        "oci://\(registry.host)/tools/cli@sha256:\(digest)",
                    ],
                    in: work
                )
                #expect(RegistryBlobTests.status(byDigest) == 0, "\(byDigest.transcript)")
                let picked = try FileManager.default.contentsOfDirectory(atPath: "\(work)/digest")
                #expect(picked == ["NOTES.txt"], "\(picked)")
            }
        }
    }

    @Test func `a pin given for a tag pins the manifest: another is exit 9 and nothing is placed`() async throws {
        try await withDockerRegistry { registry in
            try await Self.pushArtifact(registry, Self.titled, tag: "latest")
            try await withTemporaryDirectory { work in
                let url = "oci://\(registry.host)/tools/cli:latest"
                let wrong = try await Self.run(
                    ["-P", "\(work)/out", "--sha256", String(repeating: "ab", count: 32), url],
                    in: work
                )
                #expect(RegistryBlobTests.status(wrong) == 9, "\(wrong.transcript)")
                #expect(wrong.standardError.contains("artifact's manifest"), "\(wrong.standardError)")
                #expect(!FileManager.default.fileExists(atPath: "\(work)/out"))
                let right = try await Self.run(
                    ["-P", "\(work)/out", "--sha256", Fixtures.sha256(Self.titled), url],
                    in: work
                )
                #expect(RegistryBlobTests.status(right) == 0, "\(right.transcript)")
                #expect(contents("\(work)/out/tool") == Self.tool)
                // A digest-addressed artifact with another pin is bad input, before any request.
                let disagreeing = try await Self.run(
                    [
                        "-P", "\(work)/other", "--sha256", String(repeating: "ab", count: 32),
                        "oci://\(registry.host)/tools/cli@sha256:\(Fixtures.sha256(Self.titled))",
                    ],
                    in: work
                )
                #expect(RegistryBlobTests.status(disagreeing) == 2, "\(disagreeing.transcript)")
            }
        }
    }

    @Test func `unsafe titles, an image without titles and an artifact with -o are refused, nothing created`()
        async throws
    {
        try await withDockerRegistry { registry in
            let escaping = Self.manifest([Self.layer(Self.notes, "ok.txt"), Self.layer(Self.readme, "../escape")])
            let absolute = Self.manifest([Self.layer(Self.readme, "/tmp/abs")])
            let image = Self.manifest([Self.layer(Self.untitled, nil)])
            let twice = Self.manifest([Self.layer(Self.notes, "same"), Self.layer(Self.readme, "same")])
            try await Self.pushArtifact(registry, escaping, tag: "escaping")
            try await registry.pushManifest(absolute, to: "tools/cli", reference: "absolute")
            try await registry.pushManifest(image, to: "tools/cli", reference: "image")
            try await registry.pushManifest(twice, to: "tools/cli", reference: "twice")
            let index = Array(
                #"{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:\#(Fixtures.sha256(image))","size":\#(image.count),"platform":{"os":"linux","architecture":"arm64"}}]}"#
                    .utf8
            )
            try await registry.pushManifest(
                index,
                to: "tools/cli",
                reference: "index",
                type: "application/vnd.oci.image.index.v1+json"
            )
            try await withTemporaryDirectory { work in
                let base = "oci://\(registry.host)/tools/cli"
                for (tag, says) in [
                    ("escaping", "'..'"), ("absolute", "absolute"), ("image", "no layer titled"),
                    ("index", "index of 1 manifests (linux/arm64)"), ("twice", "is written by line 1 too"),
                ] {
                    let child = try await Self.run(["-P", "\(work)/out", "\(base):\(tag)"], in: work)
                    #expect(RegistryBlobTests.status(child) == 2, "\(tag): \(child.transcript)")
                    #expect(child.standardError.contains(says), "\(tag): \(child.standardError)")
                    #expect(!FileManager.default.fileExists(atPath: "\(work)/out"), "\(tag)")
                    #expect(!FileManager.default.fileExists(atPath: "\(work)/escape"), "\(tag)")
                }
                let output = try await Self.run(["-o", "\(work)/file", "\(base):escaping"], in: work)
                #expect(RegistryBlobTests.status(output) == 2, "\(output.transcript)")
                #expect(output.standardError.contains("give -P DIR, not -o"), "\(output.standardError)")
                // A tag among mirrors, or on a manifest's line, is refused before any request.
                let mirrors = try await Self.run(
                    ["-o", "\(work)/f", "http://127.0.0.1:9/f", "\(base):escaping"],
                    in: work
                )
                #expect(RegistryBlobTests.status(mirrors) == 2, "\(mirrors.transcript)")
                try "\(base):escaping out.bin\n".write(toFile: "\(work)/list", atomically: true, encoding: .utf8)
                let listed = try await Self.run(["-i", "\(work)/list", "-P", "\(work)/out"], in: work)
                #expect(RegistryBlobTests.status(listed) == 2, "\(listed.transcript)")
                #expect(listed.standardError.contains("list:1:") && listed.standardError.contains("names an artifact"))
                let missing = try await Self.run(["-P", "\(work)/out", "\(base):nope"], in: work)
                #expect(RegistryBlobTests.status(missing) == 8, "\(missing.transcript)")
                #expect(!FileManager.default.fileExists(atPath: "\(work)/out"))
            }
        }
    }

    @Test func `a manifest's titled layers are its files; an index, schema 1 or bad descriptors are refused`() throws {
        let hex = String(repeating: "ab", count: 32)
        func parse(_ json: String) throws(PinFetchError) -> ArtifactManifest {
            try ArtifactManifest(parsing: Array(json.utf8), shown: "oci://r/x:t")
        }
        // OCI's artifact manifest lists `blobs`; docker's schema 2 `layers`.
        let artifact = try parse(
            #"{"schemaVersion":2,"mediaType":"application/vnd.oci.artifact.manifest.v1+json","blobs":[{"digest":"sha256:\#(hex)","size":7,"annotations":{"org.opencontainers.image.title":"a.bin"}}]}"#
        )
        #expect(artifact.files == [ArtifactManifest.File(title: "a.bin", digestHex: hex, size: 7)])
        #expect(artifact.untitled == 0)
        func code(_ json: String) -> PinFetchError.Code? {
            do { _ = try parse(json) } catch { return error.code }
            return nil
        }
        #expect(code("not json") == .protocolViolation)
        #expect(code(#"{"schemaVersion":1,"fsLayers":[]}"#) == .usage)
        #expect(code(#"{"schemaVersion":2,"manifests":[]}"#) == .usage)
        #expect(code(#"{"schemaVersion":2}"#) == .protocolViolation)
        let titled = #","annotations":{"org.opencontainers.image.title":"f"}"#
        #expect(code(#"{"schemaVersion":2,"layers":[{"digest":"sha256:\#(hex)"\#(titled)}]}"#) == .protocolViolation)
        #expect(
            code(#"{"schemaVersion":2,"layers":[{"digest":"sha256:AB","size":1\#(titled)}]}"#) == .protocolViolation
        )
        #expect(code(#"{"schemaVersion":2,"layers":[{"digest":"sha512:\#(hex)","size":1\#(titled)}]}"#) == .usage)
        #expect(
            code(#"{"schemaVersion":2,"layers":[{"digest":"sha256:\#(hex)","size":-1\#(titled)}]}"#)
                == .protocolViolation
        )
        #expect(code(#"{"schemaVersion":2,"layers":[{"digest":"sha256:\#(hex)","size":1}]}"#) == .usage)
    }
}
