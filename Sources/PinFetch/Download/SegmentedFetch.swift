import FoundationEssentials
@preconcurrency import Glibc
import Synchronization

/// One representation fetched over several connections at once (`--segments N`, issue 14).
///
/// The first GET (a `200` from byte 0 with a strong validator, `Accept-Ranges: bytes` and a
/// length of more than one piece) goes on as the lead: it streams piece 0, then each next piece
/// while nobody has it. Helpers, each with its own easy handle and connection, take the first
/// open piece with a ranged GET carrying `If-Range` on that validator (RFC 9110 §13.1.5); every
/// `206` is checked as strictly as the answer decision checks one (start, end, complete length,
/// validator, no content coding). Bytes are written with `pwrite` at their offset, and a
/// ``SegmentAssembler`` hashes them in order, so nothing is read back while memory lasts.
///
/// `@unchecked Sendable`: the plan and the stop reason are guarded by `condition`; the rest is
/// immutable or atomic.
final class SegmentedFetch: @unchecked Sendable {
    /// Why the segmented phase ended early.
    enum Stop: Equatable {
        /// A piece's answer was for another representation: start again from byte 0.
        case representationChanged(String)
        /// A piece could not be fetched (network, a server that ignores `Range`): the rest comes
        /// over one stream from the hashed prefix.
        case failed(String)
    }

    /// Bytes per piece (issue 14: "e.g. 8 MiB").
    static let pieceSize: Int64 = 8 << 20
    /// Attempts at most for one piece before the phase stops.
    static let attemptsPerPiece = 3

    let length: Int64
    /// The piece the first answer streams when the phase begins.
    let leadPiece: Int
    /// Bytes past the resumed offset an earlier run left, kept and read back (not fetched).
    let keptBytes: Int64
    /// Where pieces a resumed partial holds in part go on (by piece index).
    private let startsAt: [Int: Int64]
    let validator: Validator
    let ifRange: String
    let assembler: SegmentAssembler
    private let condition = Condition()
    private var plan: SegmentPlan
    private var stopped: Stop?
    private var failure: PinFetchError?
    private var helpersRunning = 0
    /// Helpers allowed to take pieces (``SegmentRamp``): helper `n` stops once `n` is above it.
    private var allowedHelpers = 0
    private var helperStarter: (@Sendable () -> Void)?
    /// Body bytes the helpers received (the lead counts its own in the download).
    let helperBytes = Atomic<Int64>(0)

    /// - Parameters:
    ///   - plan: The pieces, `leadPiece` claimed by fetcher 0 (the answer streaming now).
    init(
        plan: SegmentPlan,
        leadPiece: Int,
        startsAt: [Int: Int64] = [:],
        keptBytes: Int64 = 0,
        validator: Validator,
        ifRange: String,
        assembler: SegmentAssembler
    ) {
        self.length = plan.length
        self.leadPiece = leadPiece
        self.startsAt = startsAt
        self.keptBytes = keptBytes
        self.validator = validator
        self.ifRange = ifRange
        self.assembler = assembler
        self.plan = plan
    }

    func range(of piece: Int) -> Range<Int64> { self.plan.range(of: piece) }

    /// What is left to fetch of `piece`: all of it, or the rest of one a resumed partial holds in part.
    func remaining(of piece: Int) -> Range<Int64> {
        let range = self.plan.range(of: piece)
        return (self.startsAt[piece] ?? range.lowerBound)..<range.upperBound
    }

    var stop: Stop? { self.locked { self.stopped } }
    var isComplete: Bool { self.locked { self.plan.isComplete } }

    func locked<T>(_ body: () -> T) -> T {
        self.condition.lock()
        defer { self.condition.unlock() }
        return body()
    }

    /// Stops every fetcher at its next step; the first reason given stays.
    func stop(_ reason: Stop) {
        self.locked { if self.stopped == nil { self.stopped = reason } }
    }

    /// The next piece for `fetcher`, or `nil` when none is left or the phase stopped.
    func claimNext(for fetcher: Int) -> Int? {
        self.locked { self.stopped == nil ? self.plan.claimNext(for: fetcher) : nil }
    }

    /// Piece `index` for `fetcher` if nobody has it (the lead going on past its piece), unless a
    /// resumed partial holds its start: that piece is asked for from where it stops, by
    /// ``claimNext(for:)`` (streaming on would deliver its held bytes twice).
    func claim(_ index: Int, for fetcher: Int) -> Bool {
        self.locked { self.stopped == nil && self.startsAt[index] == nil && self.plan.claim(index, for: fetcher) }
    }

    /// A fetcher's local failure (disk): the phase stops, and the download fails with it.
    func fail(_ error: PinFetchError) {
        self.locked {
            if self.failure == nil { self.failure = error }
            if self.stopped == nil { self.stopped = .failed(error.message) }
        }
    }

    var localFailure: PinFetchError? { self.locked { self.failure } }

    func markWritten(_ index: Int) { self.locked { self.plan.markWritten(index) } }

    /// Starts the helpers, once: ``prepareHelpers(_:)``'s closure runs on the first call.
    func startHelpers() {
        let start: (@Sendable () -> Void)? = self.locked {
            defer { self.helperStarter = nil }
            return self.helperStarter
        }
        start?()
    }

    /// Whether ``startHelpers()`` ran (or there is nothing to start).
    var helpersStarted: Bool { self.locked { self.helperStarter == nil } }

    /// What ``startHelpers()`` does: helpers start only once they can help (``AnswerReader``
    /// starts them when the hash keeps up with the first stream).
    func prepareHelpers(_ start: @escaping @Sendable () -> Void) {
        self.locked { self.helperStarter = start }
    }

    /// Whether helper `fetcher` may take another piece.
    func mayGoOn(_ fetcher: Int) -> Bool { self.locked { fetcher <= self.allowedHelpers } }

    /// Whether any piece is still nobody's.
    var hasOpenPieces: Bool { self.locked { self.plan.pieces.contains(.open) } }

    /// Adds helpers one at a time while the rate the assembler sees still rises, up to
    /// `maximum` (``SegmentRamp``); `start(n)` starts helper `n`. Runs on a thread of its own,
    /// counted as a helper, until the ramp settles, the phase stops or no piece is open.
    /// `note` hears each change in words (`-v`).
    func ramp(
        maximum: Int,
        note: @escaping @Sendable (String) -> Void,
        start: @escaping @Sendable (Int) -> Void
    ) {
        self.startHelper { [self] in
            var ramp = SegmentRamp(maximum: maximum)
            var started = 0
            // Measured from now, after the lead's first quarter second: a server's first burst
            // (nginx sends a second's worth at once) would make any helper look useless.
            while !ramp.isSettled, self.stop == nil, self.hasOpenPieces {
                let rate = self.measureRate(connections: ramp.allowed + 1)
                let connections = ramp.allowed + 1
                let step = ramp.next(rate: rate)
                self.locked { self.allowedHelpers = ramp.allowed }
                let speed = "\(Int(rate / 1024)) KiB/s over \(connections) connections"
                switch step {
                case .add:
                    note("\(speed): \(ramp.allowed + 1) from now")
                    while started < ramp.allowed {
                        started += 1
                        start(started)
                    }
                    // Their first quarter second (connect, ask, first bytes) is not measured.
                    usleep(250_000)
                case .remove: note("\(speed): too little for them; back to \(ramp.allowed + 1)")
                case .hold: note("\(speed): no more connections")
                }
            }
        }
    }

    /// The rate the assembler sees (bytes per second) over the next quarter second, or longer,
    /// up to 2 s, until each of `connections` delivered 512 KiB: a server that paces in chunks
    /// (64 KiB at a time at 200 KiB/s) would make a short window say anything.
    private func measureRate(connections: Int) -> Double {
        let (startBytes, startTime) = (self.assembler.deliveredBytes, ContinuousClock.now)
        usleep(250_000)
        while ContinuousClock.now - startTime < .seconds(2), self.stop == nil, self.hasOpenPieces,
            self.assembler.deliveredBytes - startBytes < Int64(connections) << 19
        {
            usleep(50_000)
        }
        let seconds = max((ContinuousClock.now - startTime) / .seconds(1), 0.001)
        return Double(self.assembler.deliveredBytes - startBytes) / seconds
    }

    /// Starts a helper thread.
    func startHelper(_ body: @escaping @Sendable () -> Void) {
        self.locked { self.helpersRunning += 1 }
        Threads.detach(name: "pinfetch.segment") { [self] in
            body()
            self.condition.lock()
            self.helpersRunning -= 1
            self.condition.broadcast()
            self.condition.unlock()
        }
    }

    /// Waits until every helper has returned.
    func waitForHelpers() {
        self.condition.lock()
        while self.helpersRunning > 0 { self.condition.wait() }
        self.condition.unlock()
    }
}

/// Reads one piece's `206` for a ``SegmentedFetch``: writes its bytes at their offsets and hands
/// them to the assembler; anything but the exact range of the same representation stops it.
final class PieceReader: TransferDelegate {
    let fetch: SegmentedFetch
    let partial: PartialFile
    /// The bytes asked for.
    let wanted: Range<Int64>
    /// The next offset to write.
    private(set) var position: Int64
    /// Why the answer could not be used, once known.
    private(set) var refusal: SegmentedFetch.Stop?
    private(set) var localFailure: PinFetchError?
    private let isStopped: @Sendable () -> Bool

    init(fetch: SegmentedFetch, partial: PartialFile, wanted: Range<Int64>, isStopped: @escaping @Sendable () -> Bool) {
        self.fetch = fetch
        self.partial = partial
        self.wanted = wanted
        self.position = wanted.lowerBound
        self.isStopped = isStopped
    }

    override func receive(head: ResponseHead) -> Bool {
        let validator = head.validator
        if head.status == 200 {
            // If-Range failed (another representation), or the server ignores Range.
            let same = self.fetch.validator.matches(validator) == true && head.contentLength == self.fetch.length
            self.refusal =
                same
                ? .failed("the server answered a ranged request with the whole file (200)")
                : .representationChanged("a piece's answer was for another representation (200, validator changed)")
            return false
        }
        guard head.status == 206 else {
            self.refusal = .failed("a piece's answer was HTTP \(head.status)")
            return false
        }
        switch self.fetch.validator.matches(validator) {
        case true?: break
        case false?:
            self.refusal = .representationChanged("a piece's 206 carries another validator")
            return false
        case nil:
            // No validator to compare: it cannot tie the piece to the file, nor show another one.
            self.refusal = .failed("a piece's 206 carries no validator")
            return false
        }
        guard !head.hasContentCoding, !head.isMultipartByteRanges, let range = head.contentRange,
            range.first == self.wanted.lowerBound, let last = range.last, last < self.wanted.upperBound,
            last >= self.wanted.lowerBound
        else {
            self.refusal = .failed("a piece's 206 does not cover the range asked for")
            return false
        }
        guard let total = range.completeLength else {
            self.refusal = .failed("a piece's 206 does not say the file's length")
            return false
        }
        guard total == self.fetch.length else {
            self.refusal = .representationChanged("a piece's 206 names another length")
            return false
        }
        return true
    }

    override func receive(body: UnsafeRawBufferPointer) -> Bool {
        guard self.position + Int64(body.count) <= self.wanted.upperBound else {
            self.refusal = .failed("a piece's body ran past its range")
            return false
        }
        do throws(PinFetchError) {
            try self.partial.write(body, at: self.position)
            try self.fetch.assembler.deliver(body, at: self.position)
        } catch {
            self.localFailure = error
            return false
        }
        self.position += Int64(body.count)
        self.fetch.helperBytes.add(Int64(body.count), ordering: .relaxed)
        return true
    }

    override var isCancelled: Bool { self.isStopped() }
}
