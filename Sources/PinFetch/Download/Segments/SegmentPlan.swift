/// Which pieces of a representation a segmented download (`--segments`) still needs,
/// and which fetcher has each: the representation is cut into pieces of ``pieceSize`` bytes
/// (the last one shorter), and every fetcher takes the first piece nobody has, so pieces come in
/// the order the in-order hash needs them (as BitTorrent clients pick pieces for streaming).
///
/// A value type with no locking: ``SegmentedFetch`` keeps it behind a mutex.
struct SegmentPlan: Hashable, Sendable {
    enum Piece: Hashable, Sendable {
        /// Nobody fetches it yet.
        case open
        /// Fetcher `n` has it.
        case claimed(by: Int)
        /// All its bytes are in the partial.
        case written
    }

    /// The representation's length in bytes.
    let length: Int64
    /// Bytes per piece (the last piece may be shorter).
    let pieceSize: Int64
    private(set) var pieces: [Piece]

    /// - Parameters:
    ///   - length: Bytes of the representation, at least 1.
    ///   - pieceSize: Bytes per piece, at least 1.
    ///   - writtenUpTo: Bytes from 0 already in the partial: the pieces wholly inside are written.
    init(length: Int64, pieceSize: Int64, writtenUpTo: Int64 = 0) {
        precondition(length > 0 && pieceSize > 0)
        self.length = length
        self.pieceSize = pieceSize
        let count = Int((length + pieceSize - 1) / pieceSize)
        self.pieces = (0..<count).map { Int64($0 + 1) * pieceSize <= writtenUpTo ? .written : .open }
    }

    /// The bytes of piece `index`.
    func range(of index: Int) -> Range<Int64> {
        let start = Int64(index) * self.pieceSize
        return start..<min(self.length, start + self.pieceSize)
    }

    /// The piece that holds byte `offset`.
    func piece(at offset: Int64) -> Int { Int(offset / self.pieceSize) }

    /// Gives `fetcher` the first open piece, or `nil` when none is left.
    mutating func claimNext(for fetcher: Int) -> Int? {
        guard let index = self.pieces.firstIndex(of: .open) else { return nil }
        self.pieces[index] = .claimed(by: fetcher)
        return index
    }

    /// Gives `fetcher` piece `index` if it is open (a stream that goes on past its piece's end
    /// keeps going while the next piece is nobody's); `false` otherwise.
    mutating func claim(_ index: Int, for fetcher: Int) -> Bool {
        guard self.pieces.indices.contains(index), self.pieces[index] == .open else { return false }
        self.pieces[index] = .claimed(by: fetcher)
        return true
    }

    /// Piece `index` is wholly in the partial.
    mutating func markWritten(_ index: Int) {
        self.pieces[index] = .written
    }

    /// Piece `index` goes back to nobody (its fetcher failed): the next fetcher asks for it again.
    mutating func release(_ index: Int) {
        if case .claimed = self.pieces[index] { self.pieces[index] = .open }
    }

    /// Whether every piece is written.
    var isComplete: Bool { self.pieces.allSatisfy { $0 == .written } }

    /// Whether any piece is still open or being fetched.
    var hasWork: Bool { !self.isComplete }
}
