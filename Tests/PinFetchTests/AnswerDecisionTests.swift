import Testing

@_spi(CLI) @testable import PinFetch

/// DESIGN.md "Answer to the ranged GET": one row per kind of answer, the ones real servers get
/// wrong included (issue 8). The same kinds run end to end in `AnswerEndToEndTests`.
struct AnswerDecisionTests {
    static let etag = #""v1""#
    static let strong = Validator(entityTag: AnswerDecisionTests.etag, lastModified: nil)

    /// A head with `status` and `fields` (names as a server spells them).
    static func head(_ status: Int, _ fields: [(String, String)] = []) -> ResponseHead {
        ResponseHead(status: status, fields: fields.map { (name: $0.0, value: $0.1) })
    }

    /// The context of `Range: bytes=400-` with `If-Range: "v1"` for a 1000-byte representation.
    static let ranged = AnswerContext(requestedOffset: 400, validator: strong, totalLength: 1000)
    /// A request without `Range` and nothing known.
    static let fresh = AnswerContext()
    /// A request without `Range` after a restart for an answer that contradicted 1000 bytes.
    static let again = AnswerContext(validator: strong, totalLength: 1000)
    /// After a move to another mirror: `Range` without `If-Range`, validators not comparable.
    static let crossMirror = AnswerContext(requestedOffset: 400, totalLength: 1000, pinned: true)
    /// A pinned partial from a server that sends no validator: plain `Range`, the pin decides.
    static let unvalidated = AnswerContext(
        requestedOffset: 400,
        totalLength: 1000,
        pinned: true,
        unvalidatedPartial: true
    )

    struct Case: Sendable, CustomTestStringConvertible {
        var label: String
        var head: ResponseHead
        var context: AnswerContext
        var expected: AnswerDecision
        var testDescription: String { self.label }
    }

    static let etagField = ("ETag", AnswerDecisionTests.etag)

    static let cases: [Case] = [
        // 200
        Case(
            label: "200 to a fresh request",
            head: head(200, [etagField, ("Content-Length", "1000")]),
            context: fresh,
            expected: .replace(end: 1000, totalLength: 1000)
        ),
        Case(
            label: "200 to a ranged request: the whole representation again",
            head: head(200, [etagField, ("Content-Length", "1000")]),
            context: ranged,
            expected: .replace(end: 1000, totalLength: 1000)
        ),
        Case(
            label: "200 to a ranged request, changed representation of another length",
            head: head(200, [("ETag", #""v2""#), ("Content-Length", "1200")]),
            context: ranged,
            expected: .replace(end: 1200, totalLength: 1200)
        ),
        Case(
            label: "200 with the requested slice and its Content-Range (an object store)",
            head: head(200, [etagField, ("Content-Length", "600"), ("Content-Range", "bytes 400-999/1000")]),
            context: ranged,
            expected: .append(skip: 0, end: 1000, totalLength: 1000)
        ),
        Case(
            label: "200 with the requested slice, Content-Encoding: identity",
            head: head(
                200,
                [
                    etagField, ("Content-Length", "600"), ("Content-Range", "bytes 400-999/1000"),
                    ("Content-Encoding", "identity"),
                ]
            ),
            context: ranged,
            expected: .append(skip: 0, end: 1000, totalLength: 1000)
        ),
        Case(
            label: "200 with a slice but no Content-Range: restart without Range",
            head: head(200, [etagField, ("Content-Length", "600")]),
            context: ranged,
            expected: .restart("200 of 600 bytes for a representation of 1000 bytes")
        ),
        Case(
            label: "200 with a Content-Range that is not the requested range: restart",
            head: head(200, [etagField, ("Content-Length", "500"), ("Content-Range", "bytes 500-999/1000")]),
            context: ranged,
            expected: .restart("200 with Content-Range 500-999/1000: not the whole representation")
        ),
        Case(
            label: "200 with a slice again after the restart: protocol error",
            head: head(200, [etagField, ("Content-Length", "600")]),
            context: again,
            expected: .fail(.protocolViolation, "200 of 600 bytes for a representation of 1000 bytes")
        ),
        Case(
            label: "200 with a slice's Content-Range to a request without Range: protocol error",
            head: head(200, [etagField, ("Content-Length", "600"), ("Content-Range", "bytes 400-999/1000")]),
            context: fresh,
            expected: .fail(.protocolViolation, "200 with Content-Range 400-999/1000: not the whole representation")
        ),
        Case(
            label: "200 after the restart, another representation: taken",
            head: head(200, [("ETag", #""v2""#), ("Content-Length", "600")]),
            context: again,
            expected: .replace(end: 600, totalLength: 600)
        ),
        Case(
            label: "200 with the whole range in Content-Range",
            head: head(200, [etagField, ("Content-Length", "1000"), ("Content-Range", "bytes 0-999/1000")]),
            context: fresh,
            expected: .replace(end: 1000, totalLength: 1000)
        ),
        Case(
            label: "200 with a Content-Range that does not parse: ignored, as RFC 9110 says",
            head: head(200, [etagField, ("Content-Length", "1000"), ("Content-Range", "bytes junk")]),
            context: fresh,
            expected: .replace(end: 1000, totalLength: 1000)
        ),
        Case(
            label: "200 with the requested range but a Content-Length that does not fit it: restart",
            head: head(200, [etagField, ("Content-Length", "10"), ("Content-Range", "bytes 400-999/1000")]),
            context: ranged,
            expected: .restart("200 with Content-Range 400-999/1000: not the whole representation")
        ),
        Case(
            label: "200 with the requested range for a changed representation: restart",
            head: head(200, [("ETag", #""v2""#), ("Content-Range", "bytes 400-999/1000")]),
            context: ranged,
            expected: .restart("200 with Content-Range 400-999/1000: not the whole representation")
        ),
        Case(
            label: "200 gzip-coded: taken whole, length unknown",
            head: head(200, [etagField, ("Content-Length", "300"), ("Content-Encoding", "gzip")]),
            context: ranged,
            expected: .replace(end: nil, totalLength: nil)
        ),
        Case(
            label: "200 with the requested slice's Content-Range but no Content-Length: restart",
            head: head(200, [etagField, ("Transfer-Encoding", "chunked"), ("Content-Range", "bytes 400-999/1000")]),
            context: ranged,
            expected: .restart("200 with Content-Range 400-999/1000: not the whole representation")
        ),
        Case(
            label: "200 with the requested slice but no ETag: If-Range was not honoured, restart",
            head: head(200, [("Content-Length", "600"), ("Content-Range", "bytes 400-999/1000")]),
            context: ranged,
            expected: .restart("200 with Content-Range 400-999/1000: not the whole representation")
        ),
        Case(
            label: "200 with the requested slice from another mirror: the pin decides",
            head: head(
                200,
                [("ETag", #""other""#), ("Content-Length", "600"), ("Content-Range", "bytes 400-999/1000")]
            ),
            context: crossMirror,
            expected: .append(skip: 0, end: 1000, totalLength: 1000)
        ),
        Case(
            label: "200 chunked to a ranged request, same ETag: it must reach the known total",
            head: head(200, [etagField, ("Transfer-Encoding", "chunked")]),
            context: ranged,
            expected: .replaceExpecting(length: 1000)
        ),
        Case(
            label: "200 close-delimited after the restart, same ETag: it must reach the known total",
            head: head(200, [etagField]),
            context: again,
            expected: .replaceExpecting(length: 1000)
        ),
        Case(
            label: "200 chunked to a ranged request, changed ETag: the new representation",
            head: head(200, [("ETag", #""v2""#), ("Transfer-Encoding", "chunked")]),
            context: ranged,
            expected: .replace(end: nil, totalLength: nil)
        ),
        Case(
            label: "200 chunked to a fresh request",
            head: head(200, [etagField, ("Transfer-Encoding", "chunked")]),
            context: fresh,
            expected: .replace(end: nil, totalLength: nil)
        ),
        // Framing (RFC 9112 §6.3)
        Case(
            label: "Content-Length with Transfer-Encoding: chunked: the length is ignored",
            head: head(200, [etagField, ("Content-Length", "5000"), ("Transfer-Encoding", "chunked")]),
            context: fresh,
            expected: .replace(end: nil, totalLength: nil)
        ),
        Case(
            label: "two identical Content-Length fields",
            head: head(200, [etagField, ("Content-Length", "1000"), ("Content-Length", "1000")]),
            context: fresh,
            expected: .replace(end: 1000, totalLength: 1000)
        ),
        Case(
            label: "one Content-Length field listing the same value twice",
            head: head(200, [etagField, ("Content-Length", "1000, 1000")]),
            context: fresh,
            expected: .replace(end: 1000, totalLength: 1000)
        ),
        Case(
            label: "conflicting Content-Length fields",
            head: head(200, [etagField, ("Content-Length", "1000"), ("Content-Length", "600")]),
            context: fresh,
            expected: .fail(.protocolViolation, "conflicting Content-Length values (1000, 600)")
        ),
        Case(
            label: "conflicting values in one Content-Length field, on a 206",
            head: head(206, [etagField, ("Content-Length", "600, 500"), ("Content-Range", "bytes 400-999/1000")]),
            context: ranged,
            expected: .fail(.protocolViolation, "conflicting Content-Length values (600, 500)")
        ),
        Case(
            label: "a negative Content-Length",
            head: head(200, [("Content-Length", "-1")]),
            context: fresh,
            expected: .fail(.protocolViolation, "malformed Content-Length '-1'")
        ),
        // 206 to a ranged request
        Case(
            label: "206 at the offset",
            head: head(206, [etagField, ("Content-Length", "600"), ("Content-Range", "bytes 400-999/1000")]),
            context: ranged,
            expected: .append(skip: 0, end: 1000, totalLength: 1000)
        ),
        Case(
            label: "206 starting before the offset: the overlap is skipped",
            head: head(206, [etagField, ("Content-Range", "bytes 300-999/1000")]),
            context: ranged,
            expected: .append(skip: 100, end: 1000, totalLength: 1000)
        ),
        Case(
            label: "206 starting after the offset",
            head: head(206, [etagField, ("Content-Range", "bytes 500-999/1000")]),
            context: ranged,
            expected: .restart("206 range 500-999 does not continue at byte 400")
        ),
        Case(
            label: "206 shorter than the rest: appended, the rest asked for next",
            head: head(206, [etagField, ("Content-Range", "bytes 400-699/1000")]),
            context: ranged,
            expected: .append(skip: 0, end: 700, totalLength: 1000)
        ),
        Case(
            label: "206 without Content-Range",
            head: head(206, [etagField, ("Content-Length", "600")]),
            context: ranged,
            expected: .restart("206 without a usable Content-Range (with a complete length)")
        ),
        Case(
            label: "206 with total *",
            head: head(206, [etagField, ("Content-Range", "bytes 400-999/*")]),
            context: ranged,
            expected: .restart("206 without a usable Content-Range (with a complete length)")
        ),
        Case(
            label: "206 for another length",
            head: head(206, [etagField, ("Content-Range", "bytes 400-1199/1200")]),
            context: ranged,
            expected: .restart("206 for a representation of 1200 bytes, not 1000")
        ),
        Case(
            label: "206 with a changed ETag",
            head: head(206, [("ETag", #""v2""#), ("Content-Range", "bytes 400-999/1000")]),
            context: ranged,
            expected: .restart("206 for another representation (validator changed)")
        ),
        Case(
            label: "206 without a validator to an If-Range request: restart",
            head: head(206, [("Content-Range", "bytes 400-999/1000")]),
            context: ranged,
            expected: .restart("206 without a validator")
        ),
        Case(
            label: "206 with a weak ETag to an If-Range request: restart",
            head: head(206, [("ETag", #"W/"v1""#), ("Content-Range", "bytes 400-999/1000")]),
            context: ranged,
            expected: .restart("206 for another representation (validator changed)")
        ),
        Case(
            label: "206 from another mirror with its own ETag: the pin decides",
            head: head(206, [("ETag", #""other""#), ("Content-Range", "bytes 400-999/1000")]),
            context: crossMirror,
            expected: .append(skip: 0, end: 1000, totalLength: 1000)
        ),
        Case(
            label: "206 as multipart/byteranges",
            head: head(206, [etagField, ("Content-Type", "multipart/byteranges; boundary=x")]),
            context: ranged,
            expected: .restart("206 with a multipart/byteranges body")
        ),
        Case(
            label: "206 gzip-coded",
            head: head(206, [etagField, ("Content-Range", "bytes 400-999/1000"), ("Content-Encoding", "gzip")]),
            context: ranged,
            expected: .restart("206 with a Content-Encoding")
        ),
        Case(
            label: "206 whose Content-Length disagrees with its Content-Range",
            head: head(206, [etagField, ("Content-Length", "10"), ("Content-Range", "bytes 400-999/1000")]),
            context: ranged,
            expected: .restart("206 whose Content-Length disagrees with its Content-Range")
        ),
        // A pinned partial saved without any validator
        Case(
            label: "206 without a validator to a plain Range: appended, the pin decides",
            head: head(206, [("Content-Length", "600"), ("Content-Range", "bytes 400-999/1000")]),
            context: unvalidated,
            expected: .append(skip: 0, end: 1000, totalLength: 1000)
        ),
        Case(
            label: "206 that now carries an ETag the partial was saved without: restart",
            head: head(206, [etagField, ("Content-Range", "bytes 400-999/1000")]),
            context: unvalidated,
            expected: .restart("206 with a validator the partial was saved without")
        ),
        Case(
            label: "200 that now carries an ETag: another representation, taken whole",
            head: head(200, [etagField, ("Content-Length", "1200")]),
            context: unvalidated,
            expected: .replace(end: 1200, totalLength: 1200)
        ),
        Case(
            label: "200 without a validator whose length contradicts the partial's: restart",
            head: head(200, [("Content-Length", "600")]),
            context: unvalidated,
            expected: .restart("200 of 600 bytes for a representation of 1000 bytes")
        ),
        // 206 to a request without Range
        Case(
            label: "206 without Range, from 0, numeric total",
            head: head(206, [etagField, ("Content-Range", "bytes 0-999/1000")]),
            context: fresh,
            expected: .replace(end: 1000, totalLength: 1000)
        ),
        Case(
            label: "206 without Range, from 0, total * and a Content-Length",
            head: head(206, [etagField, ("Content-Length", "1000"), ("Content-Range", "bytes 0-999/*")]),
            context: fresh,
            expected: .replace(end: 1000, totalLength: 1000)
        ),
        Case(
            label: "206 without Range, from 0, total *, chunked, with a pin",
            head: head(206, [("Transfer-Encoding", "chunked"), ("Content-Range", "bytes 0-999/*")]),
            context: AnswerContext(pinned: true),
            expected: .replace(end: 1000, totalLength: nil)
        ),
        Case(
            label: "206 without Range, from 0, total *, chunked, no pin",
            head: head(206, [("Transfer-Encoding", "chunked"), ("Content-Range", "bytes 0-999/*")]),
            context: fresh,
            expected: .fail(
                .protocolViolation,
                "206 to a request without Range, of unknown total length and with no pin: it cannot be known complete"
            )
        ),
        Case(
            label: "206 without Range, not from 0",
            head: head(206, [etagField, ("Content-Range", "bytes 400-999/1000")]),
            context: fresh,
            expected: .fail(.protocolViolation, "206 to a request without Range starts at byte 400")
        ),
        Case(
            label: "206 without Range and without Content-Range",
            head: head(206, [etagField, ("Content-Length", "1000")]),
            context: fresh,
            expected: .fail(.protocolViolation, "206 to a request without Range, without a usable Content-Range")
        ),
        // 416
        Case(
            label: "416 with the partial complete",
            head: head(416, [etagField, ("Content-Range", "bytes */400")]),
            context: AnswerContext(requestedOffset: 400, validator: strong, totalLength: 400),
            expected: .finalize
        ),
        Case(
            label: "416 with a stale partial",
            head: head(416, [etagField, ("Content-Range", "bytes */300")]),
            context: ranged,
            expected: .restart("416: the partial (400 bytes) does not match the remote length")
        ),
        Case(
            label: "416 for a changed representation",
            head: head(416, [("ETag", #""v2""#), ("Content-Range", "bytes */400")]),
            context: AnswerContext(requestedOffset: 400, validator: strong, totalLength: 400),
            expected: .restart("416 for a changed representation")
        ),
        Case(
            label: "416 to a request without Range",
            head: head(416, [("Content-Range", "bytes */400")]),
            context: fresh,
            expected: .fail(.protocolViolation, "416 to a request without Range")
        ),
        // Other statuses
        Case(
            label: "401",
            head: head(401),
            context: fresh,
            expected: .fail(.authentication, "HTTP 401 (authentication required)")
        ),
        Case(
            label: "407",
            head: head(407),
            context: fresh,
            expected: .fail(.authentication, "HTTP 407 (authentication required)")
        ),
        Case(label: "404", head: head(404), context: ranged, expected: .fail(.serverResponse, "HTTP 404")),
        Case(
            label: "503 with Retry-After in seconds",
            head: head(503, [("Retry-After", "7")]),
            context: fresh,
            expected: .retry(.serverResponse, "HTTP 503", retryAfter: 7)
        ),
        Case(
            label: "429",
            head: head(429),
            context: fresh,
            expected: .retry(.serverResponse, "HTTP 429", retryAfter: nil)
        ),
        Case(
            label: "408",
            head: head(408),
            context: fresh,
            expected: .retry(.serverResponse, "HTTP 408", retryAfter: nil)
        ),
        Case(label: "204", head: head(204), context: fresh, expected: .fail(.protocolViolation, "unexpected HTTP 204")),
    ]

    @Test(arguments: Self.cases)
    func decision(_ row: Case) {
        #expect(AnswerDecision.decide(row.head, row.context) == row.expected)
    }

    @Test func `a body that must reach the known total and ends short is a slice, not the whole`() {
        let reason = "200 of 600 bytes for a representation of 1000 bytes"
        #expect(AnswerDecision.decideShortBody(length: 1000, received: 600, Self.ranged) == .restart(reason))
        #expect(
            AnswerDecision.decideShortBody(length: 1000, received: 600, Self.again) == .fail(.protocolViolation, reason)
        )
    }
}
