/// What one child run cost: the wall time seen by the parent and the child's own resource
/// usage from `wait4(2)`, which includes the children it waited for (a shell pipeline's tools).
struct Measurement: Sendable {
    /// Seconds from just before `posix_spawn` to the return of `wait4`.
    var wallSeconds: Double
    /// `ru_utime` in seconds.
    var userSeconds: Double
    /// `ru_stime` in seconds.
    var systemSeconds: Double
    /// `ru_maxrss`: the largest resident set of the child or of any waited-for descendant, and
    /// never below the spawner's own peak at `execve` (KiB).
    var maxRSSKiB: Int
    /// The exit code, or 128 + the signal number when a signal ended the child.
    var exitStatus: Int32

    /// User + system CPU seconds.
    var cpuSeconds: Double { self.userSeconds + self.systemSeconds }

    /// Peak resident set in MiB.
    var maxRSSMiB: Double { Double(self.maxRSSKiB) / 1024 }
}
