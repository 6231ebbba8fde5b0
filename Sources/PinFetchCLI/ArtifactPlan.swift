import FoundationEssentials
@preconcurrency import Glibc
import PinFetch

/// The files of an artifact in a registry (the Registries article): `oci://REGISTRY/REPOSITORY:TAG`,
/// or `@sha256:MANIFEST` with `-P DIR`. Its manifest is fetched (pinned by its digest, or by
/// `--sha256` for a tag), and each layer titled by `org.opencontainers.image.title` becomes a
/// file of that name inside the directory, pinned by the layer's digest.
enum ArtifactPlan {
    /// The artifact `url` names: a tag always; a digest when the files go to a directory
    /// (`-P DIR` without `-o`); `nil` for a blob or any other URL.
    static func artifact(_ url: HTTPURL?, _ arguments: Arguments) -> OCILocation? {
        guard let location = url?.oci else { return nil }
        if location.isManifest { return location }
        return arguments.directory != nil && arguments.output == nil ? location.manifest : nil
    }

    /// The jobs for the files of `artifact`, given as the command line's only URL.
    /// - Parameter report: Told of the manifest's fetch (`input` `artifact` in `--json`), and
    ///   of its digest (a note, unless `-q`).
    /// - Throws: ``PinFetchError/Code/usage`` for an artifact given with `-o`, beside other
    ///   URLs, or whose manifest names no file or an unsafe one; the manifest fetch's error
    ///   (``PinFetchError/Code/digestMismatch`` when it does not match its pin).
    static func jobs(
        for artifact: OCILocation,
        _ arguments: Arguments,
        report: (JobPlan.Report) -> Void
    ) async throws(PinFetchError) -> [FetchJob] {
        let shown = artifact.text
        guard arguments.output == nil else {
            throw PinFetchError(.usage, "\(shown) names an artifact's files: give -P DIR, not -o")
        }
        guard arguments.urls.count == 1 else {
            throw PinFetchError(.usage, "\(shown) names an artifact: give it as the only URL")
        }
        var pin = arguments.pin
        if let digest = artifact.digestHex, let given = pin, given.algorithm == .sha256, given.hex != digest {
            throw PinFetchError(.usage, "\(shown) is addressed by its digest, and the pin given is another")
        }
        if let digest = artifact.digestHex { pin = try? Pin(sha256Hex: digest) }
        let (bytes, result) = try await JobPlan.fetch(
            try HTTPURL(registry: artifact),
            arguments,
            role: "artifact",
            pin: pin,
            maximum: ArtifactManifest.maximumSize,
            report: report
        )
        let manifest = try ArtifactManifest(parsing: bytes, shown: shown)
        report(.input(role: "artifact", result: result))
        let files = try Self.filtered(manifest.files, arguments, shown: shown)
        if !arguments.quiet {
            let skipped = manifest.untitled > 0 ? " (\(manifest.untitled) untitled layers not fetched)" : ""
            report(.note("\(shown): manifest sha256:\(result.digest ?? "?"), \(files.count) files\(skipped)"))
        }
        let directory = arguments.directory ?? "."
        var outputs = OutputNames()
        var jobs: [FetchJob] = []
        for (index, file) in files.enumerated() {
            let destination: String
            do throws(PinFetchError) {
                let resolved = try SafeFileName.resolve(file.title, in: directory)
                destination = resolved.hasPrefix("./") ? String(resolved.dropFirst(2)) : resolved
            } catch {
                throw PinFetchError(error.code, "\(shown): a layer's title: \(error.message)")
            }
            try outputs.claim(destination, line: index + 1, input: "\(shown) layer")
            let blob = artifact.blob(sha256Hex: file.digestHex)
            jobs.append(FetchJob(urls: [try HTTPURL(registry: blob)], destination: destination))
        }
        return jobs
    }

    /// The files `--include` and `--exclude` keep, by title (fnmatch(3) patterns).
    private static func filtered(
        _ files: [ArtifactManifest.File],
        _ arguments: Arguments,
        shown: String
    ) throws(PinFetchError) -> [ArtifactManifest.File] {
        guard !arguments.includes.isEmpty || !arguments.excludes.isEmpty else { return files }
        func matches(_ name: String, _ patterns: [String]) -> Bool { patterns.contains { fnmatch($0, name, 0) == 0 } }
        let kept = files.filter {
            (arguments.includes.isEmpty || matches($0.title, arguments.includes))
                && !matches($0.title, arguments.excludes)
        }
        guard !kept.isEmpty else {
            throw PinFetchError(.usage, "\(shown): --include and --exclude leave none of its \(files.count) files")
        }
        return kept
    }
}
