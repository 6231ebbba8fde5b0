import Foundation
import Testing

@testable import PinFetch

/// The kinds of answer to a ranged GET, end to end: the in-process server replays each misbehaving server, a
/// `Fetcher` runs against it, and the test checks the bytes on disk, the result or the error's kind, and
/// the requests the server saw. The decisions themselves are rows of `AnswerDecisionTests`.
struct AnswerEndToEndTests {
    static let quiet = ["-q", "--json", "--retry-delay", "0"]
    static let resourceA = TestResource(body: Fixtures.a, etag: Fixtures.etagA)
    static let split = 400_000

    /// A response with fixture A's ETag, `fields`, and `body`.
    static func answer(_ status: Int, _ fields: [(String, String)], body: [UInt8]) -> TestResponse {
        TestResponse(
            status: status,
            headers: [(name: "ETag", value: Fixtures.etagA)] + fields.map { (name: $0.0, value: $0.1) },
            body: body
        )
    }

    /// `bytes` as one chunk and the last chunk (RFC 9112 §7.1).
    static func chunked(_ bytes: [UInt8]) -> [UInt8] {
        Array((String(bytes.count, radix: 16) + "\r\n").utf8) + bytes + Array("\r\n0\r\n\r\n".utf8)
    }

    /// Leaves a partial of fixture A's first 400,000 bytes with its checkpoint in `directory`.
    static func leavePartial(_ server: TestHTTPServer, in directory: String) async {
        server.enqueueFaults(TestFaults(closeAfterBodyBytes: Self.split))
        let first = await Fetcher.immediate(retries: 0).run(server.url(), to: "\(directory)/out.bin")
        #expect(first.error?.code == .network, "\(failure(first))")
        #expect(FileManager.default.fileExists(atPath: "\(directory)/out.bin.part.state"))
    }

    @Test(arguments: [[("Content-Encoding", "identity")], []] as [[(String, String)]])
    func `a 200 with the requested slice and its Content-Range is appended as that slice`(
        extra: [(String, String)]
    ) async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                await Self.leavePartial(server, in: directory)
                server.handler = { request, _ in
                    guard request.method == "GET", request.header("Range") != nil else { return nil }
                    let slice = Array(Fixtures.a[Self.split...])
                    let range = "bytes \(Self.split)-\(Fixtures.a.count - 1)/\(Fixtures.a.count)"
                    return Self.answer(200, [("Content-Range", range)] + extra, body: slice)
                }
                let result = await Fetcher.immediate().run(server.url(), to: "\(directory)/out.bin")
                #expect(result.error == nil, "\(failure(result))")
                #expect(result.status == .resumed)
                #expect(result.resumedFrom == Int64(Self.split))
                #expect(contents("\(directory)/out.bin") == Fixtures.a)
                #expect(result.algorithm == .sha256)
                #expect(result.digest == Fixtures.sha256A)
                #expect(listing(directory) == ["out.bin"])
            }
        }
    }

    @Test func `a 200 slice without Content-Range restarts once without Range, then takes the whole file`()
        async throws
    {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                await Self.leavePartial(server, in: directory)
                server.handler = { request, _ in
                    guard request.method == "GET", request.header("Range") != nil else { return nil }
                    return Self.answer(200, [], body: Array(Fixtures.a[Self.split...]))
                }
                let result = await Fetcher.immediate().run(server.url(), to: "\(directory)/out.bin")
                #expect(result.error == nil, "\(failure(result))")
                #expect(result.restarts == 1)
                #expect(result.status == .downloaded)
                #expect(contents("\(directory)/out.bin") == Fixtures.a)
                let gets = server.getRequests.suffix(2)
                #expect(gets.map { $0.header("Range") } == ["bytes=\(Self.split)-", nil])
            }
        }
    }

    @Test func `a server that always answers with the slice is exit 7, and nothing is committed`() async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                await Self.leavePartial(server, in: directory)
                server.handler = { request, _ in
                    guard request.method == "GET" else { return nil }
                    return Self.answer(200, [], body: Array(Fixtures.a[Self.split...]))
                }
                let result = await Fetcher.immediate().run(server.url(), to: "\(directory)/out.bin")
                #expect(result.error?.code == .protocolViolation, "\(failure(result))")
                #expect(!FileManager.default.fileExists(atPath: "\(directory)/out.bin"))
                #expect(server.getRequests.suffix(2).map { $0.header("Range") } == ["bytes=\(Self.split)-", nil])
            }
        }
    }

    struct UnaskedRange: Sendable, CustomTestStringConvertible {
        var label: String
        var fields: [(String, String)]
        var chunked = false
        var pinned = false
        /// The kind of the failure, `nil` for a file fetched.
        var failure: PinFetchError.Code?
        var testDescription: String { self.label }
    }

    static let total = Fixtures.a.count
    static let unaskedRanges: [UnaskedRange] = [
        UnaskedRange(
            label: "numeric total",
            fields: [("Content-Range", "bytes 0-\(total - 1)/\(total)")],
            failure: nil
        ),
        UnaskedRange(
            label: "total * with a Content-Length",
            fields: [("Content-Range", "bytes 0-\(total - 1)/*"), ("Content-Length", "\(total)")],
            failure: nil
        ),
        UnaskedRange(
            label: "total *, chunked, pinned",
            fields: [("Content-Range", "bytes 0-\(total - 1)/*"), ("Transfer-Encoding", "chunked")],
            chunked: true,
            pinned: true,
            failure: nil
        ),
        UnaskedRange(
            label: "total *, chunked, no pin",
            fields: [("Content-Range", "bytes 0-\(total - 1)/*"), ("Transfer-Encoding", "chunked")],
            chunked: true,
            failure: .protocolViolation
        ),
    ]

    @Test(arguments: Self.unaskedRanges)
    func `a 206 to a request without Range is the whole body when its length is known`(
        row: UnaskedRange
    )
        async throws
    {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            server.handler = { request, _ in
                guard request.method == "GET" else { return nil }
                return Self.answer(206, row.fields, body: row.chunked ? Self.chunked(Fixtures.a) : Fixtures.a)
            }
            try await withTemporaryDirectory { directory in
                let pin = row.pinned ? try Pin(sha256Hex: Fixtures.sha256A) : nil
                let result = await Fetcher.immediate().run(server.url(), to: "\(directory)/out.bin", verifying: pin)
                #expect(result.error?.code == row.failure, "\(failure(result))")
                #expect(contents("\(directory)/out.bin") == (row.failure == nil ? Fixtures.a : nil))
                #expect(listing(directory) == (row.failure == nil ? ["out.bin"] : []))
                #expect(server.getRequests.count == 1)
            }
        }
    }

    @Test func `Content-Length beside Transfer-Encoding chunked is ignored`() async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            server.handler = { request, _ in
                guard request.method == "GET" else { return nil }
                let fields = [("Content-Length", "2000000"), ("Transfer-Encoding", "chunked")]
                return Self.answer(200, fields, body: Self.chunked(Fixtures.a))
            }
            try await withTemporaryDirectory { directory in
                let result = await Fetcher.immediate().run(server.url(), to: "\(directory)/out.bin")
                #expect(result.error == nil, "\(failure(result))")
                #expect(contents("\(directory)/out.bin") == Fixtures.a)
                #expect(server.getRequests.count == 1)
            }
        }
    }

    @Test(
        arguments: [
            (["\(total)", "\(total)"], nil), (["\(total), \(total)"], nil),
            (["\(total)", "600000"], .protocolViolation), (["\(total), 600000"], .protocolViolation),
        ] as [([String], PinFetchError.Code?)]
    )
    func `duplicate Content-Length values: identical is one length, conflicting is exit 7`(
        lengths: [String],
        kind: PinFetchError.Code?
    ) async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            server.handler = { request, _ in
                guard request.method == "GET" else { return nil }
                return Self.answer(200, lengths.map { ("Content-Length", $0) }, body: Fixtures.a)
            }
            try await withTemporaryDirectory { directory in
                let result = await Fetcher.immediate().run(server.url(), to: "\(directory)/out.bin")
                #expect(result.error?.code == kind, "\(failure(result))")
                #expect(contents("\(directory)/out.bin") == (kind == nil ? Fixtures.a : nil))
                #expect(listing(directory) == (kind == nil ? ["out.bin"] : []))
            }
        }
    }

    @Test func `--content-disposition takes the name from the GET when HEAD is refused`() async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            server.handler = { request, _ in
                if request.method == "HEAD" { return TestResponse(status: 405) }
                return Self.answer(
                    200,
                    [("Content-Disposition", #"attachment; filename="real.bin""#)],
                    body: Fixtures.a
                )
            }
            try await withTemporaryDirectory { directory in
                // As `--content-disposition -P DIR`: named in DIR, after the URL's last segment by default.
                let job = FetchJob(
                    mirrors: [server.url("/download?id=7")],
                    destination: "\(directory)/download",
                    namingDirectory: directory
                )
                let result = try #require(await Fetcher.immediate().run([job]).first)
                #expect(result.error == nil, "\(failure(result))")
                #expect(result.path == "\(directory)/real.bin")
                #expect(listing(directory) == ["real.bin"])
                #expect(contents("\(directory)/real.bin") == Fixtures.a)
            }
        }
    }

    @Test func `a redirect Location with a raw space keeps its existing escapes`() async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            server.handler = { request, _ in
                guard request.target == "/file" else { return nil }
                return TestResponse(status: 302, headers: [(name: "Location", value: "/files/a%2Bb c.bin")])
            }
            try await withTemporaryDirectory { directory in
                let result = await Fetcher.immediate().run(server.url(), to: "\(directory)/out.bin")
                #expect(result.error == nil, "\(failure(result))")
                #expect(server.getRequests.map(\.target) == ["/file", "/files/a%2Bb%20c.bin"])
                #expect(contents("\(directory)/out.bin") == Fixtures.a)
            }
        }
    }

    @Test func `a URL typed with a raw space is fetched encoded`() async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let result = await Fetcher.immediate().run(server.url("/dir/my file.bin"), to: "\(directory)/out.bin")
                #expect(result.error == nil, "\(failure(result))")
                #expect(server.getRequests.map(\.target) == ["/dir/my%20file.bin"])
                #expect(result.url == server.url("/dir/my%20file.bin"))
                #expect(contents("\(directory)/out.bin") == Fixtures.a)
                // The command line names the file after the decoded last segment (`-P`).
                let run = await runCLI(Self.quiet + ["-P", "\(directory)/new", server.url("/dir/my file.bin")])
                #expect(run.status == 0)
                #expect(listing("\(directory)/new") == ["my file.bin"])
            }
        }
    }

    @Test(arguments: ["/dir/a\u{7}b", "/dir/a\nb", "/dir/a\u{7F}b"])
    func `a URL with a control character is exit 2 and creates nothing`(path: String) async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let result = await Fetcher.immediate().run(server.url(path), to: "\(directory)/new/out.bin")
                #expect(result.error?.code == .usage, "\(failure(result))")
                #expect(result.error?.message.contains("control character") == true, "\(failure(result))")
                #expect(listing(directory).isEmpty)
                #expect(server.requests.isEmpty)
            }
        }
    }

    @Test func `a failure names the mirror that failed, not the first`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: [])) { first in
            try await withTestHTTPServer(serving: TestResource(body: [])) { second in
                first.handler = { _, _ in TestResponse(status: 404) }
                second.handler = { _, _ in TestResponse(status: 410) }
                try await withTemporaryDirectory { directory in
                    let job = FetchJob(mirrors: [first.url(), second.url()], destination: "\(directory)/out.bin")
                    let result = try #require(await Fetcher.immediate().run([job]).first)
                    #expect(result.error?.code == .serverResponse, "\(failure(result))")
                    #expect(result.error?.message == "\(second.url()): HTTP 410")
                    #expect(result.url == first.url())
                }
            }
        }
    }

    @Test func `a body sent after the HEAD answer does not break the resume`() async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                await Self.leavePartial(server, in: directory)
                let keepAlive = (name: "Connection", value: "keep-alive")
                server.handler = { request, _ in
                    let etag = (name: "ETag", value: Fixtures.etagA)
                    if request.method == "HEAD" {
                        let length = (name: "Content-Length", value: "\(Fixtures.a.count)")
                        return TestResponse(
                            status: 200,
                            headers: [etag, length, keepAlive],
                            body: Fixtures.a,
                            bodyOnHead: true
                        )
                    }
                    guard request.header("Range") == "bytes=\(Self.split)-" else { return nil }
                    let range = (name: "Content-Range", value: "bytes \(Self.split)-\(Self.total - 1)/\(Self.total)")
                    return TestResponse(
                        status: 206,
                        headers: [etag, range, keepAlive],
                        body: Array(Fixtures.a[Self.split...])
                    )
                }
                let result = await Fetcher.immediate(retries: 0).run(server.url(), to: "\(directory)/out.bin")
                #expect(result.error == nil, "\(failure(result))")
                #expect(result.resumedFrom == Int64(Self.split))
                #expect(contents("\(directory)/out.bin") == Fixtures.a)
                #expect(server.requests.suffix(2).map(\.method) == ["HEAD", "GET"])
            }
        }
    }

    @Test func `stray bytes on a kept-alive connection cost one more request, not the file`() async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            // The first file's answer says 1,048,576 bytes and sends 2 MiB on a kept-alive
            // connection: the second file's GET, reusing it, reads the excess as its status line.
            server.handler = { request, _ in
                let fields = [
                    (name: "ETag", value: Fixtures.etagA), (name: "Content-Length", value: "\(Self.total)"),
                    (name: "Connection", value: "keep-alive"),
                ]
                let body = request.target == "/first" ? Fixtures.a + Fixtures.b : Fixtures.a
                return TestResponse(status: 200, headers: fields, body: body)
            }
            try await withTemporaryDirectory { directory in
                let pin = try Pin(sha256Hex: Fixtures.sha256A)
                let jobs = ["first", "second"].map {
                    FetchJob(mirrors: [server.url("/\($0)")], destination: "\(directory)/\($0).bin", pin: pin)
                }
                let results = await Fetcher.immediate(retries: 0).run(jobs)  // one after the other
                #expect(results.map { $0.error } == [nil, nil], "\(results.map(failure))")
                #expect(contents("\(directory)/first.bin") == Fixtures.a)
                #expect(contents("\(directory)/second.bin") == Fixtures.a)
            }
        }
    }
}
