import Testing

@testable import PinFetch

/// The answer to the ranged GET: one row per kind of answer, the ones real servers get wrong
/// included. The same kinds run end to end in `AnswerEndToEndTests`.
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
    /// A well-formed `Repr-Digest` sha-256 member (of no particular bytes).
    static let reprDigest = "sha-256=:" + String(repeating: "A", count: 43) + "=:"

    static let cases: [Case] = [
        // 304 (a proxy or server that answers a ranged GET with Not Modified)
        Case(
            label: "304 to a ranged GET: once more from byte 0",
            head: head(304, [etagField]),
            context: ranged,
            expected: .restart("HTTP 304 (Not Modified) to a ranged GET, which asked no condition it answers")
        ),
        Case(
            label: "304 to a GET without Range: a protocol error",
            head: head(304, [etagField]),
            context: again,
            expected: .fail(.protocolViolation, "HTTP 304 (Not Modified) to a GET without a condition")
        ),
        // 304 to a refresh's If-None-Match (RFC 9110 §15.4.5)
        Case(
            label: "304 to a refresh's condition: unchanged",
            head: head(304, [etagField]),
            context: AnswerContext(condition: strong),
            expected: .unchanged
        ),
        Case(
            label: "304 without a validator to a refresh's condition: asked again without it",
            head: head(304),
            context: AnswerContext(condition: strong),
            expected: .restart("HTTP 304 (Not Modified) that does not name the validator asked about")
        ),
        Case(
            label: "304 with the Last-Modified an If-Modified-Since named: unchanged",
            head: head(304, [("Last-Modified", "Sat, 01 Jan 2000 00:00:00 GMT")]),
            context: AnswerContext(
                condition: Validator(
                    entityTag: nil,
                    lastModified: "Sat, 01 Jan 2000 00:00:00 GMT",
                    date: "Sun, 02 Jan 2000 00:00:00 GMT"
                )
            ),
            expected: .unchanged
        ),
        Case(
            label: "304 with another ETag than the condition named: asked again without it",
            head: head(304, [("ETag", #""v2""#)]),
            context: AnswerContext(condition: strong),
            expected: .restart("HTTP 304 (Not Modified) that does not name the validator asked about")
        ),
        Case(
            label: "304 with a weak ETag to a strong condition: asked again without it",
            head: head(304, [("ETag", #"W/"v1""#)]),
            context: AnswerContext(condition: strong),
            expected: .restart("HTTP 304 (Not Modified) that does not name the validator asked about")
        ),
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
            label: "200 with the If-Range ETag, pinned (a CDN that drops Range): continued, the pin decides",
            head: head(200, [etagField, ("Content-Length", "1000")]),
            context: AnswerContext(requestedOffset: 400, validator: strong, totalLength: 1000, pinned: true),
            expected: .append(skip: 400, end: 1000, totalLength: 1000)
        ),
        Case(
            label: "200 with the If-Range Last-Modified, pinned: a date is a weaker claim, from byte 0",
            head: head(200, [("Last-Modified", "Sun, 06 Nov 1994 08:49:37 GMT"), ("Content-Length", "1000")]),
            context: AnswerContext(
                requestedOffset: 400,
                validator: Validator(
                    entityTag: nil,
                    lastModified: "Sun, 06 Nov 1994 08:49:37 GMT",
                    date: "Sun, 06 Nov 1994 09:00:00 GMT"
                ),
                totalLength: 1000,
                pinned: true
            ),
            expected: .replace(end: 1000, totalLength: 1000)
        ),
        Case(
            label: "200 to a ranged request with the If-Range ETag, chunked: it may be a slice, so from byte 0",
            head: head(200, [etagField]),
            context: ranged,
            expected: .replaceExpecting(length: 1000)
        ),
        Case(
            label: "200 with the If-Range ETag when the length was never known: from byte 0",
            head: head(200, [etagField, ("Content-Length", "1000")]),
            context: AnswerContext(requestedOffset: 400, validator: strong, pinned: true),
            expected: .replace(end: 1000, totalLength: 1000)
        ),
        Case(
            label: "200 to a ranged request with a weak ETag of the same value: the whole again",
            head: head(200, [("ETag", "W/" + AnswerDecisionTests.etag), ("Content-Length", "1000")]),
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
    ]

    @Test(arguments: Self.cases + Self.partialContentCases + Self.otherStatusCases)
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
