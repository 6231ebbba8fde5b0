import Foundation
@preconcurrency import Glibc
import Synchronization
import Testing

@testable import PinFetch

/// ``ThreadPool`` (``Threads/runPooled(_:)``): every body runs, at once when others block, on a thread an
/// earlier body left idle when there is one.
struct ThreadPoolTests {
    @Test func `bodies run one after another reuse an idle thread`() async throws {
        let pool = ThreadPool()
        for _ in 0..<20 {
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                pool.run { done.resume() }
            }
            try await Task.sleep(for: .milliseconds(2))  // the thread is back waiting
        }
        #expect(pool.threadsStarted <= 3, "20 bodies in turn took \(pool.threadsStarted) threads")
    }

    @Test func `bodies that wait for each other all run at once`() async throws {
        let started = Atomic<Int>(0)
        let finished = Atomic<Int>(0)
        let pool = ThreadPool()
        for _ in 0..<12 {
            pool.run {
                started.add(1, ordering: .relaxed)
                let deadline = ContinuousClock.now + .seconds(10)
                while started.load(ordering: .relaxed) < 12, ContinuousClock.now < deadline { usleep(1000) }
                finished.add(1, ordering: .relaxed)
            }
        }
        let deadline = ContinuousClock.now + .seconds(10)
        while finished.load(ordering: .relaxed) < 12, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(finished.load(ordering: .relaxed) == 12)
        #expect(started.load(ordering: .relaxed) == 12)
        #expect(pool.threadsStarted == 12)
    }
}
