import Synchronization

/// Reads one piece's `206` for a ``SegmentedFetch``: writes its bytes at their offsets and hands
/// them to the assembler (through the piece's ``PieceGate``, which drops what another stream of
/// the piece wrote first); anything but the exact range of the same representation stops it.
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
        let validator = head.validator
        if head.status == 200, self.otherMirror {
            self.refusal = .failed("another mirror answered a ranged request with HTTP 200")
            return false
        }
        if head.status == 200 {
            // If-Range failed (another representation), or the server ignores Range.
            let same = self.fetch.validator.matches(validator) == true && head.contentLength == self.fetch.length
            self.refusal =
                same
                ? .failed("the server answered a ranged request with the whole file (200)")
                : .representationChanged("a piece's answer was for another representation (200, validator changed)")
            return false
        }
        let retryAfter = head.value("retry-after").flatMap { RetryAfter.seconds($0, date: head.value("date")) }
        if head.status == 429 || head.status == 503 {
            self.refusedWith = (head.status, retryAfter)
            return false
        }
        guard head.status == 206 else {
            self.refusal = .failed("a piece's answer was HTTP \(head.status)")
            return false
        }
        switch self.otherMirror ? true : self.fetch.validator.matches(validator) {
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
            guard !self.otherMirror else {
                self.refusal = .failed("another mirror's 206 names another length (\(total) bytes)")
                return false
            }
            self.refusal = .representationChanged("a piece's 206 names another length")
            return false
        }
        if head.value("retry-after") != nil { self.fetch.slowDown() }  // the server asks for less
        return true
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
