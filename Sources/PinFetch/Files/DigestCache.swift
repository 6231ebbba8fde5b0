import Foundation
@preconcurrency import Glibc

/// A content-addressed store of verified files: `<directory>/<algorithm>/<lower-case hex>`
/// (DESIGN.md, "The cache is <cache-dir>/sha256/<lower-case hex>").
///
/// Entries are written by hard link where the cache and the file share a file system, else by
/// copy, always to a temporary name first and then `rename`d, so a concurrent reader sees a
/// whole entry or none, and two writers of one digest simply write the same bytes. An entry is
/// never trusted: it is hashed again before use, and a corrupt one is removed.
struct DigestCache: Sendable {
    /// The cache's root directory.
    let directory: String

    /// The entry's path for `digest` of `algorithm`.
    func path(for algorithm: HashAlgorithm, digest: [UInt8]) -> String {
        "\(self.directory)/\(algorithm.rawValue)/\(Pin.hex(digest))"
    }

    /// Stores the verified file at `source` under its digest; failures are ignored (a cache
    /// is an optimisation, never a reason to fail a download).
    func store(_ source: String, algorithm: HashAlgorithm, digest: [UInt8]) {
        let target = self.path(for: algorithm, digest: digest)
        guard !FileSystem.exists(target) else { return }
        let folder = FileSystem.directory(of: target)
        guard (try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)) != nil
        else { return }
        let temporary = "\(folder)/.tmp-\(UUID().uuidString)"
        guard Self.linkOrCopy(source, to: temporary) else { return }
        if rename(temporary, target) != 0 { unlink(temporary) }
    }

    /// Places a copy of `entry` at `target` (hard link, else a copy), replacing nothing: `target`
    /// must not exist. Returns `false` when neither works.
    static func linkOrCopy(_ entry: String, to target: String) -> Bool {
        if link(entry, target) == 0 { return true }
        guard let input = FileHandle(forReadingAtPath: entry) else { return false }
        defer { try? input.close() }
        guard FileManager.default.createFile(atPath: target, contents: nil),
            let output = FileHandle(forWritingAtPath: target)
        else { return false }
        defer { try? output.close() }
        do {
            while let chunk = try input.read(upToCount: 1 << 20), !chunk.isEmpty { try output.write(contentsOf: chunk) }
            try output.synchronize()
            return true
        } catch {
            unlink(target)
            return false
        }
    }
}
