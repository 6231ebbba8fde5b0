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
                // As S3 signs: a new date and signature each time, the object's key in the path.
                let query = "X-Amz-Date=20261203T0000\(next)Z&X-Amz-Expires=300&X-Amz-Signature=\(next)"
                return TestResponse(status: 302, headers: [("Location", "/x1?\(query)")])
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

    /// A redirect to `/get?f=N&sig=…`: the file is named by the query, the signature changes.
    static func redirectingByQuery(_ server: TestHTTPServer, to target: @escaping @Sendable () -> Int) {
        let signature = Atomic<Int>(0)
        server.handler = { request, _ in
            guard request.target == "/latest" else { return nil }
            let next = signature.add(1, ordering: .relaxed).newValue
            return TestResponse(status: 302, headers: [("Location", "/get?f=x\(target())&sig=\(next)")])
        }
    }

    /// An outsider's case: the query named the file, and a partial of one was continued with the
    /// other's bytes when only the path was compared.
    @Test func `a partial is not continued where a redirect now leads to another query`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: Fixtures.a, etag: Fixtures.etagA)) { server in
            let target = Atomic<Int>(1)
            Self.redirectingByQuery(server) { target.load(ordering: .relaxed) }
            try await withTemporaryDirectory { directory in
                let output = "\(directory)/out.bin"
                server.enqueueFaults(TestFaults(closeAfterBodyBytes: 400_000))
                let first = await Fetcher.immediate(retries: 0).run(server.url("/latest"), to: output)
                #expect(first.error != nil)
                target.store(2, ordering: .relaxed)
                server.resource = TestResource(body: Fixtures.b, etag: Fixtures.etagA)
                let second = await Fetcher.immediate().run(server.url("/latest"), to: output)
                #expect(second.error == nil, "\(failure(second))")
                #expect(second.resumedFrom == 0)
                let whole = contents(output) == Fixtures.b
                #expect(whole, "the bytes of f=x2 only, none of f=x1's")
            }
        }
    }

    /// The same within one run: the retry after a dropped connection is redirected to another file.
    @Test func `a retry whose redirect leads to another query starts over`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: Fixtures.a, etag: Fixtures.etagA)) { server in
            let target = Atomic<Int>(1)
            Self.redirectingByQuery(server) { target.load(ordering: .relaxed) }
            let switched = Atomic<Bool>(false)
            try await withTemporaryDirectory { directory in
                let output = "\(directory)/out.bin"
                server.enqueueFaults(TestFaults(closeAfterBodyBytes: 400_000))
                var options = FetchOptions()
                options.retries = 2
                options.retryDelay = 0
                options.events = { event in
                    // The first attempt failed: from now on the redirect leads to the other file.
                    if case .retrying = event, !switched.exchange(true, ordering: .relaxed) {
                        target.store(2, ordering: .relaxed)
                        server.resource = TestResource(body: Fixtures.b, etag: Fixtures.etagA)
                    }
                }
                let result = await Fetcher(options: options).run(server.url("/latest"), to: output)
                #expect(result.error == nil, "\(failure(result))")
                let retried = switched.load(ordering: .relaxed)
                #expect(retried, "a retry came")
                let whole = contents(output) == Fixtures.b
                #expect(whole, "the bytes of f=x2 only, none of f=x1's")
            }
        }
    }
}
