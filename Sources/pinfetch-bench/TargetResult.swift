/// One target of the benchmark with its measured value.
struct TargetResult {
    var name: String
    /// The measured value against the target, e.g. "1.04x ≤ 1.10x".
    var detail: String
    var passed: Bool

    var line: String { "\(self.passed ? "PASS" : "MISS")  \(self.name): \(self.detail)" }
}
