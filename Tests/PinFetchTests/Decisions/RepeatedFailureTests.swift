import Testing

@testable import PinFetch

/// Which final failures the next run learns of, and when its attempt fails "the same way".
struct RepeatedFailureTests {
    @Test(
        arguments: [
            (PinFetchError(.network, "x", underlying: 18), "network/18"),  // a body cut off at once
            (PinFetchError(.network, "x", underlying: 92), "network/92"),  // an HTTP/2 stream error
            (PinFetchError(.network, "x", underlying: 52), "network/52"),  // nothing answered
            (PinFetchError(.protocolViolation, "x"), "protocolViolation/0"),
            (PinFetchError(.serverResponse, "x", underlying: 503), "serverResponse/503"),
            (PinFetchError(.serverResponse, "x", underlying: 416), "serverResponse/416"),
            (PinFetchError(.network, "x", underlying: 7), nil),  // cannot connect: says nothing of the partial
            (PinFetchError(.network, "x", underlying: 6), nil),  // no such host
            (PinFetchError(.network, "x", underlying: 28), nil),  // a timeout
            (PinFetchError(.serverResponse, "x", underlying: 404), nil),
            (PinFetchError(.cancelled, "x"), nil), (PinFetchError(.fileIO, "x"), nil),
            (PinFetchError(.tlsVerification, "x"), nil),
        ] as [(PinFetchError, String?)]
    )
    func `only a failure of the answer is recorded`(error: PinFetchError, signature: String?) {
        #expect(RepeatedFailure.signature(of: error) == signature)
        #expect(RepeatedFailure.record(error, at: 0) == nil)  // at byte 0 there is nothing else to try
    }

    @Test func `the same failure at the same offset without progress repeats; anything else does not`() {
        let broken = PinFetchError(.network, "x", underlying: 18)
        let last = RepeatedFailure.record(broken, at: 400)
        #expect(RepeatedFailure.repeats(last, broken, at: 400, madeProgress: false))
        #expect(!RepeatedFailure.repeats(last, broken, at: 400, madeProgress: true))
        #expect(!RepeatedFailure.repeats(last, broken, at: 500, madeProgress: false))
        #expect(
            !RepeatedFailure.repeats(last, PinFetchError(.network, "x", underlying: 56), at: 400, madeProgress: false)
        )
        #expect(!RepeatedFailure.repeats(nil, broken, at: 400, madeProgress: false))
    }
}
