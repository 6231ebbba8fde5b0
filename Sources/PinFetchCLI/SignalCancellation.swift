@preconcurrency import Glibc
import PinFetch
import Synchronization

/// Turns SIGHUP, SIGINT and SIGTERM into a cancellation, remembering which signal came.
///
/// ``holdStopSignals()`` blocks them first thing in `main`, before any thread exists, so every
/// thread inherits the block; ``install(_:)`` then takes them through a `signalfd` on a thread
/// of its own. A signal that comes before the install waits, pending, and cancels the run as
/// soon as it is installed: none is lost in between (a `SIGINT` in the first
/// ~10 ms let the whole download run to exit 0). That thread may run late on a loaded machine,
/// so the download asks ``stopRequested`` itself before it places a file: a signal pending or
/// taken counts, and the two are one step under a lock (never neither in between). A signal the parent set to be ignored
/// (`nohup` ignores SIGHUP) stays ignored, as the convention asks.
public final class SignalCancellation: Sendable {
    private static let stopSignals = [SIGHUP, SIGINT, SIGTERM]
    /// The stop signals that were not ignored when ``holdStopSignals()`` ran; all three in a
    /// process that never called it (pinfetch as a library).
    private static let watched = Mutex<[Int32]>(SignalCancellation.stopSignals)

    /// Whether any installed ``SignalCancellation`` took a stop signal in this process.
    private static let anyReceived = Atomic<Bool>(false)
    /// Held while a signal is taken off the pending set and recorded, and while the two are
    /// looked at: a signal is always seen as one or the other.
    private static let taking = Mutex<Void>(())

    private let signal = Atomic<Int32>(0)
    private let stopped = Atomic<Bool>(false)

    /// Whether a stop signal came in this process (to any installed instance): waits that
    /// cannot be cancelled as a task is (reading ``InputFile``s while the arguments are parsed)
    /// look here.
    /// A stop signal still pending (blocked, not yet taken by the signal thread) counts: an
    /// input's end that comes with it (Ctrl-C ends `producer | pinfetch -i -` too) is no input.
    static var stopRequested: Bool {
        Self.taking.withLock { _ in Self.anyReceived.load(ordering: .acquiring) || Self.stopPending }
    }

    /// Whether this run was asked to stop: a stop signal this instance took, or one still
    /// pending in the process (taken late by a thread that has not run yet).
    var stopRequested: Bool { self.stopSignal != nil }

    /// The signal that stops this run: the first this instance took, else one still pending.
    var stopSignal: Int32? {
        Self.taking.withLock { _ in self.received ?? Self.pendingStop }
    }

    private static var stopPending: Bool { Self.pendingStop != nil }

    /// A watched stop signal that is pending (blocked, not yet taken), if any.
    private static var pendingStop: Int32? {
        var pending = sigset_t()
        guard sigpending(&pending) == 0 else { return nil }
        return Self.watched.withLock { $0 }.first { sigismember(&pending, $0) == 1 }
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
            var now = timespec(tv_sec: 0, tv_nsec: 0)
            while !self.stopped.load(ordering: .acquiring) {
                // Taken and recorded in one step under the lock, never waiting while holding it:
                // a look every 10 ms (a wait inside `sigtimedwait` would take the signal off the
                // pending set before it could be recorded).
                let taken = Self.taking.withLock { _ -> Bool in
                    let number = sigtimedwait(&set, nil, &now)
                    guard number > 0 else { return false }
                    _ = self.signal.compareExchange(expected: 0, desired: number, ordering: .relaxed)
                    Self.anyReceived.store(true, ordering: .releasing)
                    return true
                }
                if taken { cancel() } else { usleep(10_000) }
            }
        }
    }

    /// Stops taking signals (the waiting thread ends within 10 ms).
    func uninstall() {
        self.stopped.store(true, ordering: .releasing)
    }
}
