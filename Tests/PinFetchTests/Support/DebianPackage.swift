import Foundation

/// A real Debian package, fetched with `apt-get download` and pinned by the `SHA256:` that
/// `apt-cache show --no-all-versions` gives for the same version.
///
/// Needs apt's lists (`apt-get update` once; `.ci/run` does it) and Debian's mirror.
struct DebianPackage: Sendable {
    /// The package name, e.g. `coreutils`.
    var name: String
    /// The Debian version, e.g. `9.1-1` (an epoch shows as `1:`).
    var version: String
    /// The name `apt-get download` gave the file, e.g. `coreutils_9.1-1_amd64.deb`.
    var fileName: String
    /// The SHA-256 of the `.deb` from apt's index: 64 lower-case hex digits.
    var sha256: String
    /// The `.deb` file.
    var bytes: [UInt8]

    /// coreutils (about 2.9 MB; `Essential: yes`, so in every Debian 12 archive): large enough to
    /// be interrupted mid-way at 200 KiB/s. Downloaded once per test process; an error stays.
    static let coreutils = Task { try await DebianPackage.download("coreutils") }

    /// Downloads the candidate version of `name` into a temporary directory and reads it.
    ///
    /// - Throws: ``DebianPackageError`` when apt knows no such package (lists missing), when the
    ///   download fails (no network), or when the file is not the one apt's index describes.
    static func download(_ name: String) async throws -> DebianPackage {
        try await withTemporaryDirectory { directory in
            let show = try await ChildProcess.run(
                "/usr/bin/apt-cache",
                ["show", "--no-all-versions", name],
                logs: directory + "/apt-cache"
            )
            let fields = Self.fields(ofFirstStanza: show.standardOutput)
            guard show.termination == .exited(0), let version = fields["Version"], let sha256 = fields["SHA256"],
                let size = fields["Size"].flatMap({ Int($0) })
            else {
                throw DebianPackageError(
                    "apt-cache show --no-all-versions \(name) gave no version with a SHA256 (run apt-get update "
                        + "once; .ci/run does):\n\(show.transcript)"
                )
            }

            let downloads = directory + "/debs"
            try FileManager.default.createDirectory(atPath: downloads, withIntermediateDirectories: true)
            let fetch = try await ChildProcess.run(  // `env -C`: apt-get downloads into the working directory
                "/usr/bin/env",
                ["-C", downloads, "apt-get", "-q", "download", "\(name)=\(version)"],
                logs: directory + "/apt-get"
            )
            guard fetch.termination == .exited(0) else {
                throw DebianPackageError(
                    "apt-get download \(name)=\(version) failed; the end-to-end tests need Debian's package mirror "
                        + "(PINFETCH_SKIP_E2E=1 skips them):\n\(fetch.transcript)"
                )
            }

            // apt-get names the file NAME_VERSION_ARCH.deb with the epoch's ':' as "%3a".
            let files = listing(downloads)
            let prefix = "\(name)_\(version.replacingOccurrences(of: ":", with: "%3a"))_"
            guard files.count == 1, let fileName = files.first, fileName.hasPrefix(prefix), fileName.hasSuffix(".deb")
            else {
                throw DebianPackageError("apt-get download \(name)=\(version) left \(files), not one \(prefix)*.deb")
            }
            let bytes = contents(downloads + "/" + fileName) ?? []
            let digest = Fixtures.sha256(bytes)
            guard bytes.count == size, digest == sha256.lowercased() else {
                throw DebianPackageError(
                    "\(fileName): \(bytes.count) bytes, sha256 \(digest); apt-cache says \(size) bytes, \(sha256)"
                )
            }
            return DebianPackage(
                name: name,
                version: version,
                fileName: fileName,
                sha256: digest,
                bytes: bytes
            )
        }
    }

    /// The `Field: value` lines of the first stanza of `apt-cache show` (continuation lines skipped).
    private static func fields(ofFirstStanza text: String) -> [String: String] {
        var fields: [String: String] = [:]
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.isEmpty { break }
            guard !line.hasPrefix(" "), let colon = line.firstIndex(of: ":") else { continue }
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            fields[String(line[..<colon])] = value
        }
        return fields
    }
}

/// The Debian package could not be had or did not match apt's index.
struct DebianPackageError: Error, CustomStringConvertible {
    var description: String

    init(_ description: String) { self.description = description }
}
