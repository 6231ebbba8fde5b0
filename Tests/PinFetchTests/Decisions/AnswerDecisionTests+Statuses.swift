import Testing

@testable import PinFetch

/// The rows of ``AnswerDecisionTests`` for `206` answers, and for `416` and the other statuses.
extension AnswerDecisionTests {
    static let partialContentCases: [Case] = [
        // 206 to a ranged request
        Case(
            label: "206 at the offset",
            head: head(206, [etagField, ("Content-Length", "600"), ("Content-Range", "bytes 400-999/1000")]),
            context: ranged,
            expected: .append(skip: 0, end: 1000, totalLength: 1000)
        ),
        Case(
            label: "206 without a digest of its own for a partial of unchecked pieces",
            head: head(206, [etagField, ("Content-Range", "bytes 400-999/1000")]),
            context: {
                var context = ranged
                context.uncheckedPieces = .sha256
                return context
            }(),
            expected: .restart("206 for a partial of pieces that neither a pin nor a server digest checks")
        ),
        Case(
            label: "206 with a Repr-Digest for a partial of unchecked pieces",
            head: head(206, [etagField, ("Content-Range", "bytes 400-999/1000"), ("Repr-Digest", reprDigest)]),
            context: {
                var context = ranged
                context.uncheckedPieces = .sha256
                return context
            }(),
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
    ]

    static let otherStatusCases: [Case] = [
        // 416
        Case(
            label: "416 with the partial complete",
            head: head(416, [etagField, ("Content-Range", "bytes */400")]),
            context: AnswerContext(requestedOffset: 400, validator: strong, totalLength: 400),
            expected: .finalize
        ),
        Case(
            label: "416 without a validator, unpinned: it may be of a changed representation",
            head: head(416, [("Content-Range", "bytes */400")]),
            context: AnswerContext(requestedOffset: 400, validator: strong, totalLength: 400),
            expected: .restart(
                "416 without the partial's validator, and no pin: the partial may be of an older version"
            )
        ),
        Case(
            label: "416 without a validator after a HEAD of this run showed the partial's",
            head: head(416, [("Content-Range", "bytes */400")]),
            context: AnswerContext(requestedOffset: 400, validator: strong, totalLength: 400, validatorConfirmed: true),
            expected: .finalize
        ),
        Case(
            label: "416 without a validator, pinned: the pin decides",
            head: head(416, [("Content-Range", "bytes */400")]),
            context: AnswerContext(requestedOffset: 400, validator: strong, totalLength: 400, pinned: true),
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
            expected: .fail(.authentication, "HTTP 407 (proxy authentication required)")
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
}
