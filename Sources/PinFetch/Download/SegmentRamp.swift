/// How many helper connections a segmented fetch runs (issue 14): one more while the total rate
/// still rises by at least half of what one more connection would add if each had its own
/// limit; the last one is taken away again, for good, when it did not. On a server that limits
/// each connection every helper is added in turn; where the hash, the disk or the CPU sets the
/// pace (a fast loopback) the first helper brings nothing and goes (it would only cost CPU).
///
/// Pure: ``SegmentedFetch`` measures the rate (bytes per second delivered) each quarter second.
struct SegmentRamp: Hashable, Sendable {
    enum Step: Hashable, Sendable {
        /// Start helper number ``allowed``.
        case add
        /// Helper number ``allowed`` + 1 stops after its piece: it did not make the fetch faster.
        case remove
        /// No change; ``isSettled`` says whether any may come.
        case hold
    }

    /// Helpers at most.
    let maximum: Int
    /// Helpers allowed to run now.
    private(set) var allowed = 0
    /// Whether no helper will be added or taken away any more.
    private(set) var isSettled = false
    private var rateBefore: Double?

    init(maximum: Int) {
        self.maximum = max(0, maximum)
        self.isSettled = self.maximum == 0
    }

    /// The step after a quarter second at `rate` bytes per second.
    mutating func next(rate: Double) -> Step {
        guard !self.isSettled else { return .hold }
        guard let before = self.rateBefore else {
            self.rateBefore = rate
            self.allowed = 1
            return .add
        }
        let connections = Double(self.allowed)  // the lead and allowed − 1 helpers, before the last one
        if rate >= before * (1 + 0.5 / connections) {
            guard self.allowed < self.maximum else {
                self.isSettled = true
                return .hold
            }
            self.rateBefore = rate
            self.allowed += 1
            return .add
        }
        self.isSettled = true
        self.allowed -= 1
        return .remove
    }
}
