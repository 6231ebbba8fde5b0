/// Byte ranges of a partial written ahead of its hashed prefix by a segmented download, each
/// with the CRC-32 of its bytes (``SpanChecksum``), kept sorted and merged: what a checkpoint
/// records, so that a resume keeps those bytes only when the whole span reads back the same.
struct CheckedSpans: Hashable, Sendable {
    /// A range `[start, end)` and the CRC-32 of its bytes.
    struct Span: Hashable, Sendable {
        var range: Range<Int64>
        var checksum: UInt32
    }

    /// Sorted, non-overlapping, non-adjacent spans.
    private(set) var spans: [Span] = []

    init(_ spans: [Span] = []) {
        for span in spans { self.insert(span.range, checksum: span.checksum) }
    }

    /// The ranges, in order.
    var ranges: [Range<Int64>] { self.spans.map(\.range) }

    /// Adds `range` with the CRC-32 of its bytes, joined with the spans it touches. A range that
    /// overlaps one already there takes its place (the bytes were written again): the checksum
    /// of the old one no longer describes them.
    mutating func insert(_ range: Range<Int64>, checksum: UInt32) {
        guard !range.isEmpty else { return }
        self.spans.removeAll { $0.range.overlaps(range) }
        var merged = Span(range: range, checksum: checksum)
        let position = self.spans.firstIndex { $0.range.lowerBound > range.lowerBound } ?? self.spans.count
        var after = position
        if after < self.spans.count, self.spans[after].range.lowerBound == merged.range.upperBound {
            let next = self.spans[after]
            merged = Span(
                range: merged.range.lowerBound..<next.range.upperBound,
                checksum: SpanChecksum.combine(merged.checksum, next.checksum, secondLength: Int64(next.range.count))
            )
            after += 1
        }
        var before = position
        if before > 0, self.spans[before - 1].range.upperBound == merged.range.lowerBound {
            let previous = self.spans[before - 1]
            merged = Span(
                range: previous.range.lowerBound..<merged.range.upperBound,
                checksum: SpanChecksum.combine(
                    previous.checksum,
                    merged.checksum,
                    secondLength: Int64(merged.range.count)
                )
            )
            before -= 1
        }
        self.spans.replaceSubrange(before..<after, with: [merged])
    }

    /// Forgets the spans that begin before `offset` (the hash took them in).
    mutating func removeAll(before offset: Int64) {
        self.spans.removeAll { $0.range.lowerBound < offset }
    }

    /// The spans that begin at or past `offset`, at most `limit` (the nearest: a resume fetches
    /// what is left out again). A span that began before `offset` is not one: its checksum
    /// covers bytes before it.
    func beyond(_ offset: Int64, limit: Int = CheckedSpans.recordLimit) -> [Span] {
        Array(self.spans.lazy.filter { $0.range.lowerBound >= offset }.prefix(limit))
    }

    /// Bytes in all spans.
    var count: Int64 { self.spans.reduce(0) { $0 + Int64($1.range.count) } }

    /// Spans a checkpoint records at most, so the record fits its 64 KiB slot.
    static let recordLimit = 512
}
