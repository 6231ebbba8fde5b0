import Testing

@testable import PinFetch

/// ``PieceDecision``: one row per kind of answer to a piece's ranged GET (RFC 9110 §14.4,
/// §15.3.7), the ones real servers get wrong included.
struct PieceDecisionTests {
    static let strong = Validator(entityTag: #""v1""#, lastModified: nil)
    static let request = PieceDecision.Request(validator: strong, length: 1000, wanted: 200..<400)
    static var other: PieceDecision.Request {
        var request = Self.request
        request.otherMirror = true
        return request
    }

    static func head(_ status: Int, _ fields: [(String, String)]) -> ResponseHead {
        ResponseHead(status: status, fields: fields.map { (name: $0.0, value: $0.1) })
    }

    static let etag = ("ETag", #""v1""#)

    struct Case: Sendable, CustomTestStringConvertible {
        var label: String
        var head: ResponseHead
        var request: PieceDecision.Request
        var expected: PieceDecision
        var testDescription: String { self.label }
    }

    static let cases: [Case] = [
        Case(
            label: "the exact range of the same representation is taken",
            head: head(206, [etag, ("Content-Range", "bytes 200-399/1000"), ("Content-Length", "200")]),
            request: request,
            expected: .take(slowDown: false)
        ),
        Case(
            label: "a shorter range from the start of the piece is taken (the rest is asked for again)",
            head: head(206, [etag, ("Content-Range", "bytes 200-299/1000")]),
            request: request,
            expected: .take(slowDown: false)
        ),
        Case(
            label: "Retry-After on a taken piece asks for fewer connections",
            head: head(206, [etag, ("Content-Range", "bytes 200-399/1000"), ("Retry-After", "5")]),
            request: request,
            expected: .take(slowDown: true)
        ),
        Case(
            label: "a 206 that starts elsewhere stops the phase",
            head: head(206, [etag, ("Content-Range", "bytes 100-399/1000")]),
            request: request,
            expected: .stop(.failed("a piece's 206 does not cover the range asked for"))
        ),
        Case(
            label: "a 206 that runs past the piece stops the phase",
            head: head(206, [etag, ("Content-Range", "bytes 200-499/1000")]),
            request: request,
            expected: .stop(.failed("a piece's 206 does not cover the range asked for"))
        ),
        Case(
            label: "a 206 with another validator is another representation",
            head: head(206, [("ETag", #""v2""#), ("Content-Range", "bytes 200-399/1000")]),
            request: request,
            expected: .stop(.representationChanged("a piece's 206 carries another validator"))
        ),
        Case(
            label: "a 206 without a validator cannot be tied to the file",
            head: head(206, [("Content-Range", "bytes 200-399/1000")]),
            request: request,
            expected: .stop(.failed("a piece's 206 carries no validator"))
        ),
        Case(
            label: "a 206 of another length is another representation",
            head: head(206, [etag, ("Content-Range", "bytes 200-399/2000")]),
            request: request,
            expected: .stop(.representationChanged("a piece's 206 names another length"))
        ),
        Case(
            label: "a 206 with a complete length of * does not say the file's length",
            head: head(206, [etag, ("Content-Range", "bytes 200-399/*")]),
            request: request,
            expected: .stop(.failed("a piece's 206 does not say the file's length"))
        ),
        Case(
            label: "a 206 with a content coding is never taken",
            head: head(206, [etag, ("Content-Range", "bytes 200-399/1000"), ("Content-Encoding", "gzip")]),
            request: request,
            expected: .stop(.failed("a piece's 206 does not cover the range asked for"))
        ),
        Case(
            label: "a 200 with the same validator and length: the server ignores Range",
            head: head(200, [etag, ("Content-Length", "1000")]),
            request: request,
            expected: .stop(.failed("the server answered a ranged request with the whole file (200)"))
        ),
        Case(
            label: "a 200 with another validator: If-Range failed, the file changed",
            head: head(200, [("ETag", #""v2""#), ("Content-Length", "1000")]),
            request: request,
            expected: .stop(
                .representationChanged("a piece's answer was for another representation (200, validator changed)")
            )
        ),
        Case(
            label: "503 and 429 refuse the piece, with Retry-After",
            head: head(503, [("Retry-After", "3")]),
            request: request,
            expected: .refused(status: 503, retryAfter: 3)
        ),
        Case(
            label: "another status stops the phase",
            head: head(404, []),
            request: request,
            expected: .stop(.failed("a piece's answer was HTTP 404"))
        ),
        Case(
            label: "another mirror's 206 is judged by its range and length, not its validator",
            head: head(206, [("ETag", #""other""#), ("Content-Range", "bytes 200-399/1000")]),
            request: other,
            expected: .take(slowDown: false)
        ),
        Case(
            label: "another mirror's 206 of another length fails that mirror, not the phase's representation",
            head: head(206, [("Content-Range", "bytes 200-399/2000")]),
            request: other,
            expected: .stop(.failed("another mirror's 206 names another length (2000 bytes)"))
        ),
        Case(
            label: "another mirror's 200 to a ranged request fails that mirror",
            head: head(200, [("Content-Length", "1000")]),
            request: other,
            expected: .stop(.failed("another mirror answered a ranged request with HTTP 200"))
        ),
    ]

    @Test(arguments: Self.cases)
    func `each kind of piece answer has one decision`(_ row: Case) {
        #expect(PieceDecision.decide(row.head, row.request) == row.expected)
    }
}
