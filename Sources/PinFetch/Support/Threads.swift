@preconcurrency import Glibc

/// Threads of pinfetch's own: POSIX threads directly, as Foundation's
/// `Thread` would link all of Foundation and ICU's data into the binary.
package enum Threads {
    private final class Start {
        let name: String?
        let body: @Sendable () -> Void
        init(name: String?, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }

    /// Runs `body` on a new detached thread named `name` (Linux keeps 15 bytes of it).
    /// Traps when the system cannot create a thread (`EAGAIN`: out of threads or memory), as
    /// `Thread.start()` does.
    package static func detach(name: String? = nil, _ body: @escaping @Sendable () -> Void) {
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        let start = Unmanaged.passRetained(Start(name: name, body: body)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(
            &thread,
            &attributes,
            { context in
                let start = Unmanaged<Start>.fromOpaque(context!).takeRetainedValue()
                if let name = start.name { _ = setThreadName(pthread_self(), String(name.utf8.prefix(15))!) }
                start.body()
                return nil
            },
            start
        )
        precondition(result == 0, "cannot create a thread: \(String(cString: strerror(result)))")
    }

    /// Runs `body` on a thread that an earlier body of ``runPooled(_:)`` left idle, or on a new
    /// one. A thread waits up to 5 s for the next body before it ends. For work that comes and
    /// goes with each file of a batch (its hashing thread): creating a thread per file cost a few
    /// percent of a many-file batch's CPU.
    static func runPooled(_ body: @escaping @Sendable () -> Void) {
        ThreadPool.shared.run(body)
    }

    /// Blocks the calling thread for `seconds` (interrupted sleeps resume).
    static func sleep(_ seconds: Double) {
        guard seconds > 0 else { return }
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - seconds.rounded(.down)) * 1e9))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0, errno == EINTR { request = remaining }
    }
}

/// glibc's `pthread_setname_np` (declared only with `_GNU_SOURCE`, so not in the Glibc module).
@_silgen_name("pthread_setname_np")
private func setThreadName(_ thread: pthread_t, _ name: UnsafePointer<CChar>) -> Int32

/// A mutex with a condition variable (`pthread_mutex_t` + `pthread_cond_t` on the monotonic
/// clock), used as Foundation's `NSCondition` is: `lock`, `wait`, `broadcast`, `unlock`.
final class Condition: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    init() {
        pthread_mutex_init(self.mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(self.condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(self.condition)
        pthread_mutex_destroy(self.mutex)
        self.condition.deallocate()
        self.mutex.deallocate()
    }

    func lock() { pthread_mutex_lock(self.mutex) }
    func unlock() { pthread_mutex_unlock(self.mutex) }
    /// Waits for a signal; the lock must be held (it is released while waiting).
    func wait() { pthread_cond_wait(self.condition, self.mutex) }
    func broadcast() { pthread_cond_broadcast(self.condition) }
    /// Wakes one waiting thread.
    func signal() { pthread_cond_signal(self.condition) }

    /// Waits for a signal for `seconds` at most; `false` when the time ran out.
    @discardableResult
    func wait(seconds: Double) -> Bool {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let total = Double(now.tv_sec) + Double(now.tv_nsec) / 1e9 + max(0, seconds)
        var deadline = timespec(tv_sec: Int(total), tv_nsec: Int((total - total.rounded(.down)) * 1e9))
        return pthread_cond_timedwait(self.condition, self.mutex, &deadline) == 0
    }
}

/// Idle threads of ``Threads/runPooled(_:)`` and the bodies waiting for one.
/// `@unchecked Sendable`: every field is guarded by `condition`.
final class ThreadPool: @unchecked Sendable {
    static let shared = ThreadPool()
    private let condition = Condition()
    private var waiting: [@Sendable () -> Void] = []
    private var idle = 0
    private var started = 0

    /// Threads this pool created so far.
    var threadsStarted: Int {
        self.condition.lock()
        defer { self.condition.unlock() }
        return self.started
    }

    func run(_ body: @escaping @Sendable () -> Void) {
        self.condition.lock()
        if self.idle > self.waiting.count {
            self.waiting.append(body)
            self.condition.signal()  // every idle thread waits for the same thing: one is enough
            self.condition.unlock()
            return
        }
        self.started += 1
        self.condition.unlock()
        Threads.detach(name: "pinfetch.pool") { [self] in
            var next: (@Sendable () -> Void)? = body
            while let work = next {
                work()
                next = self.take()
            }
        }
    }

    /// The next body, or `nil` after 5 s without one.
    private func take() -> (@Sendable () -> Void)? {
        self.condition.lock()
        defer { self.condition.unlock() }
        self.idle += 1
        defer { self.idle -= 1 }
        let deadline = ContinuousClock.now + .seconds(5)
        while self.waiting.isEmpty {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return nil }
            self.condition.wait(
                seconds: Double(left.components.seconds) + Double(left.components.attoseconds) / 1e18
            )
        }
        return self.waiting.removeFirst()
    }
}
