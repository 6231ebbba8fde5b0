import Testing

@testable import PinFetch

/// The validator a checkpoint records is held to the rules a server's is held to.
extension CheckpointTests {
    /// A forged record's validator must not smuggle headers into `If-Range` (a `Last-Modified`
    /// with CR LF in it would go out as three header lines).
    @Test(arguments: [
        Validator(entityTag: nil, lastModified: nil).with(
            lastModified: "Mon, 01 Jan 2024 00:00:00 GMT\r\nX-Injected: yes",
            strong: true
        ),
        Validator(entityTag: nil, lastModified: nil).with(entityTag: "\"v1\"\r\nX-Injected: yes"),
        Validator(entityTag: nil, lastModified: nil).with(entityTag: "v1"),
        Validator(entityTag: nil, lastModified: nil).with(lastModified: "yesterday", strong: true),
    ])
    func `a record whose validator no server could have sent is ignored`(validator: Validator) {
        #expect(Checkpoint(decoding: Self.checkpoint(validator: validator).encoded()) == nil)
    }

    @Test func `well-formed validators round-trip, a strong date only with a date`() {
        let tag = Validator(entityTag: "W/\"a b\"", lastModified: "Mon, 01 Jan 2024 00:00:00 GMT", date: nil)
        #expect(Checkpoint(decoding: Self.checkpoint(validator: tag).encoded())?.validator == tag)
        let strong = Validator(
            entityTag: nil,
            lastModified: "Mon, 01 Jan 2024 00:00:00 GMT",
            date: "Tue, 02 Jan 2024 00:00:00 GMT"
        )
        #expect(strong.lastModifiedIsStrong)
        #expect(Checkpoint(decoding: Self.checkpoint(validator: strong).encoded())?.validator == strong)
    }
}

extension Validator {
    /// This validator with raw fields set as a forged record would hold them, unchecked.
    func with(entityTag: String? = nil, lastModified: String? = nil, strong: Bool = false) -> Validator {
        var copy = self
        copy.entityTag = entityTag
        copy.lastModified = lastModified
        copy.lastModifiedIsStrong = strong
        return copy
    }
}
