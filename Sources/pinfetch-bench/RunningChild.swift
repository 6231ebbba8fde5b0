@preconcurrency import Glibc

/// A child started with `posix_spawn`, waited for with `wait4`: its rusage covers it and the
/// children it waited for (``Measurer`` explains why `ru_maxrss` also needs a small spawner).
final class RunningChild {
    let pid: pid_t
    let command: Command
    private let start: ContinuousClock.Instant
    private var finished: Measurement?

    init(pid: pid_t, command: Command, start: ContinuousClock.Instant) {
        self.pid = pid
        self.command = command
        self.start = start
    }

    /// Sends `signal` to the child (nothing once it has been reaped).
    func send(_ signal: Int32) {
        guard self.finished == nil else { return }
        kill(self.pid, signal)
    }

    /// The measurement if the child has ended, without blocking.
    func poll() -> Measurement? {
        if let finished = self.finished { return finished }
        return self.reap(options: WNOHANG)
    }

    /// Waits for the child to end.
    func wait() -> Measurement {
        while true {
            if let finished = self.finished { return finished }
            if let measurement = self.reap(options: 0) { return measurement }
        }
    }

    private func reap(options: Int32) -> Measurement? {
        var status: Int32 = 0
        var usage = rusage()
        let result = wait4(self.pid, &status, options, &usage)
        let end = ContinuousClock.now
        if result == 0 || (result < 0 && errno == EINTR) { return nil }
        guard result == self.pid else {
            // ECHILD: someone else reaped it; nothing is known but that it ended.
            self.finished = Measurement(
                wallSeconds: (end - self.start).seconds,
                userSeconds: 0,
                systemSeconds: 0,
                maxRSSKiB: 0,
                exitStatus: 255
            )
            ChildRegistry.shared.forget(self.pid)
            return self.finished
        }
        let signal = status & 0x7F
        let exitStatus = signal == 0 ? (status >> 8) & 0xFF : 128 + signal
        let measurement = Measurement(
            wallSeconds: (end - self.start).seconds,
            userSeconds: Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6,
            systemSeconds: Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6,
            maxRSSKiB: usage.ru_maxrss,
            exitStatus: exitStatus
        )
        self.finished = measurement
        ChildRegistry.shared.forget(self.pid)
        return measurement
    }
}
