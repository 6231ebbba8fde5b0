import Foundation
import Synchronization
import Testing

@testable import PinFetch

/// A validator is the resource's it came from: one learned behind a redirect is not sent to the
/// URL that redirected (an outsider's cases: `/latest` moved from `/x1` to `/x2`, two files of
/// one size and time, so one nginx ETag).
struct RedirectedValidatorTests {
    /// `server` redirects `/latest` to `/x` + `target` while `target` is not 0, and serves its
    /// resource itself at `/latest` when it is.
    static func redirecting(_ server: TestHTTPServer, to target: @escaping @Sendable () -> Int) {
        server.handler = { request, _ in
            let number = target()
            guard request.target == "/latest", number != 0 else { return nil }
            return TestResponse(status: 302, headers: [("Location", "/x\(number)")])
        }
    }

    @Test func `a file that came through a redirect is not refreshed with its target's validator`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: Fixtures.a, etag: Fixtures.etagA)) { server in
            let target = Atomic<Int>(1)
            Self.redirecting(server) { target.load(ordering: .relaxed) }
            try await withTemporaryDirectory { directory in
                let output = "\(directory)/out.bin"
                let first = await Fetcher.immediate().run(server.url("/latest"), to: output)
                #expect(first.error == nil, "\(failure(first))")
                #expect(VerifiedRecordTests.record(output)?.validator == nil, "the record keeps no validator")
                // Now served at /latest itself, other bytes under the same ETag.
                target.store(0, ordering: .relaxed)
                server.resource = TestResource(body: Fixtures.b, etag: Fixtures.etagA)
                let seen = server.requests.count
                let second = await Fetcher.immediate().run(server.url("/latest"), to: output)
                #expect(second.error == nil, "\(failure(second))")
                #expect(second.status == .downloaded)
                let replaced = contents(output) == Fixtures.b
                #expect(replaced, "the bytes /latest serves now")
                #expect(server.requests.dropFirst(seen).allSatisfy { !TestHTTPServer.isConditional($0) })
            }
        }
    }

    @Test func `a partial is not continued where a redirect now leads elsewhere`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: Fixtures.a, etag: Fixtures.etagA)) { server in
            let target = Atomic<Int>(1)
            Self.redirecting(server) { target.load(ordering: .relaxed) }
            try await withTemporaryDirectory { directory in
                let output = "\(directory)/out.bin"
                server.enqueueFaults(TestFaults(closeAfterBodyBytes: 400_000))
                let first = await Fetcher.immediate(retries: 0).run(server.url("/latest"), to: output)
                #expect(first.error != nil)
                #expect(FileManager.default.fileExists(atPath: "\(output).part"), "a partial to resume")
                target.store(2, ordering: .relaxed)
                server.resource = TestResource(body: Fixtures.b, etag: Fixtures.etagA)
                let seen = server.requests.count
                let second = await Fetcher.immediate().run(server.url("/latest"), to: output)
                #expect(second.error == nil, "\(failure(second))")
                #expect(second.resumedFrom == 0)
                let whole = contents(output) == Fixtures.b
                #expect(whole, "the bytes of /x2 only, none of /x1's")
                let ranged = server.requests.dropFirst(seen).filter { $0.target == "/x2" && $0.header("Range") != nil }
                #expect(ranged.count <= 1, "one ranged GET at most, answered and not taken")
            }
        }
    }

    /// A signed target (its query changes on every redirect) is the same resource: a partial is
    /// continued there.
    @Test func `a partial is continued where the redirect leads to the same resource`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: Fixtures.a, etag: Fixtures.etagA)) { server in
            let signature = Atomic<Int>(0)
            server.handler = { request, _ in
                guard request.target == "/latest" else { return nil }
                let next = signature.add(1, ordering: .relaxed).newValue
                return TestResponse(status: 302, headers: [("Location", "/x1?sig=\(next)")])
            }
            try await withTemporaryDirectory { directory in
                let output = "\(directory)/out.bin"
                server.enqueueFaults(TestFaults(closeAfterBodyBytes: 400_000))
                let first = await Fetcher.immediate(retries: 0).run(server.url("/latest"), to: output)
                #expect(first.error != nil)
                let second = await Fetcher.immediate().run(server.url("/latest"), to: output)
                #expect(second.error == nil, "\(failure(second))")
                #expect(second.resumedFrom > 0)
                let whole = contents(output) == Fixtures.a
                #expect(whole)
            }
        }
    }
}
