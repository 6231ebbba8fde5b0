import Foundation
import Testing

@testable import PinFetch

/// A server that sends no validator at all (no `ETag`, no `Last-Modified`).
/// With a pin its partial is kept and resumed with a plain `Range` (the pin decides); without a
/// pin there is no resume. Fixture A (or B) is served without validators.
struct UnvalidatedResumeTests {
    static let quiet = ["-q", "--json", "--retry-delay", "0"]
    static let split = 400_000

    /// `true` when the file at `path` holds exactly `bytes`.
    static func holds(_ path: String, _ bytes: [UInt8]) -> Bool { fileHolds(path, bytes) }

    /// Runs pinfetch for `server`'s file into `directory/out.bin`, cut after 400,000 body bytes.
    static func interrupted(_ server: TestHTTPServer, _ directory: String, _ extra: [String]) async -> CLIRun {
        server.enqueueFaults(TestFaults(closeAfterBodyBytes: Self.split))
        return await runCLI(Self.quiet + extra + ["--retries", "0", "-o", "\(directory)/out.bin", server.url()])
    }

    @Test func `a pinned partial without a validator resumes with a plain Range`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: Fixtures.a)) { server in
            try await withTemporaryDirectory { directory in
                let pin = ["--sha256", Fixtures.sha256A]
                let first = await Self.interrupted(server, directory, pin)
                #expect(first.status == 4)
                #expect(FileManager.default.fileExists(atPath: "\(directory)/out.bin.part.state"))

                let run = await runCLI(Self.quiet + pin + ["-o", "\(directory)/out.bin", server.url()])
                #expect(run.status == 0)
                #expect(run.string("status") == "resumed")
                #expect(run.int("resumed_from") == Self.split)
                #expect(Self.holds("\(directory)/out.bin", Fixtures.a))
                let resumed = try #require(server.getRequests.last)
                #expect(resumed.header("Range") == "bytes=\(Self.split)-")
                #expect(resumed.header("If-Range") == nil)
            }
        }
    }

    @Test func `a file that changed between runs costs one restart, and the pin gets its bytes`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: Fixtures.a)) { server in
            try await withTemporaryDirectory { directory in
                // The partial holds A's first bytes; the pin is B's (the file the user wants now).
                let pin = ["--sha256", Fixtures.sha256B]
                let first = await Self.interrupted(server, directory, pin)
                #expect(first.status == 4)
                server.resource = TestResource(body: Fixtures.b)
                let run = await runCLI(Self.quiet + pin + ["-o", "\(directory)/out.bin", server.url()])
                #expect(run.status == 0)
                #expect(run.int("restarts") == 1)
                #expect(Self.holds("\(directory)/out.bin", Fixtures.b))
            }
        }
    }

    @Test func `a partial saved without a validator is not resumed once the server sends one`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: Fixtures.a)) { server in
            try await withTemporaryDirectory { directory in
                let pin = ["--sha256", Fixtures.sha256A]
                _ = await Self.interrupted(server, directory, pin)
                server.resource = TestResource(body: Fixtures.a, etag: Fixtures.etagA)
                let run = await runCLI(Self.quiet + pin + ["-o", "\(directory)/out.bin", server.url()])
                #expect(run.status == 0)
                #expect(run.int("resumed_from") == 0)
                #expect(server.getRequests.last?.header("Range") == nil)
                #expect(Self.holds("\(directory)/out.bin", Fixtures.a))
            }
        }
    }

    @Test func `without a pin a partial without a validator is not kept`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: Fixtures.a)) { server in
            try await withTemporaryDirectory { directory in
                let first = await Self.interrupted(server, directory, [])
                #expect(first.status == 4)
                #expect(listing(directory).isEmpty)
            }
        }
    }
}
