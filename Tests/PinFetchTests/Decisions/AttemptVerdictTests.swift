import Testing

@testable import PinFetch

/// ``AttemptVerdict``: how one GET ended, decided once from what was observed; one row per kind
/// of ending.
struct AttemptVerdictTests {
    static let ok = TransferOutcome(code: 0, message: "", category: .ok)
    static let reset = TransferOutcome(code: 56, message: "Connection reset by peer", category: .network)
    static let strong = Validator(entityTag: #""v1""#, lastModified: nil)

    static func observed(
        _ decision: AnswerDecision?,
        _ ending: AttemptVerdict.Ending = .transfer(ok),
        context: AnswerContext = AnswerContext(),
        from requested: Int64 = 0,
        to offset: Int64 = 1000,
        total: Int64? = 1000,
        received: Int64 = 1000,
        replaced: Bool = true,
        suspect: Bool = false,
        cancelled: Bool = false
    ) -> AttemptVerdict.Observation {
        AttemptVerdict.Observation(
            decision: decision,
            ending: ending,
            context: context,
            requestedOffset: requested,
            offset: offset,
            totalLength: total,
            received: received,
            hasReplaced: replaced,
            wroteSuspectBytes: suspect,
            status: decision == nil ? nil : 200,
            label: "http://m/f",
            cancelled: cancelled
        )
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var label: String
        var observation: AttemptVerdict.Observation
        var verdict: AttemptVerdict
        var expectation: AttemptVerdict.ExpectationChange
        var testDescription: String { self.label }
    }

    static let cases: [Case] = [
        Case(
            label: "a whole body that reached its end is complete",
            observation: observed(.replace(end: 1000, totalLength: 1000)),
            verdict: .complete,
            expectation: .clear
        ),
        Case(
            label: "a body cut off before its announced end is a network failure, retried",
            observation: observed(.replace(end: 1000, totalLength: 1000), to: 600, received: 600),
            verdict: .failed(
                PinFetchError(.network, "http://m/f: body ended at byte 600 of 1000"),
                retryable: true,
                retryAfter: nil
            ),
            expectation: .clear
        ),
        Case(
            label: "a 206 that brought part of the rest is continued",
            observation: observed(.append(skip: 0, end: nil, totalLength: 1000), from: 400, to: 700),
            verdict: .moreToFetch,
            expectation: .clear
        ),
        Case(
            label: "a 206 that brought nothing new is a protocol failure",
            observation: observed(.append(skip: 0, end: nil, totalLength: 1000), from: 400, to: 400, received: 0),
            verdict: .failed(
                PinFetchError(.protocolViolation, "http://m/f: empty range answer at byte 400"),
                retryable: true,
                retryAfter: nil
            ),
            expectation: .clear
        ),
        Case(
            label: "a body framed by its end that fell short of the known length restarts, expecting it again",
            observation: observed(
                .replaceExpecting(length: 1000),
                context: AnswerContext(requestedOffset: 400, validator: strong, totalLength: 1000),
                to: 300,
                received: 300
            ),
            verdict: .startOver("200 of 300 bytes for a representation of 1000 bytes", discard: true),
            expectation: .set(AttemptPlan.Expectation(validator: strong, totalLength: 1000))
        ),
        Case(
            label: "the same short body asked for without Range is a protocol failure",
            observation: observed(.replaceExpecting(length: 1000), to: 300, received: 300),
            verdict: .failed(
                PinFetchError(
                    .protocolViolation,
                    "http://m/f: 200 of 300 bytes for a representation of 1000 bytes",
                    underlying: 200
                ),
                retryable: false,
                retryAfter: nil
            ),
            expectation: .keep
        ),
        Case(
            label: "a 416 at the partial's end finalizes",
            observation: observed(.finalize),
            verdict: .finalize,
            expectation: .keep
        ),
        Case(
            label: "a decision to restart keeps the partial unless its bytes are suspect",
            observation: observed(.restart("206 for another representation (validator changed)")),
            verdict: .startOver("206 for another representation (validator changed)", discard: false),
            expectation: .keep
        ),
        Case(
            label: "a body that ran past its end discards what it wrote",
            observation: observed(.restart("more body bytes than the answer announced"), suspect: true),
            verdict: .startOver("more body bytes than the answer announced", discard: true),
            expectation: .keep
        ),
        Case(
            label: "a 503 with Retry-After is retried after it",
            observation: observed(.retry(.serverResponse, "HTTP 503", retryAfter: 7)),
            verdict: .failed(
                PinFetchError(.serverResponse, "http://m/f: HTTP 503", underlying: 200),
                retryable: true,
                retryAfter: 7
            ),
            expectation: .keep
        ),
        Case(
            label: "a 401 is not retried",
            observation: observed(.fail(.authentication, "HTTP 401 (authentication required)")),
            verdict: .failed(
                PinFetchError(.authentication, "http://m/f: HTTP 401 (authentication required)", underlying: 200),
                retryable: false,
                retryAfter: nil
            ),
            expectation: .keep
        ),
        Case(
            label: "a transfer that broke mid-body names the offset and is retried",
            observation: observed(.replace(end: 1000, totalLength: 1000), .transfer(reset), to: 600),
            verdict: .failed(
                PinFetchError(.network, "http://m/f: Connection reset by peer (at byte 600)", underlying: 56),
                retryable: true,
                retryAfter: nil
            ),
            expectation: .keep
        ),
        Case(
            label: "an aborted transfer of a cancelled run is a cancellation",
            observation: observed(
                .replace(end: 1000, totalLength: 1000),
                .transfer(TransferOutcome(code: 42, message: "Callback aborted", category: .aborted)),
                to: 600,
                cancelled: true
            ),
            verdict: .failed(
                PinFetchError(.cancelled, "http://m/f: cancelled (at byte 600)"),
                retryable: false,
                retryAfter: nil
            ),
            expectation: .keep
        ),
        Case(
            label: "no usable answer after a clean transfer is a protocol failure",
            observation: observed(nil, to: 0, received: 0, replaced: false),
            verdict: .failed(
                PinFetchError(.protocolViolation, "http://m/f: no usable answer"),
                retryable: true,
                retryAfter: nil
            ),
            expectation: .keep
        ),
        Case(
            label: "a segmented phase whose pieces are all in is complete",
            observation: observed(.replace(end: 1000, totalLength: 1000), .segments(.complete, lead: reset)),
            verdict: .complete,
            expectation: .clear
        ),
        Case(
            label: "a phase paused by refused pieces fails, to be retried after Retry-After, its bytes kept",
            observation: observed(
                .replace(end: 1000, totalLength: 1000),
                .segments(.paused("the server answered a piece with HTTP 503", retryAfter: 9), lead: ok),
                to: 500
            ),
            verdict: .failed(
                PinFetchError(.serverResponse, "http://m/f: the server answered a piece with HTTP 503 (at byte 500)"),
                retryable: true,
                retryAfter: 9
            ),
            expectation: .keep
        ),
        Case(
            label: "a piece of another representation starts over, discarding the partial",
            observation: observed(
                .replace(end: 1000, totalLength: 1000),
                .segments(.representationChanged("a piece's 206 carries another validator"), lead: ok),
                to: 500
            ),
            verdict: .startOver("a piece's 206 carries another validator", discard: true),
            expectation: .keep
        ),
        Case(
            label: "a phase that stopped goes on over one stream from its prefix",
            observation: observed(
                .replace(end: 1000, totalLength: 1000),
                .segments(.stopped("bytes 500-999: the answer ended at byte 600"), lead: ok),
                to: 500
            ),
            verdict: .failed(
                PinFetchError(
                    .network,
                    "http://m/f: bytes 500-999: the answer ended at byte 600 (at byte 500)",
                    underlying: 0
                ),
                retryable: true,
                retryAfter: nil
            ),
            expectation: .keep
        ),
        Case(
            label: "a phase that ended early for the lead's failure reports the lead's",
            observation: observed(.replace(end: 1000, totalLength: 1000), .segments(.endedEarly, lead: reset), to: 500),
            verdict: .failed(
                PinFetchError(.network, "http://m/f: Connection reset by peer (at byte 500)", underlying: 56),
                retryable: true,
                retryAfter: nil
            ),
            expectation: .keep
        ),
    ]

    @Test(arguments: Self.cases)
    func `each kind of ending has one verdict`(_ row: Case) {
        let (verdict, expectation) = AttemptVerdict.decide(row.observation)
        #expect(verdict == row.verdict)
        #expect(expectation == row.expectation)
    }
}
