import FoundationEssentials
@preconcurrency import Glibc
import Synchronization

/// One representation fetched over several connections at once (`--segments N`).
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
        /// The last connection was refused with a `429` or `503`: the pieces are kept, and the
        /// next attempt waits `retryAfter` seconds (the server's `Retry-After`, if it sent one).
        case backedOff(String, retryAfter: Double?)
    }

    /// A piece for a fetcher: one nobody had, or a lagging one asked for again (a race).
    struct Claim: Hashable, Sendable {
        let piece: Int
        let isRace: Bool
    }

    /// Bytes per piece by default: 8 MiB.
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
    /// Where the lead's answer begins (the hashed prefix when the phase began).
    private let leadStart: Int64
    /// The pieces being written, by index (made when first asked for).
    private var gates: [Int: PieceGate] = [:]
    /// Pieces asked for a second time (a race), once each; and those whose second stream runs.
    private var raced: Set<Int> = []
    private var racing: Set<Int> = []
    let validator: Validator
    let ifRange: String
    let assembler: SegmentAssembler
    /// The mirrors pieces come from, by index: the lead's first (its validator is the one
    /// `If-Range` names); others only for a pinned file (the pin decides).
    let mirrors: [Int]
    /// What became of each other mirror helpers asked: `"ok"` while it delivered, else why it
    /// was left.
    private var otherMirrors: [Int: String] = [:]
    /// For each other mirror that has delivered nothing yet, the one helper asking it.
    private var probing: [Int: Int] = [:]
    private let condition = Condition()
    private var plan: SegmentPlan
    private var stopped: Stop?
    private var failure: PinFetchError?
    private var helpersRunning = 0
    /// Helpers allowed to take pieces (``SegmentRamp``, less one for each refusal): while more
    /// are fetching, the next to ask for a piece stops.
    private var allowedHelpers = 0
    /// Helpers fetching pieces now.
    private var fetchingHelpers = 0
    /// Set once the server refused a piece (`429`, `503`) or sent `Retry-After`: no helper is
    /// added any more.
    private(set) var backedOff = false
    private var helperStarter: (@Sendable () -> Void)?
    /// Body bytes the helpers received (the lead counts its own in the download).
    let helperBytes = Atomic<Int64>(0)

    /// - Parameters:
    ///   - plan: The pieces, `leadPiece` claimed by fetcher 0 (the answer streaming now).
    init(
        plan: SegmentPlan,
        leadPiece: Int,
        leadStart: Int64? = nil,
        startsAt: [Int: Int64] = [:],
        keptBytes: Int64 = 0,
        validator: Validator,
        ifRange: String,
        assembler: SegmentAssembler,
        mirrors: [Int] = [0]
    ) {
        self.mirrors = mirrors.isEmpty ? [0] : mirrors
        self.length = plan.length
        self.leadPiece = leadPiece
        self.leadStart = leadStart ?? plan.range(of: leadPiece).lowerBound
        self.startsAt = startsAt
        self.keptBytes = keptBytes
        self.validator = validator
        self.ifRange = ifRange
        self.assembler = assembler
        self.plan = plan
    }

    func range(of piece: Int) -> Range<Int64> { self.plan.range(of: piece) }

    /// What is left to fetch of `piece`: from the first byte no stream wrote (a resumed partial
    /// may hold its start) to its end.
    func remaining(of piece: Int) -> Range<Int64> {
        let gate = self.gate(of: piece)
        return gate.next..<gate.range.upperBound
    }

    /// The gate every stream of piece `index` writes through.
    func gate(of index: Int) -> PieceGate {
        self.locked {
            if let gate = self.gates[index] { return gate }
            let range = self.plan.range(of: index)
            let start = index == self.leadPiece ? self.leadStart : self.startsAt[index] ?? range.lowerBound
            let gate = PieceGate(range: range, from: start)
            self.gates[index] = gate
            return gate
        }
    }

    /// Bytes a stream of a raced piece receives before it may find itself behind: a fresh
    /// connection's first bytes come slowly (TCP's slow start), so a race is not judged on them.
    static let raceWarmUp: Int64 = 64 << 10
    /// Seconds without new bytes after which a piece is raced when no other piece is left.
    static let stalledPiece = 1.0

    /// Writes a stream's `bytes` at `offset` in piece `index` to `partial` and the assembler,
    /// but only what no other stream of the piece wrote (``PieceGate``); a whole piece is marked
    /// written.
    /// - Throws: a write or read-back failure (disk).
    func write(
        _ bytes: UnsafeRawBufferPointer,
        at offset: Int64,
        piece index: Int,
        to partial: PartialFile
    ) throws(PinFetchError) -> PieceGate.Progress {
        let progress = try self.gate(of: index).write(bytes, at: offset) { (new, at) throws(PinFetchError) in
            try partial.write(new, at: at)
            try self.assembler.deliver(new, at: at)
        }
        if progress == .whole { self.markWritten(index) }
        return progress
    }

    /// Whether a second stream of piece `index` (a race) runs.
    func isRaced(_ index: Int) -> Bool { self.locked { self.racing.contains(index) } }

    /// The second stream of piece `index` ended.
    func endRace(_ index: Int) { self.changing { _ = self.racing.remove(index) } }

    /// Whether every byte of piece `index` is written.
    func isWritten(_ index: Int) -> Bool { self.locked { self.plan.pieces[index] == .written } }

    var stop: Stop? { self.locked { self.stopped } }
    var isComplete: Bool { self.locked { self.plan.isComplete } }

    /// `body` under the lock, then wakes the fetchers waiting for a change (``waitForChange()``).
    private func changing(_ body: () -> Void) {
        self.condition.lock()
        body()
        self.condition.broadcast()
        self.condition.unlock()
    }

    /// Waits until a piece is written, a race ends or the phase stops, or a quarter second
    /// passed: a piece in flight is found stalled by its idle time.
    private func waitForChange() {
        self.condition.lock()
        self.condition.wait(seconds: 0.25)
        self.condition.unlock()
    }

    func locked<T>(_ body: () -> T) -> T {
        self.condition.lock()
        defer { self.condition.unlock() }
        return body()
    }

    /// Stops every fetcher at its next step; the first reason given stays.
    func stop(_ reason: Stop) {
        self.changing { if self.stopped == nil { self.stopped = reason } }
    }

    /// The next piece for `fetcher`, or `nil` when none is left or the phase stopped: the piece
    /// the hash waits for, asked for again, when it lags (see ``lagging(connections:)``), else
    /// the first piece nobody has.
    func claimNext(for fetcher: Int) -> Claim? {
        self.locked { self.stopped == nil ? self.claimNextLocked(for: fetcher) : nil }
    }

    /// ``claimNext(for:)`` under the lock.
    private func claimNextLocked(for fetcher: Int) -> Claim? {
        if let piece = self.lagging(connections: self.fetchingHelpers + 1) {
            self.raced.insert(piece)
            self.racing.insert(piece)
            return Claim(piece: piece, isRace: true)
        }
        return self.plan.claimNext(for: fetcher).map { Claim(piece: $0, isRace: false) }
    }

    /// The first piece not yet written, when another fetcher has it, it was not raced yet, and
    /// at least as many pieces past it are written as there are connections (at least 2): its
    /// stream runs at under half the others' pace, as each of them finished a piece begun after
    /// it. The hash waits for it, and what passed it fills memory and is then read back. A piece
    /// with less than ``raceWarmUp`` bytes left (half of a smaller piece) is not raced. Under
    /// the lock.
    private func lagging(connections: Int) -> Int? {
        guard let first = self.plan.pieces.firstIndex(where: { $0 != .written }),
            case .claimed = self.plan.pieces[first], !self.raced.contains(first)
        else { return nil }
        // With less than a warm-up left, a new connection would not win it.
        guard let gate = self.gates[first],
            gate.range.upperBound - gate.next > min(Self.raceWarmUp, Int64(gate.range.count) / 2)
        else { return nil }
        let writtenPast = self.plan.pieces[(first + 1)...].lazy.filter { $0 == .written }.count
        if writtenPast >= max(2, connections) { return first }
        // At the end, with no piece left to take, a free connection races one that stalled.
        return !self.plan.pieces.contains(.open) && gate.idleSeconds >= Self.stalledPiece ? first : nil
    }

    /// Piece `index` for `fetcher` if nobody has it (the lead going on past its piece), unless a
    /// resumed partial holds its start: that piece is asked for from where it stops, by
    /// ``claimNext(for:)`` (streaming on would deliver its held bytes twice).
    func claim(_ index: Int, for fetcher: Int) -> Bool {
        self.locked { self.stopped == nil && self.startsAt[index] == nil && self.plan.claim(index, for: fetcher) }
    }

    /// A fetcher's local failure (disk): the phase stops, and the download fails with it.
    func fail(_ error: PinFetchError) {
        self.changing {
            if self.failure == nil { self.failure = error }
            if self.stopped == nil { self.stopped = .failed(error.message) }
        }
    }

    var localFailure: PinFetchError? { self.locked { self.failure } }

    func markWritten(_ index: Int) { self.changing { self.plan.markWritten(index) } }

    /// The server refused `fetcher`'s piece with a `429` or `503` (RFC 6585 §4, RFC 9110
    /// §15.6.4): servers ban clients that keep many connections open, so one connection goes.
    /// The piece goes back to nobody (its written bytes stay; a raced piece stays with its first
    /// fetcher), no helper is added any more, and
    /// one helper fewer may run. Returns whether `fetcher` goes on: a helper stops; the lead
    /// (fetcher 0) goes on after the server's wait while a helper is left, and otherwise the
    /// phase stops with ``Stop/backedOff(_:retryAfter:)``.
    func backOff(fetcher: Int, claim: Claim, reason: String, retryAfter: Double?) -> Bool {
        self.locked {
            // A race's piece stays its first fetcher's.
            if !claim.isRace, self.plan.pieces[claim.piece] != .written { self.plan.release(claim.piece) }
            self.backedOff = true
            self.allowedHelpers = max(0, min(self.allowedHelpers, self.fetchingHelpers) - 1)
            if fetcher > 0 || self.fetchingHelpers > 0 { return fetcher == 0 }
            if self.stopped == nil { self.stopped = .backedOff(reason, retryAfter: retryAfter) }
            return false
        }
    }

    /// Helpers allowed now.
    var helpersAllowed: Int { self.locked { self.allowedHelpers } }

    /// The mirror fetcher `n` asks: helpers take the mirrors not dropped in turn, the lead's
    /// first. One that has delivered nothing yet is asked by one helper at a time (a wrong one
    /// costs one answer, however many start at once); the others ask the lead's meanwhile.
    func mirror(for fetcher: Int) -> Int {
        self.locked {
            let live = self.mirrors.enumerated().filter {
                $0.offset == 0 || self.otherMirrors[$0.element] ?? "ok" == "ok"
            }
            let mirror = live[fetcher % live.count].element
            guard mirror != self.mirrors[0], self.otherMirrors[mirror] == nil else { return mirror }
            if let prober = self.probing[mirror], prober != fetcher { return self.mirrors[0] }
            self.probing[mirror] = fetcher
            return mirror
        }
    }

    /// Another mirror than the lead's failed a piece (no usable answer, another length): it is
    /// asked no more, the piece goes back to nobody, and the helper goes on with the mirrors
    /// left (a fallback mirror without ranges does not cost a connection).
    func dropMirror(_ mirror: Int, claim: Claim, because reason: String) {
        self.locked {
            if !claim.isRace, self.plan.pieces[claim.piece] != .written { self.plan.release(claim.piece) }
            self.otherMirrors[mirror] = reason
        }
    }

    /// Another mirror delivered a piece.
    func delivered(by mirror: Int) {
        self.locked { if self.otherMirrors[mirror] == nil { self.otherMirrors[mirror] = "ok" } }
    }

    /// What became of the other mirrors helpers asked, by index.
    var otherMirrorOutcomes: [Int: String] { self.locked { self.otherMirrors } }

    /// A piece's answer carried `Retry-After`: one helper fewer, and none added any more.
    func slowDown() {
        self.locked {
            if !self.backedOff { self.allowedHelpers = max(0, min(self.allowedHelpers, self.fetchingHelpers) - 1) }
            self.backedOff = true
        }
    }

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

    /// Runs helper `fetcher`: while it may, it takes the next piece and has `fetch` fetch it,
    /// until `fetch` says stop or no piece is left. While more helpers fetch than are allowed,
    /// the first to ask stops.
    /// `stops` says when the run is cancelled or out of time.
    func runHelper(_ fetcher: Int, stops: () -> Bool, fetch: (Claim) -> Bool) {
        self.locked { self.fetchingHelpers += 1 }
        while true {
            let claim: Claim? = self.locked {
                guard self.fetchingHelpers <= self.allowedHelpers else { return nil }
                return self.stopped == nil ? self.claimNextLocked(for: fetcher) : nil
            }
            if let claim {
                guard fetch(claim) else { break }
                continue
            }
            guard !stops(), self.locked({ self.fetchingHelpers <= self.allowedHelpers && self.mayRaceLater }) else {
                break
            }
            self.waitForChange()  // at the end: a piece in flight may stall, and be raced then
        }
        self.locked { self.fetchingHelpers -= 1 }
    }

    /// The next piece for `fetcher` (``claimNext(for:)``), waiting at the end while a piece in
    /// flight may still stall and be raced; `nil` once none is left, the phase stopped, or
    /// `stops` says so.
    func claimNext(for fetcher: Int, stops: () -> Bool) -> Claim? {
        while true {
            if let claim = self.claimNext(for: fetcher) { return claim }
            guard !stops(), self.locked({ self.mayRaceLater }) else { return nil }
            self.waitForChange()
        }
    }

    /// Whether no piece is open but one in flight was not raced yet. Under the lock.
    private var mayRaceLater: Bool {
        guard self.stopped == nil, !self.plan.pieces.contains(.open) else { return false }
        return self.plan.pieces.indices.contains { index in
            if case .claimed = self.plan.pieces[index] { return !self.raced.contains(index) }
            return false
        }
    }

    /// Whether any piece is still nobody's.
    var hasOpenPieces: Bool { self.locked { self.plan.pieces.contains(.open) } }

    /// Helpers allowed from now on, as the ramp found (``SegmentRamp``), unless the server
    /// already asked for fewer.
    func allowHelpers(_ count: Int) {
        self.locked { if !self.backedOff { self.allowedHelpers = count } }
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
