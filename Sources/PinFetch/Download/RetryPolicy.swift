import FoundationEssentials
import Glibc

/// When to try again after a failed attempt, and where (<doc:Architecture#Mirrors>).
///
/// Pure bookkeeping, table-tested: a mirror not tried yet is an alternative, not a retry; a
/// mirror that failed for good is never tried again; each retry waits `retryDelay × 2ⁿ`,
/// jittered into its upper half, at least what `Retry-After` asked, at most
/// `maximumRetryDelay` seconds; progress since the last failure starts the back-off over.
struct RetryPolicy {
    /// What to do after a failure.
    struct Next: Hashable {
        /// The mirror to try (the same one for a plain retry).
        var mirror: Int
        /// Seconds to wait first (0 for a mirror not tried yet).
        var delay: Double
    }

    let retries: Int
    let retryDelay: Double
    let maximumRetryDelay: Double
    let mirrorCount: Int
    /// Draws the jittered delay from a range of seconds.
    var jitter: (ClosedRange<Double>) -> Double = { Double.random(in: $0) }

    /// Retries taken so far (a move to a mirror not tried yet is not one).
    private(set) var retriesUsed = 0
    private var backoffStep = 0
    private var tried = Set<Int>()
    private var dead = Set<Int>()

    /// - Parameter excluded: Mirrors never to go to (as if they had failed for good).
    init(options: FetchOptions, mirrorCount: Int, excluding excluded: Set<Int> = []) {
        self.retries = options.retries
        self.retryDelay = options.retryDelay
        self.maximumRetryDelay = options.maximumRetryDelay
        self.mirrorCount = max(1, mirrorCount)
        self.dead = excluded
    }

    /// After a failure of `code` on mirror `current`: where to go next, or `nil` to give up.
    /// - Parameters:
    ///   - retryable: `false` when this mirror will not do better (it is then not tried again).
    ///   - retryAfter: Seconds the server asked to wait, if it did.
    ///   - madeProgress: `true` when the attempt added bytes to the partial.
    mutating func next(
        after code: PinFetchError.Code,
        retryable: Bool,
        retryAfter: Double?,
        current: Int,
        madeProgress: Bool
    ) -> Next? {
        if madeProgress { self.backoffStep = 0 }
        self.tried.insert(current)
        if !retryable { self.dead.insert(current) }
        // Local failures and bad input end the run: no server can cure them.
        guard code != .fileIO, code != .usage, code != .cancelled else { return nil }
        let dead = self.dead
        let count = self.mirrorCount
        guard let mirror = (1...count).lazy.map({ (current + $0) % count }).first(where: { !dead.contains($0) }) else {
            return nil
        }
        if !self.tried.contains(mirror) { return Next(mirror: mirror, delay: 0) }
        guard self.retriesUsed < self.retries else { return nil }
        self.retriesUsed += 1
        let delay = self.delay(step: self.backoffStep, retryAfter: retryAfter)
        self.backoffStep += 1
        return Next(mirror: mirror, delay: delay)
    }

    /// `retryDelay × 2^step` drawn in its upper half, at least `retryAfter`, at most the maximum.
    func delay(step: Int, retryAfter: Double?) -> Double {
        let exponential = min(self.maximumRetryDelay, self.retryDelay * pow(2, Double(min(step, 30))))
        let jittered = exponential > 0 ? self.jitter((exponential / 2)...exponential) : 0
        return min(self.maximumRetryDelay, max(jittered, retryAfter ?? 0))
    }
}
