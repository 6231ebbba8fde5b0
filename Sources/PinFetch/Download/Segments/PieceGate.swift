@preconcurrency import Glibc
import Synchronization

/// The bytes of one piece as its streams write them: a lagging piece may be asked for
/// again on a free connection, so two answers can bring the same bytes. Each byte is written to
/// the partial and handed to the assembler once, by whichever stream brings it first; the later
/// copy is dropped, and the stream that finds itself behind stops (``Progress/behind``). So the partial never holds bytes the hash did not see (a server that sends
/// other bytes under the same validator in its second answer cannot slip them in), and a piece
/// is whole as soon as either stream reached its end.
///
/// `@unchecked Sendable`: `frontier` changes only under `lock`, held while bytes are written, so
/// the streams of one piece take turns (streams of different pieces do not meet here); it is
/// read without the lock, as an atomic (a writer may wait for the hash with the lock held).
final class PieceGate: @unchecked Sendable {
    private let lock = Condition()
    /// The piece's bytes.
    let range: Range<Int64>
    /// The first byte of the piece no stream wrote yet.
    private let frontier: Atomic<Int64>
    /// When a stream last wrote new bytes (or the gate was made): nanoseconds of the
    /// monotonic clock, read without the lock.
    private let lastProgress = Atomic<UInt64>(PieceGate.now())

    private static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    /// Seconds since a stream last brought new bytes of the piece.
    var idleSeconds: Double { Double(Self.now() &- self.lastProgress.load(ordering: .relaxed)) / 1e9 }

    /// - Parameters:
    ///   - range: The piece's bytes.
    ///   - from: Where its first stream begins (a resumed partial may hold its start).
    init(range: Range<Int64>, from start: Int64) {
        self.range = range
        self.frontier = Atomic(min(max(start, range.lowerBound), range.upperBound))
    }

    /// Where a stream that starts now begins: the first byte nobody wrote.
    var next: Int64 { self.frontier.load(ordering: .acquiring) }

    /// Whether every byte of the piece is written.
    var isWhole: Bool { self.next == self.range.upperBound }

    /// What a stream's bytes did for its piece.
    enum Progress: Equatable {
        /// Some of them were new: the stream leads (or is alone).
        case ahead
        /// All of them had been written by another stream, which is ahead.
        case behind
        /// The piece is whole now.
        case whole
    }

    /// Writes what `bytes` (a stream's next bytes, at `offset` in this piece) adds past the
    /// frontier, with `write` (the partial, then the assembler); bytes another stream wrote
    /// already are dropped.
    /// - Throws: what `write` throws; ``PinFetchError/Code/generic`` for bytes past a gap (a
    ///   stream never begins past the frontier, so only a bug could cause it).
    func write(
        _ bytes: UnsafeRawBufferPointer,
        at offset: Int64,
        with write: (UnsafeRawBufferPointer, Int64) throws(PinFetchError) -> Void
    ) throws(PinFetchError) -> Progress {
        self.lock.lock()
        defer { self.lock.unlock() }
        let end = offset + Int64(bytes.count)
        let frontier = self.frontier.load(ordering: .relaxed)
        guard offset <= frontier, end <= self.range.upperBound else {
            throw PinFetchError(
                .generic,
                "internal: bytes \(offset)-\(end - 1) do not follow the piece's written bytes"
            )
        }
        let behind = end <= frontier
        if !behind {
            let new = UnsafeRawBufferPointer(rebasing: bytes[Int(frontier - offset)...])
            try write(new, frontier)
            self.frontier.store(end, ordering: .releasing)
            self.lastProgress.store(Self.now(), ordering: .relaxed)
        }
        if max(frontier, end) == self.range.upperBound { return .whole }
        return behind ? .behind : .ahead
    }
}
