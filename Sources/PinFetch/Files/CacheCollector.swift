import FoundationEssentials
@preconcurrency import Glibc

/// What ``CacheCollector`` did to a cache: the entries it evicted and what is left.
package struct CacheCollection: Sendable, Hashable {
    /// One removed file: an entry, or a temporary left by a run that was killed while storing.
    package struct Evicted: Sendable, Hashable {
        /// The removed file's path.
        package var path: String
        /// Its size in bytes.
        package var bytes: Int64
    }

    /// The removed files, least recently used first.
    package var evicted: [Evicted] = []
    /// Entries left in the cache.
    package var remainingEntries = 0
    /// Bytes of the entries left in the cache.
    package var remainingBytes: Int64 = 0
}

/// `pinfetch gc --cache-dir DIR --max-size SIZE`: bounds a ``DigestCache`` by evicting the least
/// recently used entries (modification time: storing an entry and placing it both set it).
///
/// Only files named as a digest (lower-case hex of the algorithm's length) in `DIR/sha256` and
/// `DIR/sha512`, and temporaries (`.tmp-*`) untouched for an hour, are ever removed; symbolic
/// links are not followed. A download placing an entry that is evicted meanwhile still has it
/// open and copies it whole.
package enum CacheCollector {
    /// A temporary this old belongs to no running store (a copy takes seconds, not an hour).
    static let abandonedTemporaryAge: Double = 3_600

    /// Evicts entries of the cache at `directory`: every entry not used for `age` seconds (if
    /// given), then the least recently used until the entries take at most `maximumBytes` (if
    /// given).
    /// - Returns: What was removed and what is left.
    /// - Throws: ``PinFetchError/Code/usage`` when `directory` is not a directory, or is one the
    ///   cache would not trust (another user's, or writable by others);
    ///   ``PinFetchError/Code/fileIO`` when an entry cannot be removed.
    package static func collect(
        cache directory: String,
        maximumBytes: Int64?,
        olderThan age: Double?
    ) throws(PinFetchError) -> CacheCollection {
        try Self.collect(cache: directory, maximumBytes: maximumBytes, olderThan: age, now: Date())
    }

    /// ``collect(cache:maximumBytes:olderThan:)`` as of `now`.
    static func collect(
        cache directory: String,
        maximumBytes: Int64?,
        olderThan age: Double?,
        now: Date
    ) throws(PinFetchError) -> CacheCollection {
        var info = stat()
        guard stat(directory, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
            throw PinFetchError(.usage, "\(directory) is not a directory")
        }
        let cache = DigestCache(directory: directory)
        for algorithm in HashAlgorithm.allCases {
            if let reason = cache.distrust(algorithm) { throw PinFetchError(.usage, reason) }
        }
        var entries: [(path: String, bytes: Int64, used: Double)] = []
        var collection = CacheCollection()
        let seconds = now.timeIntervalSince1970
        for algorithm in HashAlgorithm.allCases {
            let folder = cache.folder(for: algorithm)
            for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] {
                let path = "\(folder)/\(name)"
                guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { continue }
                let used = Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9
                if Self.isTemporaryName(name) {
                    if seconds - used >= Self.abandonedTemporaryAge, info.st_uid == geteuid() {
                        try FileSystem.remove(path)
                        collection.evicted.append(.init(path: path, bytes: Int64(info.st_size)))
                    }
                } else if Self.isDigestName(name, of: algorithm) {
                    entries.append((path, Int64(info.st_size), used))
                }
            }
        }
        entries.sort { ($0.used, $0.path) < ($1.used, $1.path) }
        var total = entries.reduce(Int64(0)) { $0 + $1.bytes }
        var kept = entries.count
        for entry in entries {
            let stale = age.map { seconds - entry.used >= $0 } ?? false
            let over = maximumBytes.map { total > $0 } ?? false
            guard stale || over else { continue }
            try FileSystem.remove(entry.path)
            collection.evicted.append(.init(path: entry.path, bytes: entry.bytes))
            total -= entry.bytes
            kept -= 1
        }
        collection.remainingEntries = kept
        collection.remainingBytes = total
        return collection
    }

    /// Whether `name` is what ``DigestCache`` names a temporary: `.tmp-` and a UUID.
    static func isTemporaryName(_ name: String) -> Bool {
        name.hasPrefix(".tmp-") && UUID(uuidString: String(name.dropFirst(5))) != nil
    }

    /// Whether `name` is a digest of `algorithm` in lower-case hex, as entries are named.
    static func isDigestName(_ name: String, of algorithm: HashAlgorithm) -> Bool {
        name.utf8.count == algorithm.digestLength * 2
            && name.utf8.allSatisfy {
                (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
                    || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0)
            }
    }
}
