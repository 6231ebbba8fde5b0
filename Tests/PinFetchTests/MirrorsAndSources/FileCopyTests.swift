import Foundation
@preconcurrency import Glibc
import Synchronization
import Testing

@testable import PinFetch

/// The cache's copies: a reflink where the file system can, else a copy. This file
/// system has no reflinks, so the reflink path is driven through the ``FileCopy/Clone`` seam.
struct FileCopyTests {
    static let content = (0..<(3 << 20) + 12_345).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) }

    /// Copies a file holding ``content`` with `clone`; returns the method and the copy's bytes.
    static func copy(clone: FileCopy.Clone? = nil) throws -> (FileCopy.Method, [UInt8]?) {
        let directory = FileManager.default.temporaryDirectory.appending(path: "pinfetch-test-\(UUID().uuidString)")
            .path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Data(Self.content).write(to: URL(filePath: "\(directory)/source"))
        let source = try PartialFile(path: "\(directory)/source", readOnly: true)
        let target = try PartialFile(path: "\(directory)/target", fresh: true)
        let method =
            try clone.map { try FileCopy.copy(from: source, to: target, clone: $0) }
            ?? FileCopy.copy(from: source, to: target)
        return (method, contents("\(directory)/target"))
    }

    @Test func `a reflink that the file system refuses falls back to a copy`() throws {
        let (method, bytes) = try Self.copy(clone: { _, _ in EOPNOTSUPP })
        #expect(method == .copy)
        #expect(bytes == Self.content)
    }

    @Test func `a reflink that works is the copy, and nothing else writes`() throws {
        let cloned = Mutex(false)
        let (method, bytes) = try Self.copy(clone: { source, destination in
            // What FICLONE does, by hand: the destination gets the source's bytes.
            var offset: off_t = 0
            while sendfile(destination, source, &offset, 1 << 20) > 0 {}
            cloned.withLock { $0 = true }
            return 0
        })
        #expect(method == .reflink)
        #expect(cloned.withLock { $0 })
        #expect(bytes == Self.content)
    }

    @Test func `on this machine FICLONE is tried for real and the copy is whole`() throws {
        let (method, bytes) = try Self.copy()
        #expect(bytes == Self.content)
        _ = method  // .reflink on Btrfs or XFS, .copy on ext4 and tmpfs
    }

    @Test func `the cache stores a read-only copy when reflinks fail`() async throws {
        try await withTemporaryDirectory { directory in
            try Data(Self.content).write(to: URL(filePath: "\(directory)/verified"))
            let file = try PartialFile(path: "\(directory)/verified", readOnly: true)
            var cache = DigestCache(directory: "\(directory)/cache")
            cache.clone = { _, _ in EOPNOTSUPP }
            let digest = Array(repeating: UInt8(0xAB), count: 32)
            #expect(cache.store(from: file, algorithm: .sha256, digest: digest) == nil)
            let entry = cache.path(for: .sha256, digest: digest)
            #expect(contents(entry) == Self.content)
            var info = stat()
            #expect(lstat(entry, &info) == 0 && info.st_mode & 0o7777 == 0o444 && info.st_nlink == 1)
            #expect(listing("\(directory)/cache/sha256") == [Pin.hex(digest)])  // no temporary left
        }
    }
}
