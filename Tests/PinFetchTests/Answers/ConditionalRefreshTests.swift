import Foundation
@preconcurrency import Glibc
import Synchronization
import Testing

@testable import PinFetch

/// An unpinned rerun over a recorded file asks with a condition (RFC 9110 §13.1): a `304`
/// leaves the file as it is, anything else downloads as before.
struct ConditionalRefreshTests {
    /// A `Last-Modified` long before any `Date` the server sends: a strong validator (§8.8.2.2).
    static let longAgo = "Sat, 01 Jan 2000 00:00:00 GMT"

    /// Fetches `server`'s resource unpinned into `output` twice, with `between` run in between;
    /// the second run's result and the requests it made.
    static func twice(
        _ server: TestHTTPServer,
        _ output: String,
        configure: (inout FetchOptions) -> Void = { _ in },
        between: () throws -> Void = {}
    ) async throws -> (result: FetchResult, requests: [RecordedRequest]) {
        let first = await Fetcher.immediate().run(server.url(), to: output)
        #expect(first.error == nil, "\(failure(first))")
        try between()
        let seen = server.requests.count
        let result = await Fetcher.immediate(configure).run(server.url(), to: output)
        return (result, Array(server.requests.dropFirst(seen)))
    }

    static func inode(_ path: String) -> UInt64 {
        var info = stat()
        return lstat(path, &info) == 0 ? UInt64(info.st_ino) : 0
    }

    @Test func `an unchanged file is not downloaded again: If-None-Match, 304, already complete`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: Fixtures.a, etag: Fixtures.etagA)) { server in
            try await withTemporaryDirectory { directory in
                let output = "\(directory)/out.bin"
                var placed: UInt64 = 0
                let (result, requests) = try await Self.twice(server, output, between: { placed = Self.inode(output) })
                #expect(result.error == nil, "\(failure(result))")
                #expect(result.status == .alreadyComplete)
                #expect(result.downloadedBytes == 0)
                #expect(result.rehashedBytes == 0)
                #expect(result.bytes == Int64(Fixtures.a.count))
                #expect(result.digest == Fixtures.sha256A)
                #expect(result.mirrors.map(\.outcome) == ["ok"], "the mirror answered, and its 304 kept the file")
                #expect(
                    requests.map { "\($0.method) \($0.header("If-None-Match") ?? "-")" } == ["GET \(Fixtures.etagA)"]
                )
                #expect(Self.inode(output) == placed)
                #expect(contents(output) == Fixtures.a)
                #expect(listing(directory) == ["out.bin"])
            }
        }
    }

    @Test func `a changed file is downloaded with the answer to the condition`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: Fixtures.a, etag: Fixtures.etagA)) { server in
            try await withTemporaryDirectory { directory in
                let output = "\(directory)/out.bin"
                let (result, requests) = try await Self.twice(
                    server,
                    output,
                    between: {
                        server.resource = TestResource(body: Fixtures.b, etag: Fixtures.etagB)
                    }
                )
                #expect(result.status == .downloaded)
                #expect(result.downloadedBytes == Int64(Fixtures.b.count))
                #expect(requests.count == 1)
                #expect(contents(output) == Fixtures.b)
                #expect(VerifiedRecordTests.record(output)?.validator?.entityTag == Fixtures.etagB)
            }
        }
    }

    @Test func `without an ETag a strong Last-Modified is sent as If-Modified-Since`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: Fixtures.a, lastModified: Self.longAgo)) { server in
            try await withTemporaryDirectory { directory in
                let (result, requests) = try await Self.twice(server, "\(directory)/out.bin")
                #expect(result.status == .alreadyComplete)
                #expect(result.downloadedBytes == 0)
                #expect(requests.map { $0.header("If-Modified-Since") } == [Self.longAgo])
            }
        }
    }

    /// What sends no condition: a weak ETag (a 304 would say "equivalent", not "the same
    /// bytes"), a Last-Modified beside a weak ETag, no validator at all, a file changed since
    /// its record, and `--reverify`.
    enum Unconditional: String, CaseIterable {
        case weakETag, weakETagAndLastModified, noValidator, fileChanged, reverify
    }

    @Test(arguments: Unconditional.allCases)
    func `no condition is sent without a strong validator or a record that still holds`(
        _ kind: Unconditional
    ) async throws {
        let resource: TestResource =
            switch kind {
            case .weakETag: TestResource(body: Fixtures.a, etag: "W/\"a\"")
            case .weakETagAndLastModified: TestResource(body: Fixtures.a, etag: "W/\"a\"", lastModified: Self.longAgo)
            case .noValidator: TestResource(body: Fixtures.a)
            case .fileChanged, .reverify: TestResource(body: Fixtures.a, etag: Fixtures.etagA)
            }
        try await withTestHTTPServer(serving: resource) { server in
            try await withTemporaryDirectory { directory in
                let output = "\(directory)/out.bin"
                let (result, requests) = try await Self.twice(
                    server,
                    output,
                    configure: { $0.reverify = kind == .reverify },
                    between: {
                        guard kind == .fileChanged else { return }
                        usleep(20_000)
                        try Data(Fixtures.b).write(to: URL(filePath: output))
                    }
                )
                #expect(result.error == nil, "\(failure(result))")
                #expect(result.status == .downloaded)
                #expect(requests.allSatisfy { !TestHTTPServer.isConditional($0) }, "\(kind)")
                #expect(contents(output) == Fixtures.a)
            }
        }
    }

    @Test func `a 304 naming another ETag is not taken: the file is asked for again without a condition`() async throws
    {
        try await withTestHTTPServer(serving: TestResource(body: Fixtures.a, etag: Fixtures.etagA)) { server in
            try await withTemporaryDirectory { directory in
                let output = "\(directory)/out.bin"
                let (result, requests) = try await Self.twice(
                    server,
                    output,
                    between: {
                        server.faults = TestFaults(notModifiedETag: Fixtures.etagB)
                    }
                )
                #expect(result.error == nil, "\(failure(result))")
                #expect(result.status == .downloaded)
                #expect(requests.map { TestHTTPServer.isConditional($0) } == [true, false])
                #expect(contents(output) == Fixtures.a)
            }
        }
    }

    @Test func `a server that ignores the condition sends the file again, and it is taken`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: Fixtures.a, etag: Fixtures.etagA)) { server in
            try await withTemporaryDirectory { directory in
                let output = "\(directory)/out.bin"
                let (result, requests) = try await Self.twice(
                    server,
                    output,
                    between: {
                        server.faults = TestFaults(ignoreConditions: true)
                    }
                )
                #expect(result.status == .downloaded)
                #expect(requests.count == 1)
                #expect(contents(output) == Fixtures.a)
            }
        }
    }

    /// Two URLs that differ only in a secret are recorded alike (`?token=***`): either may name
    /// another file, so neither is asked with the other's condition.
    @Test func `a URL with a secret in it is never asked with a condition`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: Fixtures.a, etag: Fixtures.etagA)) { server in
            try await withTemporaryDirectory { directory in
                let output = "\(directory)/out.bin"
                let first = await Fetcher.immediate().run(server.url("/dl?token=AAA"), to: output)
                #expect(first.error == nil, "\(failure(first))")
                #expect(VerifiedRecordTests.record(output)?.url == server.url("/dl?token=***"))
                for url in [server.url("/dl?token=BBB"), server.url("/dl?token=AAA")] {
                    let seen = server.requests.count
                    let again = await Fetcher.immediate().run(url, to: output)
                    #expect(again.status == .downloaded, "\(url)")
                    #expect(server.requests.dropFirst(seen).allSatisfy { !TestHTTPServer.isConditional($0) }, "\(url)")
                }
            }
        }
    }

    /// A bare `304` (no `Last-Modified`, as RFC 9110 §15.4.5 allows an origin that has none,
    /// and what an older file behind the same URL answered an outsider's `If-Modified-Since`)
    /// names no validator: the file is asked for again without the condition.
    @Test func `a 304 that does not name the validator asked about is not taken`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: Fixtures.a, lastModified: Self.longAgo)) { server in
            try await withTemporaryDirectory { directory in
                let output = "\(directory)/out.bin"
                let (result, requests) = try await Self.twice(
                    server,
                    output,
                    between: {
                        server.handler = { request, _ in
                            guard request.header("If-Modified-Since") != nil else {
                                return TestResponse(status: 200, body: Fixtures.b)
                            }
                            return TestResponse(status: 304)
                        }
                    }
                )
                #expect(result.error == nil, "\(failure(result))")
                #expect(result.status == .downloaded)
                #expect(contents(output) == Fixtures.b)
                #expect(requests.map { TestHTTPServer.isConditional($0) } == [true, false])
            }
        }
    }

    /// An outsider's case: `/latest` was served itself, and now redirects to `/x2`, another file
    /// whose ETag is the same (nginx derives it from size and time). The condition names what
    /// the recorded URL led to, so it is not carried across a redirect: `/x2` is downloaded.
    @Test func `the condition is not carried across a redirect`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: Fixtures.a, etag: Fixtures.etagA)) { server in
            let target = Atomic<Int>(0)
            server.handler = { request, _ in
                guard request.target == "/latest", target.load(ordering: .relaxed) != 0 else { return nil }
                let location = "/x\(target.load(ordering: .relaxed))"
                return TestResponse(status: 302, headers: [("Location", location)])
            }
            try await withTemporaryDirectory { directory in
                let output = "\(directory)/out.bin"
                let first = await Fetcher.immediate().run(server.url("/latest"), to: output)
                #expect(first.error == nil, "\(failure(first))")
                target.store(2, ordering: .relaxed)
                server.resource = TestResource(body: Fixtures.b, etag: Fixtures.etagA)
                let seen = server.requests.count
                let second = await Fetcher.immediate().run(server.url("/latest"), to: output)
                let requests = server.requests.dropFirst(seen)
                #expect(second.error == nil, "\(failure(second))")
                #expect(second.status == .downloaded)
                let replaced = contents(output) == Fixtures.b
                #expect(replaced, "the bytes of /x2")
                #expect(requests.map(\.target) == ["/latest", "/x2"])
                #expect(requests.map { TestHTTPServer.isConditional($0) } == [true, false])
                // A server that answers 304 after the redirect anyway is not believed (the file,
                // now from /x2, has no validator to ask with: a redirect led to it).
                server.handler = { request, _ in
                    request.target == "/latest"
                        ? TestResponse(status: 302, headers: [("Location", "/x2")])
                        : TestResponse(status: 304, headers: [("ETag", Fixtures.etagA)])
                }
                let third = await Fetcher.immediate().run(server.url("/latest"), to: output)
                #expect(third.error?.code == .protocolViolation, "\(failure(third))")
                let kept = contents(output) == Fixtures.b
                #expect(kept, "the file is left as it was")
            }
        }
    }

    @Test func `the condition goes only to the mirror the file came from`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: Fixtures.a, etag: Fixtures.etagA)) { server in
            try await withTemporaryDirectory { directory in
                let output = "\(directory)/out.bin"
                let first = await Fetcher.immediate().run(server.url("/one"), to: output)
                #expect(first.error == nil, "\(failure(first))")
                let seen = server.requests.count
                let second = await Fetcher.immediate().run(server.url("/two"), to: output)
                #expect(second.status == .downloaded)
                #expect(server.requests.dropFirst(seen).allSatisfy { !TestHTTPServer.isConditional($0) })
            }
        }
    }

    @Test func `a checksum file fetched by URL is kept in the cache and asked for with a condition`() async throws {
        let sums = TestResource(body: Array("\(Fixtures.sha256A)  file\n".utf8), etag: "\"sums-1\"")
        try await withTestHTTPServer(serving: sums) { sumsServer in
            try await withTestHTTPServer(serving: TestResource(body: Fixtures.a, etag: Fixtures.etagA)) { server in
                try await withTemporaryDirectory { directory in
                    let arguments = [
                        "-q", "--retry-delay", "0", "--cache-dir", "\(directory)/cache",
                        "--checksum-file", sumsServer.url("/SHA256SUMS"), "-o", "\(directory)/file",
                        server.url("/file"),
                    ]
                    let first = await runCLI(arguments)
                    #expect(first.status == 0, "\(first.standardError)")
                    let second = await runCLI(arguments)
                    #expect(second.status == 0, "\(second.standardError)")
                    #expect(
                        sumsServer.requests.map { $0.header("If-None-Match") ?? "-" } == ["-", "\"sums-1\""],
                        "the second run asks for the checksum file with its ETag"
                    )
                    #expect(server.requests.count == 1, "the pinned file is as recorded: no request")
                    // A changed checksum file is taken at once.
                    sumsServer.resource = TestResource(
                        body: Array("\(Fixtures.sha256B)  file\n".utf8),
                        etag: "\"sums-2\""
                    )
                    server.resource = TestResource(body: Fixtures.b, etag: Fixtures.etagB)
                    let third = await runCLI(arguments)
                    #expect(third.status == 0, "\(third.standardError)")
                    #expect(contents("\(directory)/file") == Fixtures.b)
                    #expect(listing("\(directory)/cache/inputs").count == 1)
                }
            }
        }
    }

    /// An outsider's case: the entry's name was the SHA-256 of the whole URL, token and all, so a
    /// short token could be confirmed offline from the cache's listing.
    @Test func `a checksum file at a URL with a secret is not kept in the cache`() async throws {
        let sums = TestResource(body: Array("\(Fixtures.sha256A)  file\n".utf8), etag: "\"sums-1\"")
        try await withTestHTTPServer(serving: sums) { sumsServer in
            try await withTestHTTPServer(serving: TestResource(body: Fixtures.a, etag: Fixtures.etagA)) { server in
                try await withTemporaryDirectory { directory in
                    let arguments = [
                        "-q", "--retry-delay", "0", "--cache-dir", "\(directory)/cache",
                        "--checksum-file", sumsServer.url("/SHA256SUMS?token=hunter2"), "-o", "\(directory)/file",
                        server.url("/file"),
                    ]
                    let first = await runCLI(arguments)
                    #expect(first.status == 0, "\(first.standardError)")
                    #expect(contents("\(directory)/file") == Fixtures.a)
                    #expect(listing("\(directory)/cache/inputs").isEmpty)
                    let second = await runCLI(arguments)
                    #expect(second.status == 0, "\(second.standardError)")
                    #expect(sumsServer.requests.allSatisfy { !TestHTTPServer.isConditional($0) })
                }
            }
        }
    }
}
