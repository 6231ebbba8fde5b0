import Testing

@testable import PinFetch

/// ``AttemptPlan``: what one GET asks for, from what the partial holds (Resume and checkpoints,
/// "The resume decision"): `If-Range` only with a strong validator (RFC 9110 §13.1.5), a plain
/// `Range` only where a pin decides.
struct AttemptPlanTests {
    static let mirror = "http://a.example/f"
    static let strong = Validator(entityTag: #""v1""#, lastModified: nil)
    static let weak = Validator(entityTag: #"W/"v1""#, lastModified: nil)
    static let none = Validator(entityTag: nil, lastModified: nil)
    static let identity = "Accept-Encoding: identity"

    /// A partial of `offset` bytes of a 1000-byte representation from `source`.
    static func partial(
        _ offset: Int64,
        _ validator: Validator? = strong,
        source: String = mirror,
        resumable: Bool = true,
        crossMirror: Bool = false
    ) -> PartialState {
        var state = PartialState(algorithm: .sha256)
        state.offset = offset
        state.validator = validator
        state.source = source
        state.totalLength = 1000
        state.resumable = resumable
        state.crossMirror = crossMirror
        return state
    }

    static func plan(
        _ state: PartialState,
        pinned: Bool = false,
        restartPending: Bool = false,
        expected: AttemptPlan.Expectation? = nil
    ) -> AttemptPlan {
        AttemptPlan.make(
            state,
            mirror: Self.mirror,
            mirrorNumber: 1,
            pinned: pinned,
            restartPending: restartPending,
            expected: expected
        )
    }

    @Test func `nothing held: a plain GET`() {
        #expect(Self.plan(Self.partial(0)) == .ask(headers: [Self.identity], context: AnswerContext(), note: nil))
    }

    @Test func `a partial with a strong validator resumes with Range and If-Range`() {
        var context = AnswerContext(requestedOffset: 400, validator: Self.strong, totalLength: 1000)
        context.pinned = false
        #expect(
            Self.plan(Self.partial(400))
                == .ask(
                    headers: [Self.identity, "Range: bytes=400-", #"If-Range: "v1""#],
                    context: context,
                    note: #"resuming at byte 400 with If-Range "v1""#
                )
        )
    }

    @Test func `a weak validator never resumes, pinned or not`() {
        for pinned in [false, true] {
            #expect(
                Self.plan(Self.partial(400, Self.weak), pinned: pinned)
                    == .startOver("no strong validator to resume with")
            )
        }
    }

    @Test func `no validator at all resumes with a plain Range only with a pin`() {
        #expect(Self.plan(Self.partial(400, Self.none)) == .startOver("no strong validator to resume with"))
        let context = AnswerContext(requestedOffset: 400, totalLength: 1000, pinned: true, unvalidatedPartial: true)
        #expect(
            Self.plan(Self.partial(400, Self.none), pinned: true)
                == .ask(
                    headers: [Self.identity, "Range: bytes=400-"],
                    context: context,
                    note: "resuming at byte 400 without a validator: the pin decides"
                )
        )
    }

    @Test func `another mirror's partial: from byte 0 without a pin, a plain Range with one`() {
        let other = Self.partial(400, source: "http://b.example/f")
        guard case .ask(let headers, _, let note) = Self.plan(other) else {
            Issue.record("no request")
            return
        }
        #expect(headers == [Self.identity])
        #expect(note == "the partial came from http://b.example/f: asking from byte 0")
        let moved = Self.partial(400, source: "http://b.example/f", crossMirror: true)
        #expect(
            Self.plan(moved, pinned: true)
                == .ask(
                    headers: [Self.identity, "Range: bytes=400-"],
                    context: AnswerContext(requestedOffset: 400, totalLength: 1000, pinned: true),
                    note: "resuming at byte 400 on mirror 1 with a plain Range: the pin decides"
                )
        )
    }

    @Test func `a decided restart asks without Range, expecting the same representation's length`() {
        #expect(
            Self.plan(Self.partial(400), restartPending: true)
                == .ask(
                    headers: [Self.identity],
                    context: AnswerContext(validator: Self.strong, totalLength: 1000),
                    note: nil
                )
        )
    }

    @Test func `after a slice sent for the whole, the next GET expects the whole again`() {
        let expected = AttemptPlan.Expectation(validator: Self.strong, totalLength: 1000)
        #expect(
            Self.plan(Self.partial(0), expected: expected)
                == .ask(
                    headers: [Self.identity],
                    context: AnswerContext(validator: Self.strong, totalLength: 1000),
                    note: nil
                )
        )
    }
}
