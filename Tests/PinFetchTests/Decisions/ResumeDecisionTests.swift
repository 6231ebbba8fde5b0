import Testing

@testable import PinFetch

/// The resume decision: what the checkpoint and the HEAD probe allow.
struct ResumeDecisionTests {
    static let url = "http://example.test/file.bin"
    static let strong = Validator(entityTag: #""v1""#, lastModified: nil)
    static let changed = Validator(entityTag: #""v2""#, lastModified: nil)
    static let weak = Validator(entityTag: #"W/"v1""#, lastModified: nil)
    static let none = Validator(entityTag: nil, lastModified: nil)
    static let modified = "Sun, 06 Nov 1994 08:49:37 GMT"
    static let strongDate = Validator(
        entityTag: nil,
        lastModified: ResumeDecisionTests.modified,
        date: "Sun, 06 Nov 1994 09:00:00 GMT"
    )

    static func checkpoint(
        url: String = ResumeDecisionTests.url,
        validator: Validator = ResumeDecisionTests.strong,
        totalLength: Int64? = 1000,
        offset: Int64 = 400,
        algorithm: HashAlgorithm = .sha256
    ) -> Checkpoint {
        Checkpoint(
            url: url,
            validator: validator,
            totalLength: totalLength,
            offset: offset,
            algorithm: algorithm,
            hashState: [],
            hashStateSize: 0,
            libraryVersion: 0
        )
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var label: String
        var checkpoint: Checkpoint? = ResumeDecisionTests.checkpoint()
        var partialSize: Int64? = 400
        var algorithm: HashAlgorithm = .sha256
        var probe: Probe? = Probe(length: 1000, validator: ResumeDecisionTests.strong)
        var pinned = false
        var expected: ResumeDecision
        var testDescription: String { self.label }
    }

    static let cases: [Case] = [
        Case(label: "same strong ETag, remote longer", expected: .resume(from: 400)),
        Case(label: "no partial", partialSize: nil, expected: .startOver(.noPartial)),
        Case(
            label: "no partial and no checkpoint",
            checkpoint: nil,
            partialSize: nil,
            expected: .startOver(.noPartial)
        ),
        Case(label: "no checkpoint", checkpoint: nil, expected: .startOver(.noCheckpoint)),
        Case(
            label: "checkpoint at offset 0",
            checkpoint: Self.checkpoint(offset: 0),
            expected: .startOver(.noCheckpoint)
        ),
        Case(
            label: "checkpoint for another URL",
            checkpoint: Self.checkpoint(url: Self.url + "?v=2"),
            expected: .startOver(.differentURL)
        ),
        Case(
            label: "checkpoint with another algorithm",
            checkpoint: Self.checkpoint(algorithm: .sha512),
            expected: .startOver(.differentAlgorithm)
        ),
        Case(
            label: "pin now asks for SHA-512",
            algorithm: .sha512,
            expected: .startOver(.differentAlgorithm)
        ),
        Case(
            label: "weak ETag only",
            checkpoint: Self.checkpoint(validator: Self.weak),
            probe: Probe(length: 1000, validator: Self.weak),
            expected: .startOver(.noStrongValidator)
        ),
        Case(
            label: "no validator",
            checkpoint: Self.checkpoint(validator: Self.none),
            probe: Probe(length: 1000, validator: Self.none),
            expected: .startOver(.noStrongValidator)
        ),
        Case(
            label: "Last-Modified that is not strong",
            checkpoint: Self.checkpoint(validator: Validator(entityTag: nil, lastModified: Self.modified)),
            expected: .startOver(.noStrongValidator)
        ),
        Case(
            label: "partial shorter than its checkpoint",
            partialSize: 399,
            expected: .startOver(.partialShorterThanCheckpoint)
        ),
        Case(label: "partial longer than its checkpoint: truncate", partialSize: 700, expected: .resume(from: 400)),
        Case(
            label: "probe with a changed ETag",
            probe: Probe(length: 1000, validator: Self.changed),
            expected: .startOver(.validatorChanged)
        ),
        Case(
            label: "probe with a weak ETag now",
            probe: Probe(length: 1000, validator: Self.weak),
            expected: .startOver(.validatorChanged)
        ),
        Case(
            label: "probe with a changed ETag and no length",
            probe: Probe(length: nil, validator: Self.changed),
            expected: .startOver(.validatorChanged)
        ),
        Case(
            label: "remote shorter than the offset: local larger",
            checkpoint: Self.checkpoint(totalLength: nil),
            probe: Probe(length: 300, validator: Self.strong),
            expected: .startOver(.localLarger)
        ),
        Case(
            label: "remote one byte shorter than the offset",
            checkpoint: Self.checkpoint(totalLength: nil),
            probe: Probe(length: 399, validator: Self.strong),
            expected: .startOver(.localLarger)
        ),
        Case(
            label: "remote length equal, same validator: finalize",
            checkpoint: Self.checkpoint(offset: 1000),
            partialSize: 1000,
            expected: .finalize
        ),
        Case(
            label: "HEAD's length equals the partial but the checkpoint knew no total: the ranged GET decides",
            checkpoint: Self.checkpoint(totalLength: nil, offset: 1000),
            partialSize: 1000,
            expected: .resume(from: 1000)
        ),
        Case(
            label: "the same with a pin: finalize, the pin decides (no ranged GET at the end of the file)",
            checkpoint: Self.checkpoint(totalLength: nil, offset: 1000),
            partialSize: 1000,
            pinned: true,
            expected: .finalize
        ),
        Case(
            label: "the same with a pin but HEAD's length is longer: resume",
            checkpoint: Self.checkpoint(totalLength: nil, offset: 1000),
            partialSize: 1000,
            probe: Probe(length: 1200, validator: Self.strong),
            pinned: true,
            expected: .resume(from: 1000)
        ),
        Case(
            label: "no total in the checkpoint, HEAD's length equal but no validator to tie it: the GET decides",
            checkpoint: Self.checkpoint(totalLength: nil, offset: 1000),
            partialSize: 1000,
            probe: Probe(length: 1000, validator: Self.none),
            expected: .resume(from: 1000)
        ),
        Case(
            label: "remote length equal, probe without validator: the GET decides",
            checkpoint: Self.checkpoint(offset: 1000),
            partialSize: 1000,
            probe: Probe(length: 1000, validator: Self.none),
            expected: .resume(from: 1000)
        ),
        Case(
            label: "probe without validator, remote longer",
            probe: Probe(length: 1000, validator: Self.none),
            expected: .resume(from: 400)
        ),
        Case(label: "no probe", probe: nil, expected: .resume(from: 400)),
        Case(
            label: "no probe, complete partial",
            checkpoint: Self.checkpoint(offset: 1000),
            partialSize: 1000,
            probe: nil,
            expected: .resume(from: 1000)
        ),
        Case(
            label: "probe without length",
            probe: Probe(length: nil, validator: Self.strong),
            expected: .resume(from: 400)
        ),
        Case(
            label: "checkpoint total differs from the probe length",
            probe: Probe(length: 2000, validator: Self.strong),
            expected: .startOver(.lengthChanged)
        ),
        Case(
            label: "checkpoint total differs, probe without validator",
            probe: Probe(length: 999, validator: Self.none),
            expected: .startOver(.lengthChanged)
        ),
        Case(
            label: "no total in the checkpoint, remote longer",
            checkpoint: Self.checkpoint(totalLength: nil),
            probe: Probe(length: 5_000_000_000, validator: Self.strong),
            expected: .resume(from: 400)
        ),
        Case(
            label: "offset past 4 GiB",
            checkpoint: Self.checkpoint(totalLength: 6_000_000_000, offset: 5_000_000_000),
            partialSize: 5_000_000_000,
            probe: Probe(length: 6_000_000_000, validator: Self.strong),
            expected: .resume(from: 5_000_000_000)
        ),
        Case(
            label: "strong Last-Modified, same",
            checkpoint: Self.checkpoint(validator: Self.strongDate),
            probe: Probe(length: 1000, validator: Validator(entityTag: nil, lastModified: Self.modified)),
            expected: .resume(from: 400)
        ),
        Case(
            label: "strong Last-Modified, changed",
            checkpoint: Self.checkpoint(validator: Self.strongDate),
            probe: Probe(
                length: 1000,
                validator: Validator(entityTag: nil, lastModified: "Mon, 07 Nov 1994 00:00:00 GMT")
            ),
            expected: .startOver(.validatorChanged)
        ),
        Case(
            label: "strong Last-Modified, complete",
            checkpoint: Self.checkpoint(validator: Self.strongDate, offset: 1000),
            partialSize: 1000,
            probe: Probe(length: 1000, validator: Self.strongDate),
            expected: .finalize
        ),
        // A pin makes a partial without any validator safe to continue (plain Range, the pin decides).
        Case(
            label: "no validator, pinned: resume",
            checkpoint: Self.checkpoint(validator: Self.none),
            probe: Probe(length: 1000, validator: Self.none),
            pinned: true,
            expected: .resume(from: 400)
        ),
        Case(
            label: "no validator, pinned, HEAD told nothing: resume",
            checkpoint: Self.checkpoint(validator: Self.none),
            probe: nil,
            pinned: true,
            expected: .resume(from: 400)
        ),
        Case(
            label: "no validator, pinned, the server now sends an ETag",
            checkpoint: Self.checkpoint(validator: Self.none),
            pinned: true,
            expected: .startOver(.validatorAppeared)
        ),
        Case(
            label: "no validator, pinned, another length",
            checkpoint: Self.checkpoint(validator: Self.none),
            probe: Probe(length: 1200, validator: Self.none),
            pinned: true,
            expected: .startOver(.lengthChanged)
        ),
        Case(
            label: "no validator, pinned, partial complete at the known length",
            checkpoint: Self.checkpoint(validator: Self.none, offset: 1000),
            partialSize: 1000,
            probe: Probe(length: 1000, validator: Self.none),
            pinned: true,
            expected: .finalize
        ),
        Case(
            label: "weak ETag, pinned: still no resume",
            checkpoint: Self.checkpoint(validator: Self.weak),
            probe: Probe(length: 1000, validator: Self.weak),
            pinned: true,
            expected: .startOver(.noStrongValidator)
        ),
    ]

    @Test(arguments: Self.cases)
    func `the resume decision is what the checkpoint and the probe allow`(decision: Case) throws {
        let result = ResumeDecision.decide(
            checkpoint: decision.checkpoint,
            partialSize: decision.partialSize,
            url: try HTTPURL(Self.url),
            algorithm: decision.algorithm,
            probe: decision.probe,
            pinned: decision.pinned
        )
        #expect(result == decision.expected)
    }

    /// `?key=A` and `?key=B` are both stored as `?key=***`; a partial of
    /// one must not be resumed from the other (their validators may well be equal). Nothing
    /// derived from the secret is stored (a salted digest of it was crackable), so without a
    /// pin no URL with a secret is named by a checkpoint; with one, the pin decides.
    @Test func `a checkpoint names only a URL without secrets; a pin moves the others`() throws {
        let first = try HTTPURL("http://example.test/get?key=SECRETKEYA&file=x")
        let second = try HTTPURL("http://example.test/get?key=SECRETKEYB&file=x")
        #expect(first.redacted == second.redacted)
        let checkpoint = Self.checkpoint(url: first.redacted)
        #expect(!String(decoding: checkpoint.encoded(), as: UTF8.self).contains("SECRETKEYA"))
        func decide(_ url: HTTPURL, pinned: Bool) -> ResumeDecision {
            ResumeDecision.decide(
                checkpoint: checkpoint,
                partialSize: 400,
                url: url,
                algorithm: .sha256,
                probe: nil,
                pinned: pinned
            )
        }
        #expect(decide(first, pinned: false) == .startOver(.differentURL))
        #expect(decide(second, pinned: false) == .startOver(.differentURL))
        #expect(decide(first, pinned: true) == .resume(from: 400))
        #expect(checkpoint.names(first) == false)
        #expect(Self.checkpoint().names(try HTTPURL(Self.url)))
    }

    /// A partial moves to another mirror only with a pin: that mirror's validator is not
    /// compared (another server's ETag means nothing), its length still is.
    @Test func `a pinned partial is resumed on a mirror that did not serve it`() throws {
        let other = try HTTPURL("http://mirror.test/file.bin")
        func decide(_ probe: Probe?, pinned: Bool) -> ResumeDecision {
            ResumeDecision.decide(
                checkpoint: Self.checkpoint(),
                partialSize: 400,
                url: other,
                algorithm: .sha256,
                probe: probe,
                pinned: pinned
            )
        }
        #expect(decide(nil, pinned: false) == .startOver(.differentURL))
        #expect(decide(nil, pinned: true) == .resume(from: 400))
        #expect(decide(Probe(length: 1000, validator: Self.changed), pinned: true) == .resume(from: 400))
        #expect(decide(Probe(length: 999, validator: Self.strong), pinned: true) == .startOver(.lengthChanged))
        #expect(decide(Probe(length: 400, validator: Self.strong), pinned: true) == .startOver(.lengthChanged))
    }

    /// A checkpoint of bytes from two mirrors (a pinned cross-mirror resume) names the last one,
    /// whose validator vouches only for its own bytes: only a pin may resume it.
    @Test func `a partial of two mirrors' bytes is resumed only with a pin`() throws {
        var checkpoint = Self.checkpoint()
        checkpoint.mixedSources = true
        let decoded = try #require(Checkpoint(decoding: checkpoint.encoded()))
        #expect(decoded.mixedSources == true)
        let url = try HTTPURL(Self.url)
        let probe = Probe(length: 1000, validator: Self.strong)
        #expect(
            ResumeDecision.decide(checkpoint: decoded, partialSize: 400, url: url, algorithm: .sha256, probe: probe)
                == .startOver(.mixedSources)
        )
        #expect(
            ResumeDecision.decide(
                checkpoint: decoded,
                partialSize: 400,
                url: url,
                algorithm: .sha256,
                probe: probe,
                pinned: true
            ) == .resume(from: 400)
        )
    }
}
