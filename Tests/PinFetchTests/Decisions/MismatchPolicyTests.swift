import Testing

@testable import PinFetch

/// ``MismatchPolicy``: after a digest mismatch, which mirror next and from where (Architecture,
/// "Mirrors"; Resume and checkpoints, "Finalize").
struct MismatchPolicyTests {
    @Test func `one mirror, bytes from byte 0: the file fails`() {
        var policy = MismatchPolicy(mirrorCount: 1)
        #expect(policy.next(current: 0, handOver: nil, spliced: false, piecesFrom: nil) == .fail)
    }

    @Test func `a spliced partial is fetched once more from byte 0, then fails`() {
        var policy = MismatchPolicy(mirrorCount: 1)
        #expect(
            policy.next(current: 0, handOver: nil, spliced: true, piecesFrom: nil)
                == .restartSpliced(mirror: 0, oneStream: false)
        )
        #expect(policy.next(current: 0, handOver: nil, spliced: true, piecesFrom: nil) == .fail)
    }

    @Test func `pieces over several connections come again over one stream from the next mirror`() {
        var policy = MismatchPolicy(mirrorCount: 2)
        #expect(
            policy.next(current: 0, handOver: nil, spliced: true, piecesFrom: .severalConnections)
                == .restartSpliced(mirror: 1, oneStream: true)
        )
    }

    @Test func `pieces from several mirrors come again over one stream from the lead's mirror`() {
        var policy = MismatchPolicy(mirrorCount: 3)
        #expect(
            policy.next(current: 1, handOver: nil, spliced: true, piecesFrom: .severalMirrors)
                == .restartSpliced(mirror: 1, oneStream: true)
        )
    }

    @Test func `a mirror that sent other bytes is not asked again; when none is left the file fails`() {
        var policy = MismatchPolicy(mirrorCount: 3)
        #expect(
            policy.next(current: 0, handOver: nil, spliced: false, piecesFrom: nil) == .nextMirror(1, excluding: [0])
        )
        #expect(
            policy.next(current: 1, handOver: nil, spliced: false, piecesFrom: nil)
                == .nextMirror(2, excluding: [0, 1])
        )
        #expect(policy.next(current: 2, handOver: nil, spliced: false, piecesFrom: nil) == .fail)
    }

    @Test func `another mirror's tail goes back to the prefix's own mirror`() {
        var policy = MismatchPolicy(mirrorCount: 2)
        #expect(
            policy.next(current: 1, handOver: .some(0), spliced: true, piecesFrom: nil)
                == .goBack(mirror: 0, crossMirror: false, excluding: [1])
        )
    }

    @Test func `a prefix from a mirror not listed is continued on each listed mirror, then is the suspect`() {
        var policy = MismatchPolicy(mirrorCount: 2)
        let unlisted: Int?? = .some(nil)
        #expect(
            policy.next(current: 0, handOver: unlisted, spliced: true, piecesFrom: nil)
                == .goBack(mirror: 1, crossMirror: true, excluding: [0])
        )
        #expect(policy.next(current: 1, handOver: unlisted, spliced: true, piecesFrom: nil) == .prefixSuspect)
        // Restarted from byte 0 once: a later mismatch of the whole moves on, not again.
        #expect(
            policy.next(current: 0, handOver: nil, spliced: true, piecesFrom: nil) == .nextMirror(1, excluding: [0])
        )
    }
}
