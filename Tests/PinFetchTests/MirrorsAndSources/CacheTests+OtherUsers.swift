import Foundation
@preconcurrency import Glibc
import Testing

@testable import PinFetch

/// A cache another user can write must not decide what root's destination holds: the
/// second user (`nobody`) plants entries with the right bytes through `setpriv`; root's run
/// warns, ignores them, downloads, and its destination is root's own file.
@Suite(
    .enabled(
        if: geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"),
        "needs root and setpriv to act as the user nobody"
    )
)
struct CacheOtherUserTests {
    static let nobody: uid_t = 65_534

    /// Runs `script` with `/bin/sh` as `nobody`; throws unless it exits 0.
    static func asNobody(_ script: String, logs: String) async throws {
        let child = try await ChildProcess.run(
            "/usr/bin/setpriv",
            ["--reuid=\(Self.nobody)", "--regid=\(Self.nobody)", "--clear-groups", "/bin/sh", "-c", script],
            logs: logs,
            timeout: .seconds(30)
        )
        guard child.termination == .exited(0) else { throw ChildProcessError("as nobody:\n\(child.transcript)") }
    }

    /// Serves file A, runs `prepare(cache)` and then pinfetch with that cache, and checks that the
    /// run downloaded (one GET), warned with `warning`, and left a regular file of root's at the
    /// destination with A's bytes; then `afterwards(cache)`.
    func expectIgnored(
        warning: String,
        prepare: (_ directory: String, _ cache: String) async throws -> Void,
        afterwards: (_ cache: String) -> Void = { _ in }
    ) async throws {
        try await withTestHTTPServer(serving: CacheTests.resourceA) { server in
            try await withTemporaryDirectory { directory in
                chmod(directory, 0o755)  // nobody walks into it
                let source = "\(directory)/a.bin"
                try Data(Fixtures.a).write(to: URL(filePath: source))
                chmod(source, 0o644)
                let cache = "\(directory)/cache"
                try await prepare(directory, cache)
                let warnings = EventNotes()
                let result = await CacheTests.cached(cache, warnings: warnings).run(
                    server.url(),
                    to: "\(directory)/out",
                    verifying: try Pin(sha256Hex: Fixtures.sha256A)
                )
                #expect(result.error == nil, "\(failure(result))")
                #expect(result.fromCache == false)
                #expect(warnings.warned(warning), "\(warnings.warnings)")
                #expect(server.getRequests.count == 1)
                let placed = CacheTests.status("\(directory)/out")
                #expect(placed.map { $0.st_mode & S_IFMT } == S_IFREG)
                #expect(placed?.st_uid == 0)
                #expect(placed?.st_nlink == 1)
                #expect(contents("\(directory)/out") == Fixtures.a)
                afterwards(cache)
            }
        }
    }

    @Test func `a cache directory writable by others is not used`() async throws {
        try await self.expectIgnored(warning: "is writable by other users: not used") { directory, cache in
            mkdir(cache, 0o755)
            chmod(cache, 0o1777)
            try await Self.asNobody(
                "mkdir -m 755 \(cache)/sha256 && cp \(directory)/a.bin \(cache)/sha256/\(Fixtures.sha256A)",
                logs: "\(directory)/nobody"
            )
        }
    }

    @Test func `a cache directory another user owns is not used, nor written`() async throws {
        try await self.expectIgnored(warning: "is owned by another user (uid 65534): not used") { directory, cache in
            mkdir(cache, 0o755)
            chown(cache, Self.nobody, Self.nobody)
            try await Self.asNobody(
                "mkdir -m 755 \(cache)/sha256 && cp \(directory)/a.bin \(cache)/sha256/\(Fixtures.sha256A)",
                logs: "\(directory)/nobody"
            )
        } afterwards: { cache in
            #expect(CacheTests.status("\(cache)/sha256/\(Fixtures.sha256A)")?.st_uid == Self.nobody, "written")
        }
    }

    @Test func `an entry another user owns is ignored and replaced by root's own copy`() async throws {
        let entry = "sha256/\(Fixtures.sha256A)"
        try await self.expectIgnored(warning: "is owned by another user (uid 65534): ignored") { directory, cache in
            try FileManager.default.createDirectory(atPath: "\(cache)/sha256", withIntermediateDirectories: true)
            mkdir("\(directory)/drop", 0o755)
            chown("\(directory)/drop", Self.nobody, Self.nobody)
            try await Self.asNobody("cp \(directory)/a.bin \(directory)/drop/a", logs: "\(directory)/nobody")
            rename("\(directory)/drop/a", "\(cache)/\(entry)")  // as if nobody could write there
            #expect(CacheTests.status("\(cache)/\(entry)")?.st_uid == Self.nobody)
        } afterwards: { cache in
            let replaced = CacheTests.status("\(cache)/\(entry)")
            #expect(replaced?.st_uid == 0)
            #expect(replaced.map { $0.st_mode & 0o7777 } == 0o444)
            #expect(contents("\(cache)/\(entry)") == Fixtures.a)
        }
    }
}
