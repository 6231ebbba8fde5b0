/// Medians and friends over one value per round.
struct Samples {
    var values: [Double]

    init(_ values: [Double]) {
        self.values = values
    }

    var median: Double {
        let sorted = self.values.sorted()
        guard !sorted.isEmpty else { return .nan }
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    var minimum: Double { self.values.min() ?? .nan }
    var maximum: Double { self.values.max() ?? .nan }

    /// The per-round ratios `self[i] / other[i]` (paired: both from the same round).
    func ratios(to other: Samples) -> Samples {
        Samples(zip(self.values, other.values).map { $0 / $1 })
    }
}
