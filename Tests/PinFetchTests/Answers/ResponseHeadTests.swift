import Foundation
import Testing

@testable import PinFetch

/// The status line and header fields libcurl hands over.
struct ResponseHeadTests {
    static func head(_ lines: [String], status: String = "HTTP/1.1 200 OK") throws -> ResponseHead {
        var head = try #require(ResponseHead(statusLine: status))
        for line in lines { head.add(line: line) }
        return head
    }

    @Test(arguments: [
        ("HTTP/1.1 206 Partial Content", 206),
        ("HTTP/1.1 200 OK", 200),
        ("HTTP/2 200", 200),
        ("HTTP/1.0 416 Range Not Satisfiable\r\n", 416),
        ("HTTP/1.1 404", 404),
        ("HTTP/3 503 Service Unavailable", 503),
    ])
    func `status lines give their code`(line: String, status: Int) throws {
        let head = try #require(ResponseHead(statusLine: line))
        #expect(head.status == status)
        #expect(head.fields.isEmpty)
    }

    @Test(arguments: [
        "", "HTTP/1.1", "HTTP/1.1 OK", "HTTP/1.1 20 OK", "HTTP/1.1 2000 OK", "HTTP/1.1 abc OK", "ICY 200 OK",
        "http/1.1 200 OK", "200 OK", "HTTP/1.1 +20 OK", "HTTP/1.1 -20 OK",
    ])
    func `malformed status lines are nil`(line: String) {
        #expect(ResponseHead(statusLine: line) == nil)
    }

    @Test func `header lines are trimmed, names lower-cased, lines without a colon ignored`() throws {
        let head = try Self.head([
            "Content-Length:  42 \r\n", "ETag:\t\"x\"\r\n", "no colon here", ": empty name", "X-Empty:",
            "Location: http://h:8080/a",
        ])
        #expect(head.fields.map(\.name) == ["content-length", "etag", "x-empty", "location"])
        #expect(head.value("content-length") == "42")
        #expect(head.value("etag") == "\"x\"")
        #expect(head.value("x-empty") == "")
        #expect(head.value("location") == "http://h:8080/a")
        #expect(head.value("Content-Length") == nil)
        #expect(head.contentLength == 42)
        #expect(head.validator.entityTag == "\"x\"")
    }

    @Test(
        arguments: [
            ([String](), nil),
            (["Content-Length: 0"], 0),
            (["Content-Length: 1048576"], 1_048_576),
            (["Content-Length: 5368709120"], 5_368_709_120),
            (["Content-Length: 999999999999999999"], 999_999_999_999_999_999),
            (["Content-Length: 10", "content-length: 10"], 10),
            (["Content-Length: 10", "Content-Length: 11"], nil),
            (["Content-Length: 10, 10"], 10),
            (["Content-Length: 10, 11"], nil),
            (["Content-Length: 10,"], nil),
            (["Content-Length: 10", "Transfer-Encoding: chunked"], nil),
            (["Content-Length: -1"], nil),
            (["Content-Length: +1"], nil),
            (["Content-Length: 12a"], nil),
            (["Content-Length: 0x10"], nil),
            (["Content-Length:"], nil),
            (["Content-Length: 1 2"], nil),
            (["Content-Length: 1000000000000000000"], nil),
        ] as [([String], Int64?)]
    )
    func `Content-Length is one decimal value, or a list of the same value`(lines: [String], expected: Int64?) throws {
        #expect(try Self.head(lines).contentLength == expected)
    }

    @Test(arguments: [
        ([String](), false),
        (["Content-Encoding: identity"], false),
        (["Content-Encoding: Identity"], false),
        (["Content-Encoding: identity, identity"], false),
        (["Content-Encoding: gzip"], true),
        (["Content-Encoding: br"], true),
        (["Content-Encoding: identity, gzip"], true),
        (["Content-Encoding: identity", "Content-Encoding: gzip"], true),
        (["Transfer-Encoding: chunked"], false),
    ])
    func `only a coding other than identity counts`(lines: [String], coded: Bool) throws {
        #expect(try Self.head(lines).hasContentCoding == coded)
    }

    @Test(arguments: [
        ([String](), false),
        (["Content-Type: multipart/byteranges; boundary=THIS_STRING_SEPARATES"], true),
        (["Content-Type: Multipart/ByteRanges;boundary=x"], true),
        (["Content-Type: application/octet-stream"], false),
        (["Content-Type: multipart/mixed; boundary=x"], false),
    ])
    func `multipart byteranges bodies are recognised`(lines: [String], multipart: Bool) throws {
        #expect(try Self.head(lines, status: "HTTP/1.1 206 Partial Content").isMultipartByteRanges == multipart)
    }

    @Test func `Content-Range comes parsed`() throws {
        let head = try Self.head(["Content-Range: bytes 100-199/1000"], status: "HTTP/1.1 206 Partial Content")
        #expect(head.contentRange == ContentRange("bytes 100-199/1000"))
        #expect(head.contentRange?.first == 100)
        #expect(try Self.head(["Content-Range: bytes 5-3/10"]).contentRange == nil)
    }
}
