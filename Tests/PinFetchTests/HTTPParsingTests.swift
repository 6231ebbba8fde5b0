import Foundation
import Testing

@_spi(CLI) @testable import PinFetch

/// `Content-Range` (RFC 9110 §14.4): ranges, unsatisfied ranges and 64-bit lengths.
struct ContentRangeTests {
    struct Valid: Sendable, CustomTestStringConvertible {
        var value: String
        var first: Int64?
        var last: Int64?
        var completeLength: Int64?
        var testDescription: String { "'\(self.value)'" }
    }

    static let valid = [
        Valid(value: "bytes 0-0/1", first: 0, last: 0, completeLength: 1),
        Valid(value: "bytes 397312-1048575/1048576", first: 397_312, last: 1_048_575, completeLength: 1_048_576),
        Valid(value: "bytes 0-99/*", first: 0, last: 99, completeLength: nil),
        Valid(value: "BYTES 5-9/10", first: 5, last: 9, completeLength: 10),
        Valid(value: " bytes 1-2/3 ", first: 1, last: 2, completeLength: 3),
        Valid(value: "bytes */1048576", first: nil, last: nil, completeLength: 1_048_576),
        Valid(value: "bytes */0", first: nil, last: nil, completeLength: 0),
        Valid(
            value: "bytes 4294967296-8589934591/8589934592",
            first: 4_294_967_296,
            last: 8_589_934_591,
            completeLength: 8_589_934_592
        ),
        Valid(
            value: "bytes 0-4294967296/4294967297",
            first: 0,
            last: 4_294_967_296,
            completeLength: 4_294_967_297
        ),
        Valid(
            value: "bytes 999999999999999997-999999999999999998/999999999999999999",
            first: 999_999_999_999_999_997,
            last: 999_999_999_999_999_998,
            completeLength: 999_999_999_999_999_999
        ),
    ]

    @Test(arguments: Self.valid)
    func `valid Content-Range values parse`(valid: Valid) throws {
        let range = try #require(ContentRange(valid.value))
        #expect(range.first == valid.first)
        #expect(range.last == valid.last)
        #expect(range.completeLength == valid.completeLength)
        if let first = valid.first, let last = valid.last {
            #expect(range.count == last - first + 1)
        } else {
            #expect(range.count == nil)
        }
    }

    @Test(arguments: [
        "",
        "bytes",
        "bytes ",
        "bytes 5-3/10",
        "bytes 0-10/10",
        "bytes 0-0/0",
        "bytes 10-10/10",
        "0-1/2",
        "items 0-1/2",
        "bytes=0-1/2",
        "bytes\t0-1/2",
        "bytes -1-5/10",
        "bytes 0--5/10",
        "bytes 0-5/-10",
        "bytes +1-5/10",
        "bytes 0-1/+2",
        "bytes 0-1",
        "bytes 0-/10",
        "bytes -5/10",
        "bytes 1-2-3/10",
        "bytes 0-1/2/3",
        "bytes 0 - 1/2",
        "bytes 0-1 /2",
        "bytes 0-1/ 2",
        "bytes 0-1/2 3",
        "bytes 0-1/2x",
        "bytes 0x0-0x1/0x2",
        "bytes */*",
        "bytes *",
        "bytes */",
        "bytes 0-9/1000000000000000000",  // 19 digits
        "bytes 0-9223372036854775806/9223372036854775807",
        "bytes 0-1/99999999999999999999999",
        "bytes 0-1/\u{0662}",  // ARABIC-INDIC DIGIT TWO
    ])
    func `malformed Content-Range values are rejected`(value: String) {
        #expect(ContentRange(value) == nil)
    }
}

/// HTTP-dates (RFC 9110 §5.6.7): the three forms a recipient must accept, and what is not one.
struct HTTPDateTests {
    /// 1994-11-06T08:49:37Z, the RFC's own example.
    static let example: Int64 = 784_111_777

    @Test(arguments: [
        "Sun, 06 Nov 1994 08:49:37 GMT",
        "Sunday, 06-Nov-94 08:49:37 GMT",
        "Sun Nov  6 08:49:37 1994",
        "Sun Nov 06 08:49:37 1994",
    ])
    func `the three RFC 9110 forms give the same instant`(text: String) {
        #expect(HTTPDate.parse(text) == Self.example)
    }

    @Test(arguments: [
        ("Thu, 01 Jan 1970 00:00:00 GMT", Int64(0)),
        ("Wed, 31 Dec 1969 23:59:59 GMT", -1),
        ("Thu, 29 Feb 2024 00:00:00 GMT", 1_709_164_800),
        ("Tue, 29 Feb 2000 12:00:00 GMT", 951_825_600),
        ("Thu, 01 Jan 2026 00:00:00 GMT", 1_767_225_600),
        ("Fri, 31 Dec 9999 23:59:59 GMT", 253_402_300_799),
        ("Thursday, 01-Jan-26 00:00:00 GMT", 1_767_225_600),
        ("Thu Feb 29 00:00:00 2024", 1_709_164_800),
    ])
    func `HTTP-dates convert to seconds since the epoch`(text: String, seconds: Int64) {
        #expect(HTTPDate.parse(text) == seconds)
    }

    @Test(arguments: [
        "2/29/24 11:29 AM",
        "",
        " ",
        "Mon, 32 Jan 2024 00:00:00 GMT",
        "Mon, 00 Jan 2024 00:00:00 GMT",
        "Fri, 30 Feb 2024 00:00:00 GMT",
        "Thu, 29 Feb 2023 00:00:00 GMT",
        "Thu, 29 Feb 1900 00:00:00 GMT",
        "Thu, 31 Apr 2024 00:00:00 GMT",
        "Thu, 01 Jan 1970 25:00:00 GMT",
        "Thu, 01 Jan 1970 24:00:00 GMT",
        "Thu, 01 Jan 1970 00:60:00 GMT",
        "Thu, 01 Jan 1970 00:00:61 GMT",
        "Thu, 01 Jan 1970 0:00:00 GMT",
        "Thu, 01 Jan 1970 00:00 GMT",
        "Sun, 06 Nov 1994 08:49:37 PST",
        "Sun, 06 Nov 1994 08:49:37 UTC",
        "Sun, 06 Nov 1994 08:49:37 +0000",
        "Sun, 06 Nov 1994 08:49:37",
        "Sun, 06 Foo 1994 08:49:37 GMT",
        "Sun, 6 Nov 1994 08:49:37 GMT",
        "Sun, 06 Nov 94 08:49:37 GMT",
        "Xyz, 06 Nov 1994 08:49:37 GMT",
        "Sunday, 06 Nov 1994 08:49:37 GMT",
        "Sun, 06-Nov-94 08:49:37 GMT",
        "Sunday, 06-Nov-1994 08:49:37 GMT",
        "Sunday, 06-Nov-94 08:49:37 PST",
        "Sunday, 06-Nov-+4 08:49:37 GMT",
        "Sunday, 6-Nov-94 08:49:37 GMT",
        "Sun Nov  6 08:49:37 94",
        "Sun Nov 106 08:49:37 1994",
        "Sun Nov  6 08:49:37 1994 GMT",
        "Sun, 06 Nov 1899 08:49:37 GMT",
        "Sun, 06 Nov 1994 08:49:37 GMT extra",
        "1994-11-06T08:49:37Z",
        "784111777",
    ])
    func `anything that is not an HTTP-date is nil`(text: String) {
        #expect(HTTPDate.parse(text) == nil)
    }

    @Test(arguments: [(94, 1994), (75, 2075), (76, 2076), (77, 1977), (26, 2026), (0, 2000)])
    func `an RFC 850 two-digit year more than 50 years ahead is in the past century`(yy: Int, year: Int) {
        let text = "Sunday, 01-Jan-\(yy < 10 ? "0" : "")\(yy) 00:00:00 GMT"
        let expected = HTTPDate.parse("Sun, 01 Jan \(year) 00:00:00 GMT")
        #expect(expected != nil)
        #expect(HTTPDate.parse(text, currentYear: 2026) == expected)
    }
}

/// Validators (RFC 9110 §8.8): strong and weak ETags, strong Last-Modified, `If-Range`.
struct ValidatorTests {
    static let modified = "Sun, 06 Nov 1994 08:49:37 GMT"
    static let oneSecondLater = "Sun, 06 Nov 1994 08:49:38 GMT"

    @Test(arguments: [#""abc""#, #""""#, "\"a!#~\\\u{80}\"", #""d41d8cd98f00b204e9800998ecf8427e""#])
    func `a strong ETag goes into If-Range`(tag: String) {
        let validator = Validator(entityTag: tag, lastModified: nil)
        #expect(validator.entityTag == tag)
        #expect(validator.hasStrongEntityTag)
        #expect(validator.ifRangeValue == tag)
    }

    @Test(arguments: [#"W/"abc""#, #"W/"""#])
    func `a weak ETag never goes into If-Range, even with a strong Last-Modified`(tag: String) {
        let validator = Validator(entityTag: tag, lastModified: Self.modified, date: Self.oneSecondLater)
        #expect(validator.entityTag == tag)
        #expect(!validator.hasStrongEntityTag)
        #expect(validator.lastModifiedIsStrong)
        #expect(validator.ifRangeValue == nil)
    }

    @Test(arguments: [
        "abc", #""abc"#, #"abc""#, "\"", "", #""a b""#, #""a"b""#, #"w/"abc""#, "W/abc", #"W/"abc"#, "W/",
        #" "abc""#, "\"a\u{7F}\"",
    ])
    func `a malformed ETag counts as absent`(tag: String) {
        let alone = Validator(entityTag: tag, lastModified: nil)
        #expect(alone.entityTag == nil)
        #expect(!alone.hasStrongEntityTag)
        #expect(alone.ifRangeValue == nil)
        // Absent, so a strong Last-Modified is the validator.
        let dated = Validator(entityTag: tag, lastModified: Self.modified, date: Self.oneSecondLater)
        #expect(dated.entityTag == nil)
        #expect(dated.ifRangeValue == Self.modified)
    }

    @Test(arguments: [
        ("Sun, 06 Nov 1994 08:49:38 GMT", true),
        ("Sunday, 06-Nov-94 08:49:38 GMT", true),
        ("Mon, 07 Nov 1994 00:00:00 GMT", true),
        ("Thu, 01 Jan 2026 00:00:00 GMT", true),
        ("Sun, 06 Nov 1994 08:49:37 GMT", false),
        ("Sun, 06 Nov 1994 08:49:36 GMT", false),
        ("not a date", false),
        ("", false),
    ])
    func `Last-Modified is strong only when Date is at least one second later`(date: String, strong: Bool) {
        let validator = Validator(entityTag: nil, lastModified: Self.modified, date: date)
        #expect(validator.lastModified == Self.modified)
        #expect(validator.lastModifiedIsStrong == strong)
        #expect(validator.ifRangeValue == (strong ? Self.modified : nil))
    }

    @Test func `Last-Modified without a Date is not strong`() {
        let validator = Validator(entityTag: nil, lastModified: Self.modified)
        #expect(validator.lastModified == Self.modified)
        #expect(!validator.lastModifiedIsStrong)
        #expect(validator.ifRangeValue == nil)
    }

    @Test func `a Last-Modified in year 9999 is not strong against a 2026 Date`() {
        let validator = Validator(
            entityTag: nil,
            lastModified: "Fri, 31 Dec 9999 23:59:59 GMT",
            date: "Thu, 01 Jan 2026 00:00:00 GMT"
        )
        #expect(validator.lastModified != nil)
        #expect(!validator.lastModifiedIsStrong)
        #expect(validator.ifRangeValue == nil)
    }

    @Test(arguments: ["yesterday", "", "2/29/24 11:29 AM"])
    func `a Last-Modified that is not an HTTP-date counts as absent`(value: String) {
        let validator = Validator(entityTag: nil, lastModified: value, date: Self.oneSecondLater)
        #expect(validator.lastModified == nil)
        #expect(!validator.lastModifiedIsStrong)
        #expect(validator.ifRangeValue == nil)
    }

    @Test func `a strong ETag wins over a strong Last-Modified`() {
        let validator = Validator(entityTag: #""v1""#, lastModified: Self.modified, date: Self.oneSecondLater)
        #expect(validator.ifRangeValue == #""v1""#)
    }

    struct Comparison: Sendable, CustomTestStringConvertible {
        var label: String
        var mine: Validator
        var theirs: Validator
        var expected: Bool?
        var testDescription: String { self.label }
    }

    static func tag(_ value: String?, _ modified: String? = nil, date: String? = nil) -> Validator {
        Validator(entityTag: value, lastModified: modified, date: date)
    }

    /// A strong `Last-Modified`: `Date` is an hour later.
    static func strongDate(_ modified: String, tag value: String? = nil) -> Validator {
        Validator(entityTag: value, lastModified: modified, date: "Sun, 06 Nov 1994 09:49:37 GMT")
    }

    static let later = "Sun, 06 Nov 1994 09:00:00 GMT"
    static let md5 = #""d41d8cd98f00b204e9800998ecf8427e""#
    static let comparisons: [Comparison] = [
        Comparison(label: "same strong ETag", mine: Self.tag(#""a""#), theirs: Self.tag(#""a""#), expected: true),
        Comparison(label: "other strong ETag", mine: Self.tag(#""a""#), theirs: Self.tag(#""b""#), expected: false),
        Comparison(label: "now weak", mine: Self.tag(#""a""#), theirs: Self.tag(#"W/"a""#), expected: false),
        Comparison(label: "their ETag absent", mine: Self.tag(#""a""#), theirs: Self.tag(nil), expected: nil),
        Comparison(label: "their ETag malformed", mine: Self.tag(#""a""#), theirs: Self.tag("a"), expected: nil),
        Comparison(
            label: "strong ETag decides over Last-Modified",
            mine: Self.strongDate(Self.modified, tag: #""a""#),
            theirs: Self.strongDate(Self.later, tag: #""a""#),
            expected: true
        ),
        Comparison(
            label: "MD5-looking ETags are opaque: case matters",
            mine: Self.tag(Self.md5),
            theirs: Self.tag(Self.md5.uppercased()),
            expected: false
        ),
        Comparison(
            label: "MD5-looking ETag equal as a tag",
            mine: Self.tag(Self.md5),
            theirs: Self.tag(Self.md5),
            expected: true
        ),
        Comparison(label: "weak never ties", mine: Self.tag(#"W/"a""#), theirs: Self.tag(#"W/"a""#), expected: false),
        Comparison(label: "weak vs strong", mine: Self.tag(#"W/"a""#), theirs: Self.tag(#""a""#), expected: false),
        Comparison(label: "no validator", mine: Self.tag(nil), theirs: Self.tag(nil), expected: false),
        Comparison(
            label: "weak ETag with a strong Last-Modified never ties",
            mine: Self.strongDate(Self.modified, tag: #"W/"a""#),
            theirs: Self.strongDate(Self.modified, tag: #"W/"a""#),
            expected: false
        ),
        Comparison(
            label: "weak Last-Modified never ties",
            mine: Self.tag(nil, Self.modified),
            theirs: Self.tag(nil, Self.modified),
            expected: false
        ),
        Comparison(
            label: "same strong Last-Modified",
            mine: Self.strongDate(Self.modified),
            theirs: Self.tag(nil, Self.modified),
            expected: true
        ),
        Comparison(
            label: "same instant, RFC 850 form",
            mine: Self.strongDate(Self.modified),
            theirs: Self.tag(nil, "Sunday, 06-Nov-94 08:49:37 GMT"),
            expected: true
        ),
        Comparison(
            label: "changed Last-Modified",
            mine: Self.strongDate(Self.modified),
            theirs: Self.tag(nil, Self.later),
            expected: false
        ),
        Comparison(
            label: "Last-Modified absent now",
            mine: Self.strongDate(Self.modified),
            theirs: Self.tag(nil),
            expected: nil
        ),
        Comparison(
            label: "server switched to a strong ETag",
            mine: Self.strongDate(Self.modified),
            theirs: Self.tag(#""a""#, Self.modified),
            expected: false
        ),
    ]

    @Test(arguments: Self.comparisons)
    func `matches compares the If-Range validator strongly`(comparison: Comparison) {
        #expect(comparison.mine.matches(comparison.theirs) == comparison.expected)
    }
}

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

/// `Retry-After` (RFC 9110 §10.2.3).
struct RetryAfterTests {
    static let date = "Sun, 06 Nov 1994 08:49:37 GMT"
    static let now = Date(timeIntervalSince1970: 784_111_777)

    @Test(arguments: [("120", 120.0), ("0", 0), (" 5 ", 5), ("3600", 3600), ("0000000007", 7)])
    func `delay-seconds are taken as they are`(value: String, seconds: Double) {
        #expect(RetryAfter.seconds(value, date: nil, now: Self.now) == seconds)
        #expect(RetryAfter.seconds(value, date: Self.date, now: Self.now) == seconds)
    }

    @Test(arguments: [
        ("Sun, 06 Nov 1994 08:50:37 GMT", 60.0),
        ("Sunday, 06-Nov-94 08:49:47 GMT", 10),
        ("Sun Nov  6 09:49:37 1994", 3600),
        ("Sun, 06 Nov 1994 08:49:37 GMT", 0),
        ("Sun, 06 Nov 1994 08:00:00 GMT", 0),
    ])
    func `an HTTP-date is relative to the response's Date`(value: String, seconds: Double) {
        // The machine's clock is a day off: the Date header decides.
        let skewed = Self.now.addingTimeInterval(86_400)
        #expect(RetryAfter.seconds(value, date: Self.date, now: skewed) == seconds)
    }

    @Test func `an HTTP-date without a usable Date header is relative to now`() {
        let value = "Sun, 06 Nov 1994 08:51:37 GMT"
        #expect(RetryAfter.seconds(value, date: nil, now: Self.now) == 120)
        #expect(RetryAfter.seconds(value, date: "garbage", now: Self.now) == 120)
    }

    @Test(arguments: ["", "-1", "1.5", "soon", "+5", "5s", "2/29/24 11:29 AM"])
    func `anything else is nil`(value: String) {
        #expect(RetryAfter.seconds(value, date: Self.date, now: Self.now) == nil)
    }
}
