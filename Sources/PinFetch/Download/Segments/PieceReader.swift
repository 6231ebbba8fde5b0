import Synchronization

/// Reads one piece's `206` for a ``SegmentedFetch``: takes it as ``PieceDecision`` says, writes
/// its bytes at their offsets and hands them to the assembler (through the piece's
/// ``PieceGate``, which drops what another stream of the piece wrote first).
final class PieceReader: TransferDelegate {
    let fetch: SegmentedFetch
    let partial: PartialFile
    /// The piece's index.
    let piece: Int
    /// Whether the answer comes from another mirror than the lead's: its validator cannot be
    /// compared, so the length and range decide, and the pin decides the bytes.
    let otherMirror: Bool
    /// The bytes asked for.
    let wanted: Range<Int64>
    /// The next offset to write.
    private(set) var position: Int64
    /// Why the answer could not be used, once known.
    private(set) var refusal: SegmentedFetch.Stop?
    private(set) var localFailure: PinFetchError?
    /// Set when the server refused the piece with a `429` or `503`: the status, and its
    /// `Retry-After` in seconds, if any.
    private(set) var refusedWith: (status: Int, retryAfter: Double?)?
    /// Set once the piece is whole (this stream or another brought its last byte).
    private(set) var pieceIsWhole = false
    /// Set when another stream of the piece (a race) was ahead: this one stopped.
    private(set) var lostRace = false
    private let isStopped: @Sendable () -> Bool

    init(
        fetch: SegmentedFetch,
        partial: PartialFile,
        piece: Int,
        wanted: Range<Int64>,
        otherMirror: Bool = false,
        isStopped: @escaping @Sendable () -> Bool
    ) {
        self.fetch = fetch
        self.partial = partial
        self.piece = piece
        self.otherMirror = otherMirror
        self.wanted = wanted
        self.position = wanted.lowerBound
        self.isStopped = isStopped
    }

    override func receive(head: ResponseHead) -> Bool {
        let request = PieceDecision.Request(
            validator: self.fetch.validator,
            length: self.fetch.length,
            wanted: self.wanted,
            otherMirror: self.otherMirror
        )
        switch PieceDecision.decide(head, request) {
        case .take(let slowDown):
            if slowDown { self.fetch.slowDown() }  // the server asks for less
            return true
        case .refused(let status, let retryAfter):
            self.refusedWith = (status, retryAfter)
            return false
        case .stop(let reason):
            self.refusal = reason
            return false
        }
    }

    override func receive(body: UnsafeRawBufferPointer) -> Bool {
        guard self.position + Int64(body.count) <= self.wanted.upperBound else {
            self.refusal = .failed("a piece's body ran past its range")
            return false
        }
        let progress: PieceGate.Progress
        do throws(PinFetchError) {
            progress = try self.fetch.write(body, at: self.position, piece: self.piece, to: self.partial)
        } catch {
            self.localFailure = error
            return false
        }
        self.position += Int64(body.count)
        self.fetch.helperBytes.add(Int64(body.count), ordering: .relaxed)
        switch progress {
        case .ahead: return true
        case .whole:
            // Whole by another stream's bytes: the rest of this answer would only be dropped.
            self.pieceIsWhole = true
            return self.position == self.wanted.upperBound
        case .behind:
            self.lostRace = self.position - self.wanted.lowerBound >= SegmentedFetch.raceWarmUp
            return !self.lostRace
        }
    }

    /// Also once another stream made the piece whole: a loser that went silent would otherwise
    /// hold the phase until its stall timeout.
    override var isCancelled: Bool {
        self.isStopped() || (self.position < self.wanted.upperBound && self.fetch.isWritten(self.piece))
    }
}
