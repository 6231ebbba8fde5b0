import Foundation
import Testing

@testable import PinFetch

/// Hostile answers: servers that send a slice for the whole, drop validators, or lie in HEAD; a
/// restart that fails before it starts; framing libcurl refuses and header sections too large for
/// it; a password in a URL.
struct HostileAnswerTests {
    static let quiet = AnswerEndToEndTests.quiet
    static let split = AnswerEndToEndTests.split
    static let total = Fixtures.a.count

    /// The body as one chunk and the last chunk.
    static func chunked(_ bytes: some Collection<UInt8>) -> [UInt8] { AnswerEndToEndTests.chunked(Array(bytes)) }

    /// `true` when the file at `path` holds exactly `bytes` (a Bool, so a failure prints no megabytes).
    static func holds(_ path: String, _ bytes: [UInt8]) -> Bool { fileHolds(path, bytes) }

    /// The texts of `result` a caller may show: its URL, source, mirrors and error message.
    static func texts(of result: FetchResult) -> [String] {
        [result.url, result.source ?? "", result.error?.message ?? ""] + result.mirrors.map(\.url)
    }

    @Test(arguments: [false, true])
    func `a chunked 200 with only the rest of the file is never committed as the file`(
        honestAfter: Bool
    )
        async throws
    {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
            try await withTemporaryDirectory { directory in
                await AnswerEndToEndTests.leavePartial(server, in: directory)
                let etag = (name: "ETag", value: Fixtures.etagA)
                let chunked = (name: "Transfer-Encoding", value: "chunked")
                server.handler = { request, _ in
                    guard request.method == "GET" else { return nil }
                    if request.header("Range") == nil, honestAfter {
                        return TestResponse(status: 200, headers: [etag, chunked], body: Self.chunked(Fixtures.a))
                    }
                    return TestResponse(
                        status: 200,
                        headers: [etag, chunked],
                        body: Self.chunked(Fixtures.a[Self.split...])
                    )
                }
                let result = await Fetcher.immediate().run(server.url(), to: "\(directory)/out.bin")
                #expect(result.error?.code == (honestAfter ? nil : .protocolViolation), "\(failure(result))")
                #expect(Self.holds("\(directory)/out.bin", Fixtures.a) == honestAfter)
                #expect(honestAfter || !FileManager.default.fileExists(atPath: "\(directory)/out.bin"))
                #expect(server.getRequests.suffix(2).map { $0.header("Range") } == ["bytes=\(Self.split)-", nil])
            }
        }
    }

    @Test func `a 200 slice without the ETag asked for is not spliced onto the partial`() async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
            try await withTemporaryDirectory { directory in
                await AnswerEndToEndTests.leavePartial(server, in: directory)
                // The file changed to B; the server ignores If-Range and sends no validator.
                server.handler = { request, _ in
                    guard request.method == "GET" else { return TestResponse(status: 405) }
                    guard request.header("Range") != nil else { return TestResponse(status: 200, body: Fixtures.b) }
                    let range = "bytes \(Self.split)-\(Self.total - 1)/\(Self.total)"
                    return TestResponse(
                        status: 200,
                        headers: [(name: "Content-Range", value: range)],
                        body: Array(Fixtures.b[Self.split...])
                    )
                }
                let result = await Fetcher.immediate().run(server.url(), to: "\(directory)/out.bin")
                #expect(result.error == nil, "\(failure(result))")
                #expect(Self.holds("\(directory)/out.bin", Fixtures.b))
                #expect(result.algorithm == .sha256)
                #expect(result.digest == Fixtures.sha256B)
            }
        }
    }

    @Test func `a 206 without the ETag asked for is not spliced onto the partial`() async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
            try await withTemporaryDirectory { directory in
                await AnswerEndToEndTests.leavePartial(server, in: directory)
                server.handler = { request, _ in
                    guard request.method == "GET" else { return TestResponse(status: 405) }
                    guard request.header("Range") != nil else {
                        return TestResponse(
                            status: 200,
                            headers: [(name: "ETag", value: Fixtures.etagB)],
                            body: Fixtures.b
                        )
                    }
                    let range = "bytes \(Self.split)-\(Self.total - 1)/\(Self.total)"
                    return TestResponse(
                        status: 206,
                        headers: [(name: "Content-Range", value: range)],
                        body: Array(Fixtures.b[Self.split...])
                    )
                }
                let result = await Fetcher.immediate().run(server.url(), to: "\(directory)/out.bin")
                #expect(result.error == nil, "\(failure(result))")
                #expect(Self.holds("\(directory)/out.bin", Fixtures.b))
                #expect(result.restarts == 1)
            }
        }
    }

    @Test func `a HEAD length never finishes a partial whose total was unknown`() async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
            try await withTemporaryDirectory { directory in
                server.enqueueFaults(TestFaults(omitContentLength: true, chunkedWithoutTerminator: true))
                server.enqueueFaults(TestFaults(omitContentLength: true, chunkedWithoutTerminator: true))
                let output = "\(directory)/out.bin"
                let first = await Fetcher.immediate(retries: 0).run(server.url(), to: output)
                #expect(first.error?.code == .network, "\(failure(first))")
                let kept = try #require(FileManager.default.attributesOfItem(atPath: output + ".part")[.size] as? Int)
                server.handler = { request, _ in
                    guard request.method == "HEAD" else { return nil }
                    return TestResponse(
                        status: 200,
                        headers: [(name: "ETag", value: Fixtures.etagA), (name: "Content-Length", value: "\(kept)")]
                    )
                }
                let result = await Fetcher.immediate().run(server.url(), to: output)
                #expect(result.error == nil, "\(failure(result))")
                #expect(Self.holds(output, Fixtures.a))
                #expect(server.getRequests.last?.header("Range") == "bytes=\(kept)-")
            }
        }
    }

    @Test func `a restart that fails before its answer keeps the partial resumable`() async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
            try await withTemporaryDirectory { directory in
                await AnswerEndToEndTests.leavePartial(server, in: directory)
                let output = "\(directory)/out.bin"
                // A range answer that does not continue at the offset decides a restart; the
                // restart's GET (the resource, with a fault) is reset before any byte.
                server.handler = { request, _ in
                    guard request.method == "GET", request.header("Range") != nil else { return nil }
                    let range = "bytes \(Self.split + 10)-\(Self.total - 1)/\(Self.total)"
                    return TestResponse(
                        status: 206,
                        headers: [(name: "ETag", value: Fixtures.etagA), (name: "Content-Range", value: range)],
                        body: Array(Fixtures.a[(Self.split + 10)...])
                    )
                }
                server.enqueueFaults(TestFaults(resetAfterBodyBytes: 0))
                let failed = await Fetcher.immediate(retries: 0).run(server.url(), to: output)
                #expect(failed.error?.code == .network, "\(failure(failed))")
                #expect(FileManager.default.fileExists(atPath: output + ".part.state"))
                #expect(
                    (try? FileManager.default.attributesOfItem(atPath: output + ".part")[.size] as? Int) == Self.split
                )

                server.handler = nil
                let resumed = await Fetcher.immediate().run(server.url(), to: output)
                #expect(resumed.error == nil, "\(failure(resumed))")
                #expect(resumed.resumedFrom == Int64(Self.split))
                #expect(Self.holds(output, Fixtures.a))
            }
        }
    }

    @Test(arguments: ["abc", "-1"])
    func `a Content-Length libcurl refuses is a protocol error, not retried`(length: String) async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
            server.handler = { _, _ in
                TestResponse(status: 200, headers: [(name: "Content-Length", value: length)], body: Fixtures.a)
            }
            try await withTemporaryDirectory { directory in
                let result = await Fetcher.immediate(retries: 3).run(server.url(), to: "\(directory)/out.bin")
                #expect(result.error?.code == .protocolViolation, "\(failure(result))")
                #expect(result.attempts == 1)
                #expect(listing(directory).isEmpty)
            }
        }
    }

    @Test func `a password in the URL is never printed`() async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
            server.handler = { _, _ in TestResponse(status: 404) }
            try await withTemporaryDirectory { directory in
                let url = "http://alice:S3cr3tPW@127.0.0.1:\(server.port)/file"
                let result = await Fetcher.immediate().run(url, to: "\(directory)/out.bin")
                #expect(result.error?.code == .serverResponse, "\(failure(result))")
                #expect(result.url == "http://alice:***@127.0.0.1:\(server.port)/file")
                #expect(!Self.texts(of: result).contains { $0.contains("S3cr3tPW") }, "\(Self.texts(of: result))")
                #expect(server.requests.first?.header("Authorization") != nil)
                // What the command line prints of it: its messages and its --json line.
                let run = await runCLI(Self.quiet + ["-o", "\(directory)/out.bin", url])
                #expect(run.status == 8)
                #expect(!run.standardOutput.contains("S3cr3tPW"))
                #expect(!run.standardError.contains("S3cr3tPW"))
            }
        }
    }

    @Test func `a 200 whose Content-Range is the requested range but whose body is unframed is not appended`()
        async throws
    {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
            try await withTemporaryDirectory { directory in
                await AnswerEndToEndTests.leavePartial(server, in: directory)
                let output = "\(directory)/out.bin"
                // The body is the whole file from byte 0, chunked, under the slice's Content-Range.
                server.handler = { request, _ in
                    guard request.method == "GET", request.header("Range") != nil else { return nil }
                    let range = "bytes \(Self.split)-\(Self.total - 1)/\(Self.total)"
                    let fields = [
                        (name: "ETag", value: Fixtures.etagA), (name: "Content-Range", value: range),
                        (name: "Transfer-Encoding", value: "chunked"),
                    ]
                    return TestResponse(status: 200, headers: fields, body: Self.chunked(Fixtures.a))
                }
                let result = await Fetcher.immediate().run(server.url(), to: output)
                #expect(result.error == nil, "\(failure(result))")
                #expect(Self.holds(output, Fixtures.a))
                #expect(result.restarts == 1)
            }
        }
    }

    @Test func `a second answer left on a kept-alive connection is never taken for the next file`() async throws {
        let fake = Array("HTTP/1.1 200 OK\r\nETag: \"evil\"\r\nContent-Length: 4\r\n\r\nEVIL".utf8)
        let files = ["/one": Array(Fixtures.a.prefix(50_000)), "/two": Array(Fixtures.b.prefix(60_000))]
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
            server.handler = { request, _ in
                guard let body = files[request.target] else { return nil }
                let fields = [
                    (name: "ETag", value: "\"\(request.target)\""), (name: "Content-Length", value: "\(body.count)"),
                    (name: "Connection", value: "keep-alive"),
                ]
                return TestResponse(status: 200, headers: fields, body: body + fake)
            }
            try await withTemporaryDirectory { directory in
                let jobs = ["one", "two"].map {
                    FetchJob(mirrors: [server.url("/\($0)")], destination: "\(directory)/\($0)")
                }
                let results = await Fetcher.immediate(retries: 0).run(jobs)  // one after the other
                #expect(results.map { $0.error } == [nil, nil], "\(results.map(failure))")
                #expect(Self.holds("\(directory)/one", files["/one"]!))
                #expect(Self.holds("\(directory)/two", files["/two"]!))
            }
        }
    }

    @Test(arguments: [false, true])
    func `an empty answer to a restart, for the same ETag, is exit 7 and keeps the partial`(
        chunked: Bool
    )
        async throws
    {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
            try await withTemporaryDirectory { directory in
                await AnswerEndToEndTests.leavePartial(server, in: directory)
                let output = "\(directory)/out.bin"
                let etag = (name: "ETag", value: Fixtures.etagA)
                server.handler = { request, _ in
                    guard request.method == "GET" else { return nil }
                    guard request.header("Range") != nil else {
                        guard chunked else { return TestResponse(status: 200, headers: [etag]) }  // Content-Length: 0
                        let coding = (name: "Transfer-Encoding", value: "chunked")
                        return TestResponse(status: 200, headers: [etag, coding], body: Array("0\r\n\r\n".utf8))
                    }
                    let range = "bytes \(Self.split + 10)-\(Self.total - 1)/\(Self.total)"  // not at the offset
                    return TestResponse(
                        status: 206,
                        headers: [etag, (name: "Content-Range", value: range)],
                        body: Array(Fixtures.a[(Self.split + 10)...])
                    )
                }
                let result = await Fetcher.immediate(retries: 0).run(server.url(), to: output)
                #expect(result.error?.code == .protocolViolation, "\(failure(result))")
                #expect(!FileManager.default.fileExists(atPath: output))
                #expect(
                    (try? FileManager.default.attributesOfItem(atPath: output + ".part")[.size] as? Int) == Self.split
                )
                server.handler = nil
                let resumed = await Fetcher.immediate().run(server.url(), to: output)
                #expect(resumed.resumedFrom == Int64(Self.split))
                #expect(Self.holds(output, Fixtures.a))
            }
        }
    }

    @Test func `an unframed 206 cut short is not checkpointed: its bytes could be anything`() async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
            try await withTemporaryDirectory { directory in
                await AnswerEndToEndTests.leavePartial(server, in: directory)
                let output = "\(directory)/out.bin"
                // A 206 for the rest whose chunked body is really the file from byte 0, cut before
                // it could run past its Content-Range.
                server.handler = { request, _ in
                    guard request.method == "GET", request.header("Range") != nil else { return nil }
                    let range = "bytes \(Self.split)-\(Self.total - 1)/\(Self.total)"
                    let fields = [
                        (name: "ETag", value: Fixtures.etagA), (name: "Content-Range", value: range),
                        (name: "Transfer-Encoding", value: "chunked"),
                    ]
                    return TestResponse(
                        status: 206,
                        headers: fields,
                        body: Self.chunked(Fixtures.b),
                        closeAfterBodyBytes: 300_000
                    )
                }
                let cut = await Fetcher.immediate(retries: 0).run(server.url(), to: output)
                #expect(cut.error?.code == .network, "\(failure(cut))")
                #expect(
                    (try? FileManager.default.attributesOfItem(atPath: output + ".part")[.size] as? Int) == Self.split
                )
                server.handler = nil
                let resumed = await Fetcher.immediate().run(server.url(), to: output)
                #expect(resumed.error == nil, "\(failure(resumed))")
                #expect(resumed.resumedFrom == Int64(Self.split))
                #expect(Self.holds(output, Fixtures.a))
            }
        }
    }

    @Test func `a file skipped by --fail-fast names its URL without the password`() async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
            server.handler = { _, _ in TestResponse(status: 404) }
            try await withTemporaryDirectory { directory in
                let secret = "http://alice:S3cr3tPW@127.0.0.1:\(server.port)/second"
                let jobs = [
                    FetchJob(mirrors: [server.url("/first")], destination: "\(directory)/first"),
                    FetchJob(mirrors: [secret], destination: "\(directory)/second"),
                ]
                let results = await Fetcher.immediate().run(jobs, failFast: true)
                #expect(results.map { $0.error?.code } == [.serverResponse, .serverResponse])
                #expect(results.map(\.status) == [.failed, .skipped])
                #expect(results[1].url == "http://alice:***@127.0.0.1:\(server.port)/second")
                #expect(
                    !Self.texts(of: results[1]).contains { $0.contains("S3cr3tPW") },
                    "\(Self.texts(of: results[1]))"
                )
                // What the command line prints of it: its messages and its --json lines.
                try "\(server.url("/first")) first\n\(secret) second\n"
                    .write(toFile: "\(directory)/list", atomically: true, encoding: .utf8)
                let run = await runCLI(Self.quiet + ["--fail-fast", "-P", directory, "-i", "\(directory)/list"])
                #expect(run.status == 8)
                #expect(!run.standardOutput.contains("S3cr3tPW") && !run.standardError.contains("S3cr3tPW"))
            }
        }
    }

    /// Hostile server: a header section of one 200 kB or 2 MB line, or of 60,000 small ones.
    @Test(arguments: [(200_000, 1), (2_000_000, 1), (6, 60_000)])
    func `an answer with a huge header is a protocol error, exit 7`(size: Int, lines: Int) async throws {
        try await withTestHTTPServer(serving: TestResource(body: [])) { server in
            server.handler = { _, _ in
                let headers = (0..<lines).map { _ in (name: "X-Big", value: String(repeating: "a", count: size)) }
                return TestResponse(status: 200, headers: headers, body: Array("hi".utf8))
            }
            try await withTemporaryDirectory { directory in
                let result = await Fetcher.immediate(retries: 0).run(server.url(), to: "\(directory)/o")
                #expect(result.error?.code == .protocolViolation, "\(failure(result))")
                #expect(result.error?.message.contains("header section is larger") == true, "\(failure(result))")
                #expect(listing(directory).isEmpty)
            }
        }
    }
}

extension HostileAnswerTests {
    /// Hostile server: every answer to the resume's `Range` breaks off before its first byte. A
    /// partial must not make every run fail the same way: the run after one that ended so asks
    /// for the whole file at its first such failure, and gets it.
    @Test func `a resume that failed the same way in the last run is fetched whole instead`() async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
            try await withTemporaryDirectory { directory in
                await AnswerEndToEndTests.leavePartial(server, in: directory)
                let split = AnswerEndToEndTests.split
                let total = Fixtures.a.count
                server.handler = { request, _ in
                    guard request.method == "GET", request.header("Range") != nil else { return nil }
                    return TestResponse(
                        status: 206,
                        headers: [
                            (name: "ETag", value: Fixtures.etagA),
                            (name: "Content-Range", value: "bytes \(split)-\(total - 1)/\(total)"),
                        ],
                        body: Array(Fixtures.a[split...]),
                        closeAfterBodyBytes: 0
                    )
                }
                let output = "\(directory)/out.bin"
                let second = await Fetcher.immediate(retries: 1).run(server.url(), to: output)
                #expect(second.error?.code == .network, "\(failure(second))")
                let record = try #require(CheckpointFile.read(output + ".part.state")?.durable.first)
                #expect(record.failure?.offset == Int64(split), "\(String(describing: record.failure))")

                let asked = server.getRequests.count
                let third = await Fetcher.immediate(retries: 1).run(server.url(), to: output)
                #expect(third.error == nil, "\(failure(third))")
                #expect(contents(output) == Fixtures.a)
                #expect(third.restarts == 1)
                #expect(server.getRequests.dropFirst(asked).map { $0.header("Range") } == ["bytes=\(split)-", nil])
            }
        }
    }
}
