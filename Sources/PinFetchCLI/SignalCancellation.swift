@preconcurrency import Glibc
import PinFetch
import Synchronization

/// Turns SIGHUP, SIGINT and SIGTERM into a cancellation, remembering which signal came.
///
/// ``holdStopSignals()`` blocks them first thing in `main`, before any thread exists, so every
/// thread inherits the block; ``install(_:)`` then takes them with `sigtimedwait` on a thread of
/// its own. A signal that comes before the install waits, pending, and cancels the run as soon
/// as it is installed: none is lost in between (a `SIGINT` in the first
/// ~10 ms let the whole download run to exit 0). A signal the parent set to be ignored
/// (`nohup` ignores SIGHUP) stays ignored, as the convention asks.
public final class SignalCancellation: Sendable {
    private static let stopSignals = [SIGHUP, SIGINT, SIGTERM]
    /// The stop signals that were not ignored when ``holdStopSignals()`` ran; all three in a
    /// process that never called it (pinfetch as a library).
    private static let watched = Mutex<[Int32]>(SignalCancellation.stopSignals)

    /// Whether any installed ``SignalCancellation`` took a stop signal in this process.
    private static let anyReceived = Atomic<Bool>(false)

    private let signal = Atomic<Int32>(0)
    private let stopped = Atomic<Bool>(false)

    /// Whether a stop signal came in this process (to any installed instance): waits that
    /// cannot be cancelled as a task is (reading ``InputFile``s while the arguments are parsed)
    /// look here.
    /// A stop signal still pending (blocked, not yet taken by the signal thread) counts: an
    /// input's end that comes with it (Ctrl-C ends `producer | pinfetch -i -` too) is no input.
    static var stopRequested: Bool {
        if Self.anyReceived.load(ordering: .acquiring) { return true }
        var pending = sigset_t()
        if sigpending(&pending) == 0, Self.watched.withLock({ $0 }).contains(where: { sigismember(&pending, $0) == 1 })
        {
            return true
        }
        return Self.anyReceived.load(ordering: .acquiring)  // taken meanwhile
    }

    /// Blocks the stop signals the parent did not ignore in the calling thread and in every
    /// thread it starts later. Call it first in `main`, before any other thread exists.
    public static func holdStopSignals() {
        var set = sigset_t()
        sigemptyset(&set)
        var watched: [Int32] = []
        for number in Self.stopSignals {
            var current = sigaction()
            guard sigaction(number, nil, &current) == 0 else { continue }
            let handler = current.__sigaction_handler.sa_handler.map { unsafeBitCast($0, to: Int.self) } ?? 0
            if handler == unsafeBitCast(SIG_IGN, to: Int.self) { continue }
            watched.append(number)
            sigaddset(&set, number)
        }
        Self.watched.withLock { $0 = watched }
        pthread_sigmask(SIG_BLOCK, &set, nil)
    }

    public init() {}

    /// The first signal received, if any.
    var received: Int32? {
        let value = self.signal.load(ordering: .relaxed)
        return value == 0 ? nil : value
    }

    /// Calls `cancel` (on a thread of its own) when a stop signal comes, until ``uninstall()``.
    /// A stop signal already pending counts.
    func install(_ cancel: @escaping @Sendable () -> Void) {
        var set = sigset_t()
        sigemptyset(&set)
        for number in Self.watched.withLock({ $0 }) { sigaddset(&set, number) }
        // `sigtimedwait` takes only blocked signals; in a process whose main did not hold them,
        // this thread's block is the best that can be done.
        pthread_sigmask(SIG_BLOCK, &set, nil)
        let waiting = set
        Threads.detach(name: "pinfetch-signal") { [self] in
            var set = waiting
            var timeout = timespec(tv_sec: 0, tv_nsec: 100_000_000)  // to notice the uninstall
            while !self.stopped.load(ordering: .acquiring) {
                let number = sigtimedwait(&set, nil, &timeout)
                guard number > 0 else { continue }
                _ = self.signal.compareExchange(expected: 0, desired: number, ordering: .relaxed)
                Self.anyReceived.store(true, ordering: .releasing)
                cancel()
            }
        }
    }

    /// Stops taking signals (the waiting thread ends within 0.1 s).
    func uninstall() {
        self.stopped.store(true, ordering: .releasing)
    }
}
