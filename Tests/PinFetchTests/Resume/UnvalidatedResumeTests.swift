import Foundation
import PinFetch
import Testing

/// A server that sends no validator at all (no `ETag`, no `Last-Modified`).
/// With a pin its partial is kept and resumed with a plain `Range` (the pin decides); without a
/// pin there is no resume. Fixture A (or B) is served without validators.
struct UnvalidatedResumeTests {
    static let split = 400_000

    /// `true` when the file at `path` holds exactly `bytes`.
    static func holds(_ path: String, _ bytes: [UInt8]) -> Bool { fileHolds(path, bytes) }

    /// Fetches `server`'s file into `directory/out.bin` once, cut after 400,000 body bytes.
    static func interrupted(_ server: TestHTTPServer, _ directory: String, _ pin: Pin?) async -> FetchResult {
        server.enqueueFaults(TestFaults(closeAfterBodyBytes: Self.split))
        return await Fetcher.immediate(retries: 0).run(server.url(), to: "\(directory)/out.bin", verifying: pin)
    }

    @Test func `a pinned partial without a validator resumes with a plain Range`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: Fixtures.a)) { server in
            try await withTemporaryDirectory { directory in
                let pin = try Pin(sha256Hex: Fixtures.sha256A)
                let first = await Self.interrupted(server, directory, pin)
                #expect(first.error?.code == .network, "\(failure(first))")
                #expect(FileManager.default.fileExists(atPath: "\(directory)/out.bin.part.state"))

                let result = await Fetcher.immediate().run(server.url(), to: "\(directory)/out.bin", verifying: pin)
                #expect(result.error == nil, "\(failure(result))")
                #expect(result.status == .resumed)
                #expect(result.resumedFrom == Int64(Self.split))
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
                let pin = try Pin(sha256Hex: Fixtures.sha256B)
                let first = await Self.interrupted(server, directory, pin)
                #expect(first.error?.code == .network, "\(failure(first))")
                server.resource = TestResource(body: Fixtures.b)
                let result = await Fetcher.immediate().run(server.url(), to: "\(directory)/out.bin", verifying: pin)
                #expect(result.error == nil, "\(failure(result))")
                #expect(result.restarts == 1)
                #expect(Self.holds("\(directory)/out.bin", Fixtures.b))
            }
        }
    }

    @Test func `a partial saved without a validator is not resumed once the server sends one`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: Fixtures.a)) { server in
            try await withTemporaryDirectory { directory in
                let pin = try Pin(sha256Hex: Fixtures.sha256A)
                _ = await Self.interrupted(server, directory, pin)
                server.resource = TestResource(body: Fixtures.a, etag: Fixtures.etagA)
                let result = await Fetcher.immediate().run(server.url(), to: "\(directory)/out.bin", verifying: pin)
                #expect(result.error == nil, "\(failure(result))")
                #expect(result.resumedFrom == 0)
                #expect(server.getRequests.last?.header("Range") == nil)
                #expect(Self.holds("\(directory)/out.bin", Fixtures.a))
            }
        }
    }

    @Test func `without a pin a partial without a validator is not kept`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: Fixtures.a)) { server in
            try await withTemporaryDirectory { directory in
                let first = await Self.interrupted(server, directory, nil)
                #expect(first.error?.code == .network, "\(failure(first))")
                #expect(first.partial == nil)
                #expect(listing(directory).isEmpty)
            }
        }
    }
}
