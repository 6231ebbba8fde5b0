import Foundation
@preconcurrency import Glibc
import Testing

@testable import PinFetch

/// The cache holds independent copies, is opt-in, and trusts only what its user wrote. The
/// multi-user cases need root to act as a second user (`nobody`, via `setpriv`).
struct CacheTests {
    static let quiet = ["-q", "--json", "--retry-delay", "0", "--retries", "0"]
    static var resourceA: TestResource { TestResource(body: Fixtures.a, etag: Fixtures.etagA) }

    /// One attempt with the cache `cache`, its warnings going to `warnings`, as `--cache-dir` is.
    static func cached(_ cache: String, warnings: EventNotes = EventNotes()) -> Fetcher {
        Fetcher.immediate(retries: 0) {
            $0.cacheDirectory = cache
            $0.events = warnings.record
        }
    }

    /// `stat` of `path` (not following a symbolic link).
    static func status(_ path: String) -> stat? {
        var info = stat()
        return lstat(path, &info) == 0 ? info : nil
    }

    @Test func `a placed file is a copy: a chmod or an edit of one download changes no other, nor the entry`()
        async throws
    {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let cache = "\(directory)/cache"
                let pin = try Pin(sha256Hex: Fixtures.sha256A)
                let first = await Self.cached(cache).run(server.url(), to: "\(directory)/one", verifying: pin)
                #expect(first.error == nil, "\(failure(first))")
                let second = await Self.cached(cache).run(server.url(), to: "\(directory)/two", verifying: pin)
                #expect(second.error == nil, "\(failure(second))")
                #expect(second.fromCache == true)
                #expect(second.cache == .local)
                #expect(server.getRequests.count == 1)

                let entry = "\(cache)/sha256/\(Fixtures.sha256A)"
                let paths = [entry, "\(directory)/one", "\(directory)/two"]
                let inodes = Set(paths.compactMap { Self.status($0)?.st_ino })
                #expect(inodes.count == 3, "three files, not links to one")
                #expect(paths.allSatisfy { Self.status($0)?.st_nlink == 1 })
                #expect(Self.status(entry).map { $0.st_mode & 0o7777 } == 0o444)
                #expect(Self.status("\(directory)/two").map { $0.st_mode & 0o7777 } == FileSystem.creationMode)

                chmod("\(directory)/two", 0o755)
                let handle = try FileHandle(forWritingTo: URL(filePath: "\(directory)/one"))
                try handle.write(contentsOf: Data("edited".utf8))
                try handle.close()
                #expect(Self.status(entry).map { $0.st_mode & 0o7777 } == 0o444)
                let intact = contents(entry) == Fixtures.a && contents("\(directory)/two") == Fixtures.a
                #expect(intact, "an edit of one download showed in the entry or another download")
            }
        }
    }

    @Test func `a cache entry that is a symbolic link is never placed, and a copy replaces it`() async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let cache = "\(directory)/cache"
                try FileManager.default.createDirectory(atPath: "\(cache)/sha256", withIntermediateDirectories: true)
                let target = "\(directory)/elsewhere"
                try Data(Fixtures.a).write(to: URL(filePath: target))  // even the right bytes
                let entry = "\(cache)/sha256/\(Fixtures.sha256A)"
                try FileManager.default.createSymbolicLink(atPath: entry, withDestinationPath: target)

                let warnings = EventNotes()
                let result = await Self.cached(cache, warnings: warnings).run(
                    server.url(),
                    to: "\(directory)/out",
                    verifying: try Pin(sha256Hex: Fixtures.sha256A)
                )
                #expect(result.error == nil, "\(failure(result))")
                #expect(result.fromCache == false)
                #expect(warnings.warned("cache entry \(entry) is a symbolic link: ignored"), "\(warnings.warnings)")
                #expect(server.getRequests.count == 1)
                #expect(Self.status("\(directory)/out").map { $0.st_mode & S_IFMT } == S_IFREG)
                #expect(Self.status(entry).map { $0.st_mode & S_IFMT } == S_IFREG)  // replaced, not written through
                #expect(Self.status(target).map { $0.st_mode & 0o7777 } == 0o644)
            }
        }
    }

    @Test func `a corrupt entry is removed with a warning and replaced by the download`() async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let cache = "\(directory)/cache"
                try FileManager.default.createDirectory(atPath: "\(cache)/sha256", withIntermediateDirectories: true)
                let entry = "\(cache)/sha256/\(Fixtures.sha256A)"
                try Data(Fixtures.b).write(to: URL(filePath: entry))
                let warnings = EventNotes()
                let result = await Self.cached(cache, warnings: warnings).run(
                    server.url(),
                    to: "\(directory)/out",
                    verifying: try Pin(sha256Hex: Fixtures.sha256A)
                )
                #expect(result.error == nil, "\(failure(result))")
                #expect(warnings.warned("did not hold the pinned bytes: removed"), "\(warnings.warnings)")
                #expect(contents(entry) == Fixtures.a)
                #expect(listing(directory) == ["cache", "out"])  // no placement left over
            }
        }
    }

    @Test func `unpinned downloads never enter the cache`() async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let cache = "\(directory)/cache"
                let unpinned = await Self.cached(cache).run(server.url(), to: "\(directory)/free")
                #expect(unpinned.error == nil, "\(failure(unpinned))")
                #expect(listing("\(cache)/sha256") == [])
            }
        }
    }

    /// The command line fetches a checksum file outside the cache (it is not pinned): only the
    /// file it pins goes there.
    @Test func `checksum files fetched from a URL never enter the cache`() async throws {
        let sums = Array("\(Fixtures.sha256A)  out\n".utf8)
        try await withTestHTTPServer(serving: TestResource(body: sums)) { sumsServer in
            try await withTestHTTPServer(serving: Self.resourceA) { server in
                try await withTemporaryDirectory { directory in
                    let cache = "\(directory)/cache"
                    let run = await runCLI(
                        Self.quiet + [
                            "--cache-dir", cache, "--checksum-file", sumsServer.url("/SHA256SUMS"), "-o",
                            "\(directory)/out",
                            server.url(),
                        ]
                    )
                    #expect(run.status == 0)
                    #expect(listing("\(cache)/sha256") == [Fixtures.sha256A])  // the pinned file, not SHA256SUMS
                }
            }
        }
    }

    @Test func `a checksum file over its limit leaves nothing in the cache`() async throws {
        let huge = [UInt8](repeating: UInt8(ascii: "#"), count: (16 << 20) + 4096)
        try await withTestHTTPServer(serving: TestResource(body: huge)) { sumsServer in
            try await withTemporaryDirectory { directory in
                let cache = "\(directory)/cache"
                let run = await runCLI(
                    Self.quiet + [
                        "--cache-dir", cache, "--checksum-file", sumsServer.url("/SHA256SUMS"), "-o",
                        "\(directory)/out",
                        sumsServer.url(),
                    ]
                )
                #expect(run.status == 2)
                #expect(!FileSystem.exists(cache) || listing("\(cache)/sha256") == [])
                #expect(listing(directory).allSatisfy { $0 == "cache" })
            }
        }
    }

    // MARK: - Opt-in

    @Test func `without --cache-dir or PINFETCH_CACHE_DIR nothing is cached, and --no-cache overrides the variable`()
        async throws
    {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let pinfetch = try EndToEndTests.pinfetchExecutable()
                let home = "\(directory)/home"
                try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
                func run(_ name: String, _ extra: [String], cache: String) async throws -> ChildProcess {
                    let child = try ChildProcess(
                        pinfetch,
                        Self.quiet + extra + [
                            "--sha256", Fixtures.sha256A, "-o", "\(directory)/\(name)", server.url(),
                        ],
                        logs: "\(directory)/\(name)",
                        environment: ["HOME": home, "XDG_CACHE_HOME": "\(home)/.cache", "PINFETCH_CACHE_DIR": cache]
                    )
                    try await child.wait(timeout: .seconds(60))
                    return child
                }
                let plain = try await run("plain", [], cache: "")
                #expect(plain.termination == .exited(0), "\(plain.transcript)")
                #expect(listing(home) == [], "nothing in ~/.cache without asking")

                let chosen = "\(directory)/chosen-cache"
                let disabled = try await run("disabled", ["--no-cache"], cache: chosen)
                #expect(disabled.termination == .exited(0), "\(disabled.transcript)")
                #expect(!FileSystem.exists(chosen))

                let cached = try await run("cached", [], cache: chosen)
                #expect(cached.termination == .exited(0), "\(cached.transcript)")
                #expect(listing("\(chosen)/sha256") == [Fixtures.sha256A])
            }
        }
    }
}
