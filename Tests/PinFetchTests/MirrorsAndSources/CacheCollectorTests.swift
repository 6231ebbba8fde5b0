import Foundation
@preconcurrency import Glibc
import Testing

@testable import PinFetch

/// `pinfetch gc --cache-dir DIR --max-size SIZE`: the least recently used
/// entries go first, and nothing but entries and abandoned temporaries is ever removed.
struct CacheCollectorTests {
    static let hour: TimeInterval = 3_600

    /// A cache under `directory` with entries of 1000, 2000 and 3000 bytes named after digests
    /// `0…`, `1…`, `2…`, last used 3, 2 and 1 hours ago; returns the cache and the entries.
    static func makeCache(in directory: String) throws -> (cache: String, entries: [String]) {
        let cache = "\(directory)/cache"
        try FileManager.default.createDirectory(atPath: "\(cache)/sha256", withIntermediateDirectories: true)
        var entries: [String] = []
        for index in 0..<3 {
            let path = "\(cache)/sha256/\(String(repeating: "\(index)", count: 64))"
            try GarbageCommandTests.write(
                [UInt8](repeating: 7, count: 1000 * (index + 1)),
                to: path,
                age: Double(3 - index) * Self.hour
            )
            chmod(path, 0o444)
            entries.append(path)
        }
        return (cache, entries)
    }

    @Test func `--max-size evicts the least recently used entries until the rest fit`() async throws {
        try await withTemporaryDirectory { directory in
            let (cache, entries) = try Self.makeCache(in: directory)
            let run = await runCLI(["gc", "--cache-dir", cache, "--max-size", "4000"])
            #expect(run.status == 0, "\(run.standardError)")
            #expect(run.standardOutput == "evicted \(entries[0]) (1000 B)\nevicted \(entries[1]) (2.0 KiB)\n")
            #expect(run.standardError.contains("evicted 2 cache entries"))
            #expect(entries.map(FileSystem.exists) == [false, false, true])
        }
    }

    @Test func `placing an entry marks it used, so it outlives entries stored later`() async throws {
        try await withTestHTTPServer(serving: CacheTests.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let (cache, entries) = try Self.makeCache(in: directory)
                let pin = try Pin(sha256Hex: Fixtures.sha256A)
                let stored = await CacheTests.cached(cache).run(server.url(), to: "\(directory)/a1", verifying: pin)
                #expect(stored.error == nil, "\(failure(stored))")
                let entry = "\(cache)/sha256/\(Fixtures.sha256A)"
                try FileManager.default.setAttributes(
                    [.modificationDate: Date() - 5 * Self.hour],
                    ofItemAtPath: entry
                )
                let placed = await CacheTests.cached(cache).run(server.url(), to: "\(directory)/a2", verifying: pin)
                #expect(placed.fromCache == true, "\(failure(placed))")

                let run = await runCLI(["gc", "--cache-dir", cache, "--max-size", "1M"])
                #expect(run.status == 0)
                #expect(FileSystem.exists(entry), "the entry just used was evicted")
                #expect(entries.map(FileSystem.exists) == [false, false, false])
            }
        }
    }

    @Test func `only entries and abandoned temporaries are removed, never followed links`() async throws {
        try await withTemporaryDirectory { directory in
            let (cache, entries) = try Self.makeCache(in: directory)
            let outside = "\(directory)/precious"
            try GarbageCommandTests.write([1, 2, 3], to: outside, age: 100 * Self.hour)
            let link = "\(cache)/sha256/\(String(repeating: "f", count: 64))"
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: outside)
            let notes = "\(cache)/sha256/NOTES"
            try GarbageCommandTests.write([1], to: notes, age: 100 * Self.hour)
            let upper = "\(cache)/sha256/\(String(repeating: "A", count: 64))"
            try GarbageCommandTests.write([1], to: upper, age: 100 * Self.hour)
            let abandoned = "\(cache)/sha256/.tmp-\(UUID().uuidString)"
            try GarbageCommandTests.write([1], to: abandoned, age: 2 * Self.hour)
            let someoneElses = "\(cache)/sha256/.tmp-notes"  // not a name pinfetch gives its temporaries
            try GarbageCommandTests.write([1], to: someoneElses, age: 2 * Self.hour)
            let storing = "\(cache)/sha256/.tmp-\(UUID().uuidString)"
            try GarbageCommandTests.write([1], to: storing)

            let run = await runCLI(["gc", "--cache-dir", cache, "--max-size", "0"])
            #expect(run.status == 0, "\(run.standardError)")
            #expect(entries.map(FileSystem.exists) == [false, false, false])
            #expect(!FileSystem.exists(abandoned))
            #expect([link, notes, upper, storing, outside, someoneElses].allSatisfy(FileSystem.exists))
            #expect(contents(outside) == [1, 2, 3])
        }
    }

    @Test func `--older-than evicts entries not used for that long`() async throws {
        try await withTemporaryDirectory { directory in
            let (cache, entries) = try Self.makeCache(in: directory)
            let run = await runCLI(["gc", "--cache-dir", cache, "--older-than", "90m"])
            #expect(run.status == 0)
            #expect(entries.map(FileSystem.exists) == [false, false, true])
        }
    }

    @Test(arguments: [
        (["--cache-dir", "CACHE"], "needs --max-size SIZE or --older-than DURATION"),
        (["--max-size", "1G"], "--max-size bounds a cache: name it with --cache-dir DIR"),
        (["--cache-dir", "CACHE", "--max-size", "-1"], "--max-size takes a number of bytes"),
        (["--cache-dir", "CACHE/missing", "--max-size", "1G"], "is not a directory"),
        (["--cache-dir", "OPEN", "--max-size", "1G"], "is writable by other users: not used"),
    ])
    func `gc of a cache it cannot trust or was not told how to bound is exit 2`(
        arguments: [String],
        message: String
    ) async throws {
        try await withTemporaryDirectory { directory in
            let (cache, entries) = try Self.makeCache(in: directory)
            let open = "\(directory)/open"
            mkdir(open, 0o777)
            chmod(open, 0o777)
            let run = await runCLI(
                ["gc"]
                    + arguments.map {
                        $0.replacingOccurrences(of: "CACHE", with: cache).replacingOccurrences(of: "OPEN", with: open)
                    }
            )
            #expect(run.status == 2)
            #expect(run.standardError.contains(message), "\(run.standardError)")
            #expect(entries.allSatisfy(FileSystem.exists))
        }
    }
}
