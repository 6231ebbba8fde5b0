import Testing

@testable import PinFetch

/// Retries and mirrors: where the next attempt goes and how long it waits.
struct RetryPolicyTests {
    /// A policy whose jitter always takes the top of its range, so delays are exact.
    static func policy(retries: Int = 2, delay: Double = 1, mirrors: Int = 1) -> RetryPolicy {
        var options = FetchOptions()
        options.retries = retries
        options.retryDelay = delay
        options.maximumRetryDelay = 60
        var policy = RetryPolicy(options: options, mirrorCount: mirrors)
        policy.jitter = { $0.upperBound }
        return policy
    }

    @Test func `retries on one mirror back off exponentially, then give up`() {
        var policy = Self.policy(retries: 3)
        let delays = (0..<4).map { _ in
            policy.next(after: .network, retryable: true, retryAfter: nil, current: 0, madeProgress: false)?.delay
        }
        #expect(delays == [1, 2, 4, nil])
    }

    @Test func `progress starts the back-off over`() {
        var policy = Self.policy(retries: 3)
        _ = policy.next(after: .network, retryable: true, retryAfter: nil, current: 0, madeProgress: false)
        _ = policy.next(after: .network, retryable: true, retryAfter: nil, current: 0, madeProgress: false)
        let after = policy.next(after: .network, retryable: true, retryAfter: nil, current: 0, madeProgress: true)
        #expect(after?.delay == 1)
    }

    @Test func `Retry-After raises the delay, never past the maximum`() {
        var policy = Self.policy()
        #expect(
            policy.next(after: .serverResponse, retryable: true, retryAfter: 7, current: 0, madeProgress: false)?.delay
                == 7
        )
        #expect(
            policy.next(after: .serverResponse, retryable: true, retryAfter: 600, current: 0, madeProgress: false)?
                .delay == 60
        )
    }

    @Test func `a mirror not tried yet is an alternative: no wait, no retry used`() {
        var policy = Self.policy(retries: 0, mirrors: 3)
        let first = policy.next(after: .network, retryable: true, retryAfter: nil, current: 0, madeProgress: false)
        #expect(first == RetryPolicy.Next(mirror: 1, delay: 0))
        let second = policy.next(
            after: .serverResponse,
            retryable: false,
            retryAfter: nil,
            current: 1,
            madeProgress: false
        )
        #expect(second == RetryPolicy.Next(mirror: 2, delay: 0))
        // Every mirror tried and no retries left.
        #expect(policy.next(after: .network, retryable: true, retryAfter: nil, current: 2, madeProgress: false) == nil)
    }

    @Test func `a mirror that failed for good is skipped on retries`() {
        var policy = Self.policy(retries: 2, mirrors: 2)
        _ = policy.next(after: .serverResponse, retryable: false, retryAfter: nil, current: 0, madeProgress: false)
        let next = policy.next(after: .network, retryable: true, retryAfter: nil, current: 1, madeProgress: false)
        #expect(next == RetryPolicy.Next(mirror: 1, delay: 1))
    }

    @Test(arguments: [PinFetchError.Code.fileIO, .usage, .cancelled])
    func `local failures end the run whatever is left`(code: PinFetchError.Code) {
        var policy = Self.policy(retries: 5, mirrors: 3)
        #expect(policy.next(after: code, retryable: true, retryAfter: nil, current: 0, madeProgress: false) == nil)
    }
}
