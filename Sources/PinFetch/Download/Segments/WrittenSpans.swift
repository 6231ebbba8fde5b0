/// Byte ranges of a partial written ahead of its hashed prefix by a segmented download,
/// kept sorted and merged: what a checkpoint records so a resume keeps those bytes.
struct WrittenSpans: Hashable, Sendable {
    /// Sorted, non-overlapping, non-adjacent ranges.
    private(set) var ranges: [Range<Int64>] = []

    init(_ ranges: [Range<Int64>] = []) {
        for range in ranges { self.insert(range) }
    }

    /// Adds `range`, merging it with the ranges it overlaps or touches.
    mutating func insert(_ range: Range<Int64>) {
        guard !range.isEmpty else { return }
        var merged = range
        var kept: [Range<Int64>] = []
        kept.reserveCapacity(self.ranges.count + 1)
        for existing in self.ranges {
            if existing.upperBound < merged.lowerBound || existing.lowerBound > merged.upperBound {
                kept.append(existing)
            } else {
                merged = min(existing.lowerBound, merged.lowerBound)..<max(existing.upperBound, merged.upperBound)
            }
        }
        let position = kept.firstIndex { $0.lowerBound > merged.lowerBound } ?? kept.count
        kept.insert(merged, at: position)
        self.ranges = kept
    }

    /// The parts at or past `offset`, at most `limit` ranges (the nearest: a resume refetches
    /// what is left out).
    func beyond(_ offset: Int64, limit: Int = WrittenSpans.recordLimit) -> [Range<Int64>] {
        var result: [Range<Int64>] = []
        for range in self.ranges where range.upperBound > offset {
            result.append(max(range.lowerBound, offset)..<range.upperBound)
            if result.count == limit { break }
        }
        return result
    }

    /// Bytes in all ranges.
    var count: Int64 { self.ranges.reduce(0) { $0 + Int64($1.count) } }

    /// Ranges a checkpoint records at most, so the record fits its 64 KiB slot.
    static let recordLimit = 512
}
