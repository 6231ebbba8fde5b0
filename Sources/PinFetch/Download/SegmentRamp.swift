/// How many helper connections a segmented fetch runs (issue 14), as TCP's slow start grows its
/// window: the connections double each step (2, 4, 8, … up to the maximum) while the total rate
/// still rises by at least half of what they would add if each had its own limit (the first
/// helper: a tenth); a step that did not is taken back, for good. On a server that limits each connection they all come within
/// a second or two; where the hash, the disk or the CPU sets the pace (a fast loopback) the first
/// helper brings nothing and goes (it would only cost CPU).
///
/// Pure: ``SegmentedFetch`` measures the rate (bytes per second delivered) after each step.
struct SegmentRamp: Sendable {
    enum Step: Hashable, Sendable {
        /// Helpers up to number ``allowed`` start.
        case add
        /// Helpers past number ``allowed`` stop after their piece: the last step did not pay.
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
    /// The rate and the helpers before the last step.
    private var before: (rate: Double, allowed: Int)?

    init(maximum: Int) {
        self.maximum = max(0, maximum)
        self.isSettled = self.maximum == 0
    }

    /// The step after measuring `rate` bytes per second with ``allowed`` helpers.
    mutating func next(rate: Double) -> Step {
        guard !self.isSettled else { return .hold }
        if let before = self.before {
            let gain = Double(self.allowed + 1) / Double(before.allowed + 1) - 1  // with a limit per connection
            // The lead's rate alone is the least sure (a server's first-second burst inflates it):
            // the first helper stays when it brings a tenth more; later steps, half their share.
            let needed = before.allowed == 0 ? 1.1 : 1 + 0.5 * gain
            guard rate >= before.rate * needed else {
                self.isSettled = true
                self.allowed = before.allowed
                return .remove
            }
        }
        guard self.allowed < self.maximum else {
            self.isSettled = true
            return .hold
        }
        self.before = (rate, self.allowed)
        self.allowed = min(self.maximum, 2 * (self.allowed + 1) - 1)
        return .add
    }
}
