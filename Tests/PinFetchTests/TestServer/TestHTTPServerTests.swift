import Foundation
import Testing

/// The `Last-Modified` of ``serverTestResource(_:etag:)`` (the test server's own tests).
let serverTestLastModified = "Sat, 01 Jan 2000 00:00:00 GMT"

/// `count` bytes of ``makeBody(_:)`` with `etag` and ``serverTestLastModified``.
func serverTestResource(_ count: Int = 1000, etag: String? = "\"v1\"") -> TestResource {
    TestResource(body: makeBody(count), etag: etag, lastModified: serverTestLastModified)
}

@Suite("TestHTTPServer")
struct TestHTTPServerTests {
    @Test func fullGet() async throws {
        let body = makeBody(300_000)
        try await withTestHTTPServer(
            serving: TestResource(body: body, etag: "\"v1\"", lastModified: serverTestLastModified)
        ) {
            server in
            let result = try await runCurl([], url: server.url())
            #expect(result.exitCode == 0)
            #expect(result.status == 200)
            #expect(result.body == body)
            #expect(result.header("Content-Length") == "300000")
            #expect(result.header("ETag") == "\"v1\"")
            #expect(result.header("Last-Modified") == serverTestLastModified)
            #expect(result.header("Accept-Ranges") == "bytes")
            #expect(result.header("Connection") == "close")
            #expect(result.header("Content-Type") == "application/octet-stream")
            #expect(server.bodyBytesSent == 300_000)
        }
    }

    @Test func openAndClosedRanges() async throws {
        let res = serverTestResource()
        try await withTestHTTPServer(serving: res) { server in
            let open = try await runCurl(["-H", "Range: bytes=10-"], url: server.url())
            #expect(open.exitCode == 0)
            #expect(open.status == 206)
            #expect(open.header("Content-Range") == "bytes 10-999/1000")
            #expect(open.header("Content-Length") == "990")
            #expect(open.header("ETag") == "\"v1\"")
            #expect(open.body == Array(res.body[10...]))

            let closed = try await runCurl(["-H", "Range: bytes=10-19"], url: server.url())
            #expect(closed.status == 206)
            #expect(closed.header("Content-Range") == "bytes 10-19/1000")
            #expect(closed.body == Array(res.body[10...19]))

            let beyondEnd = try await runCurl(["-H", "Range: bytes=990-5000"], url: server.url())
            #expect(beyondEnd.header("Content-Range") == "bytes 990-999/1000")
            #expect(beyondEnd.body == Array(res.body[990...]))

            let multi = try await runCurl(["-H", "Range: bytes=0-1,5-6"], url: server.url())
            #expect(multi.status == 200)
            #expect(multi.body == res.body)
        }
    }

    @Test func ifRangeStrongMatchAndMismatch() async throws {
        let res = serverTestResource()
        try await withTestHTTPServer(serving: res) { server in
            let match = try await runCurl(["-H", "Range: bytes=100-", "-H", "If-Range: \"v1\""], url: server.url())
            #expect(match.status == 206)
            #expect(match.body == Array(res.body[100...]))

            let mismatch = try await runCurl(["-H", "Range: bytes=100-", "-H", "If-Range: \"v0\""], url: server.url())
            #expect(mismatch.status == 200)
            #expect(mismatch.body == res.body)
            #expect(mismatch.header("Content-Range") == nil)

            let dateMatch = try await runCurl(
                ["-H", "Range: bytes=100-", "-H", "If-Range: \(serverTestLastModified)"],
                url: server.url()
            )
            #expect(dateMatch.status == 206)

            let dateMismatch = try await runCurl(
                ["-H", "Range: bytes=100-", "-H", "If-Range: Sun, 02 Jan 2000 00:00:00 GMT"],
                url: server.url()
            )
            #expect(dateMismatch.status == 200)

            server.faults = TestFaults(ignoreIfRange: true)
            let ignored = try await runCurl(["-H", "Range: bytes=100-", "-H", "If-Range: \"v0\""], url: server.url())
            #expect(ignored.status == 206)
        }
    }

    @Test func weakETagNeverMatchesIfRange() async throws {
        try await withTestHTTPServer(serving: serverTestResource(etag: "W/\"v1\"")) { server in
            let weak = try await runCurl(["-H", "Range: bytes=100-", "-H", "If-Range: W/\"v1\""], url: server.url())
            #expect(weak.status == 200)
            #expect(weak.body.count == 1000)
            let strongAgainstWeak = try await runCurl(
                ["-H", "Range: bytes=100-", "-H", "If-Range: \"v1\""],
                url: server.url()
            )
            #expect(strongAgainstWeak.status == 200)
        }
        #expect(TestHTTPServer.ifRangeMatches("W/\"v1\"", serverTestResource()) == false)
        #expect(TestHTTPServer.ifRangeMatches("\"v1\"", serverTestResource()) == true)
    }

    @Test func rangeNotSatisfiable() async throws {
        try await withTestHTTPServer(serving: serverTestResource()) { server in
            let result = try await runCurl(["-H", "Range: bytes=1000-"], url: server.url())
            #expect(result.status == 416)
            #expect(result.header("Content-Range") == "bytes */1000")
            #expect(!result.body.isEmpty)

            server.faults = TestFaults(rangeNotSatisfiableBody: Array("<html>nope</html>".utf8))
            let custom = try await runCurl(["-H", "Range: bytes=5000-6000"], url: server.url())
            #expect(custom.status == 416)
            #expect(custom.body == Array("<html>nope</html>".utf8))
        }
    }

    @Test func headDefaultAndFault() async throws {
        try await withTestHTTPServer(serving: serverTestResource()) { server in
            let head = try await runCurl(["-I"], url: server.url())
            #expect(head.exitCode == 0)
            #expect(head.status == 200)
            #expect(head.header("Content-Length") == "1000")
            #expect(head.header("ETag") == "\"v1\"")
            #expect(head.header("Last-Modified") == serverTestLastModified)
            #expect(head.header("Accept-Ranges") == "bytes")

            server.faults = TestFaults(headStatus: 405)
            let refused = try await runCurl(["-I"], url: server.url())
            #expect(refused.status == 405)
            #expect(refused.header("ETag") == nil)
            #expect(refused.header("Last-Modified") == nil)
            #expect(server.requests.map(\.method) == ["HEAD", "HEAD"])
            #expect(server.bodyBytesSent == 0)
        }
    }

    @Test func closeAfterBodyBytes() async throws {
        let res = serverTestResource(100_000)
        try await withTestHTTPServer(serving: res) { server in
            server.faults = TestFaults(closeAfterBodyBytes: 12_345)
            let result = try await runCurl([], url: server.url())
            #expect(result.exitCode == 18)
            #expect(result.header("Content-Length") == "100000")
            #expect(result.body == Array(res.body[0..<12_345]))
            #expect(server.bodyBytesSent == 12_345)
        }
    }

    @Test func resetAfterBodyBytes() async throws {
        let res = serverTestResource(100_000)
        try await withTestHTTPServer(serving: res) { server in
            server.faults = TestFaults(resetAfterBodyBytes: 5_000)
            let result = try await runCurl([], url: server.url())
            #expect(result.exitCode == 56 || result.exitCode == 18)
            #expect(result.body.count <= 5_000)
            #expect(result.body == Array(res.body[0..<result.body.count]))
        }
    }

    @Test func contentRangeShift() async throws {
        let res = serverTestResource(1_048_576)
        try await withTestHTTPServer(serving: res) { server in
            server.faults = TestFaults(contentRangeShift: 2688)
            let result = try await runCurl(["-H", "Range: bytes=400000-"], url: server.url())
            #expect(result.status == 206)
            #expect(result.header("Content-Range") == "bytes 397312-1048575/1048576")
            #expect(result.body == Array(res.body[397_312...]))

            server.faults = TestFaults(contentRangeShift: -100)
            let later = try await runCurl(["-H", "Range: bytes=400000-400999"], url: server.url())
            #expect(later.header("Content-Range") == "bytes 400100-400999/1048576")
            #expect(later.body == Array(res.body[400_100...400_999]))
        }
    }

    @Test func rangeFaults() async throws {
        let res = serverTestResource()
        try await withTestHTTPServer(serving: res) { server in
            server.faults = TestFaults(ignoreRange: true)
            let ignored = try await runCurl(["-H", "Range: bytes=10-"], url: server.url())
            #expect(ignored.status == 200)
            #expect(ignored.body == res.body)

            server.faults = TestFaults(omitContentRange: true)
            let bare = try await runCurl(["-H", "Range: bytes=10-"], url: server.url())
            #expect(bare.status == 206)
            #expect(bare.header("Content-Range") == nil)
            #expect(bare.body == Array(res.body[10...]))

            server.faults = TestFaults(multipartRanges: true)
            let multipart = try await runCurl(["-H", "Range: bytes=10-19"], url: server.url())
            #expect(multipart.status == 206)
            let contentType = try #require(multipart.header("Content-Type"))
            #expect(contentType.hasPrefix("multipart/byteranges; boundary="))
            let boundary = String(contentType.dropFirst("multipart/byteranges; boundary=".count))
            let expected =
                Array("--\(boundary)\r\nContent-Type: application/octet-stream\r\n".utf8)
                + Array("Content-Range: bytes 10-19/1000\r\n\r\n".utf8) + Array(res.body[10...19])
                + Array("\r\n--\(boundary)--\r\n".utf8)
            #expect(multipart.body == expected)
            #expect(multipart.header("Content-Length") == String(expected.count))
        }
    }

    @Test func gzipEncoding() async throws {
        let res = serverTestResource(200_000)  // several stored blocks
        try await withTestHTTPServer(serving: res) { server in
            server.faults = TestFaults(gzip: true)
            let decoded = try await runCurl(["--compressed"], url: server.url())
            #expect(decoded.exitCode == 0)
            #expect(decoded.header("Content-Encoding") == "gzip")
            #expect(decoded.body == res.body)

            let plain = try await runCurl([], url: server.url())
            #expect(plain.header("Content-Encoding") == nil)
            #expect(plain.body == res.body)

            let refused = try await runCurl(["-H", "Accept-Encoding: gzip;q=0, *"], url: server.url())
            #expect(refused.header("Content-Encoding") == nil)

            server.faults = TestFaults(gzipEvenIfNotAllowed: true)
            let forced = try await runCurl([], url: server.url())
            #expect(forced.header("Content-Encoding") == "gzip")
            #expect(forced.body.starts(with: [0x1F, 0x8B]))
            #expect(forced.body == TestGzip.encode(res.body))
            let forcedDecoded = try await runCurl(["--compressed"], url: server.url())
            #expect(forcedDecoded.body == res.body)
        }
        #expect(TestHTTPServer.acceptsGzip("deflate, gzip, br, zstd"))
        #expect(TestHTTPServer.acceptsGzip("*"))
        #expect(!TestHTTPServer.acceptsGzip("identity"))
        #expect(!TestHTTPServer.acceptsGzip("*;q=0"))
        #expect(!TestHTTPServer.acceptsGzip(nil))
        #expect(TestGzip.crc32(Array("123456789".utf8)) == 0xCBF4_3926)
    }

    @Test func emptyBodyGzipIsValid() async throws {
        try await withTestHTTPServer(serving: TestResource(body: [])) { server in
            server.faults = TestFaults(gzip: true)
            let result = try await runCurl(["--compressed"], url: server.url())
            #expect(result.exitCode == 0)
            #expect(result.header("Content-Encoding") == "gzip")
            #expect(result.body.isEmpty)
        }
    }

    @Test func chunkedBodies() async throws {
        let res = serverTestResource(150_000)
        try await withTestHTTPServer(serving: res) { server in
            server.faults = TestFaults(omitContentLength: true)
            let chunked = try await runCurl([], url: server.url())
            #expect(chunked.exitCode == 0)
            #expect(chunked.header("Transfer-Encoding") == "chunked")
            #expect(chunked.header("Content-Length") == nil)
            #expect(chunked.body == res.body)

            server.faults = TestFaults(chunkedWithoutTerminator: true)
            let unterminated = try await runCurl([], url: server.url())
            #expect(unterminated.exitCode == 18)
            #expect(unterminated.body == res.body)
        }
    }

    @Test func requestsAreRecorded() async throws {
        try await withTestHTTPServer(serving: serverTestResource()) { server in
            _ = try await runCurl(["-I"], url: server.url("/a/b.bin"))
            _ = try await runCurl(["-H", "X-Test: abc", "-H", "Range: bytes=5-"], url: server.url("/c?d=1"))
            let requests = server.requests
            #expect(requests.count == 2)
            #expect(requests[0].method == "HEAD")
            #expect(requests[0].target == "/a/b.bin")
            #expect(requests[1].method == "GET")
            #expect(requests[1].target == "/c?d=1")
            #expect(requests[1].header("x-test") == "abc")
            #expect(requests[1].header("RANGE") == "bytes=5-")
            #expect(requests[1].header("Host") == "127.0.0.1:\(server.port)")
            #expect(requests[1].header("Missing") == nil)
            #expect(server.getRequests.count == 1)
        }
    }

    @Test func enqueuedFaultsApplyOnce() async throws {
        let res = serverTestResource()
        try await withTestHTTPServer(serving: res) { server in
            server.enqueueFaults(TestFaults(status: 503, retryAfter: "2"))
            let head = try await runCurl(["-I"], url: server.url())
            #expect(head.status == 200)  // HEAD does not consume the queued fault
            let first = try await runCurl([], url: server.url())
            #expect(first.status == 503)
            #expect(first.header("Retry-After") == "2")
            #expect(first.header("Content-Type")?.hasPrefix("text/html") == true)
            let second = try await runCurl([], url: server.url())
            #expect(second.status == 200)
            #expect(second.body == res.body)

            server.faults = TestFaults(status: 404)
            let always1 = try await runCurl([], url: server.url())
            let always2 = try await runCurl([], url: server.url())
            #expect(always1.status == 404 && always2.status == 404)
        }
    }

    @Test func handlerOverride() async throws {
        try await withTestHTTPServer(serving: serverTestResource()) { server in
            server.handler = { request, index in
                guard index == 0 else {
                    return nil
                }
                return TestResponse(status: 200, headers: [(name: "X-Index", value: "\(index)")], body: [1, 2, 3])
            }
            let canned = try await runCurl([], url: server.url())
            #expect(canned.header("X-Index") == "0")
            #expect(canned.body == [1, 2, 3])
            let normal = try await runCurl([], url: server.url())
            #expect(normal.body.count == 1000)
        }
    }

    @Test func resourceCanChangeBetweenRequests() async throws {
        try await withTestHTTPServer(serving: serverTestResource()) { server in
            let newBody = makeBody(500, seed: 42)
            server.resource = TestResource(body: newBody, etag: "\"v2\"")
            let result = try await runCurl([], url: server.url())
            #expect(result.body == newBody)
            #expect(result.header("ETag") == "\"v2\"")
            #expect(result.header("Last-Modified") == nil)
        }
    }

    @Test func rangeParsing() {
        #expect(TestHTTPServer.parseSingleByteRange("bytes=0-")! == (first: 0, last: nil))
        #expect(TestHTTPServer.parseSingleByteRange("bytes=5-9")! == (first: 5, last: 9))
        #expect(TestHTTPServer.parseSingleByteRange("bytes=9-5") == nil)
        #expect(TestHTTPServer.parseSingleByteRange("bytes=-5") == nil)
        #expect(TestHTTPServer.parseSingleByteRange("bytes=0-1,3-4") == nil)
        #expect(TestHTTPServer.parseSingleByteRange("items=0-") == nil)
        #expect(TestHTTPServer.parseSingleByteRange("bytes=99999999999999999999999-")?.first == Int.max)
    }
}
