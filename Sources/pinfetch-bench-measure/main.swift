@preconcurrency import Glibc
import Synchronization

// pinfetch-bench-measure RESULT-FILE PROGRAM [ARGUMENT...]
//
// Runs PROGRAM (an absolute path) with this process's standard input, output and error, waits
// for it with wait4(2), and writes one line to RESULT-FILE:
//
//     <exit status or 128+signal> <wall ns> <user µs> <system µs> <ru_maxrss KiB>
//
// Why a separate, Foundation-free program: at execve the kernel folds the peak RSS of the
// spawning process's memory into the child's ru_maxrss (with posix_spawn's vfork that is the
// parent's own peak). pinfetch-bench links Foundation and peaks near 28 MiB, which would hide
// every smaller child's peak; this helper peaks near 8 MiB. SIGINT and SIGTERM are passed on
// to the child. Exit status: 0 when the line was written, 127 when PROGRAM could not start,
// 2 on bad usage or an unwritable RESULT-FILE.

/// The running child, for the signal handler (stored once before handlers are installed).
let childPID = Atomic<pid_t>(0)

func fail(_ status: Int32, _ message: String) -> Never {
    fputs("pinfetch-bench-measure: \(message)\n", stderr)
    exit(status)
}

let arguments = CommandLine.arguments
guard arguments.count >= 3 else { fail(2, "usage: pinfetch-bench-measure RESULT-FILE PROGRAM [ARGUMENT...]") }
let resultPath = arguments[1]
let argv = arguments.dropFirst(2).map { strdup($0) } + [nil]

var pid: pid_t = 0
let start = ContinuousClock.now
let spawned = posix_spawn(&pid, arguments[2], nil, nil, argv, environ)
guard spawned == 0 else { fail(127, "cannot start \(arguments[2]): \(String(cString: strerror(spawned)))") }
childPID.store(pid, ordering: .releasing)
for number in [SIGINT, SIGTERM] {
    signal(number) { received in
        let child = childPID.load(ordering: .acquiring)
        if child > 0 { kill(child, received) }
    }
}

var status: Int32 = 0
var usage = rusage()
while wait4(pid, &status, 0, &usage) < 0 {
    guard errno == EINTR else { fail(2, "wait4: \(String(cString: strerror(errno)))") }
}
let wall = ContinuousClock.now - start
let signalNumber = status & 0x7F
let exitStatus = signalNumber == 0 ? (status >> 8) & 0xFF : 128 + signalNumber
let nanoseconds = wall.components.seconds * 1_000_000_000 + wall.components.attoseconds / 1_000_000_000
let user = Int(usage.ru_utime.tv_sec) * 1_000_000 + Int(usage.ru_utime.tv_usec)
let system = Int(usage.ru_stime.tv_sec) * 1_000_000 + Int(usage.ru_stime.tv_usec)
let line = "\(exitStatus) \(nanoseconds) \(user) \(system) \(usage.ru_maxrss)\n"

guard let file = fopen(resultPath, "w") else { fail(2, "cannot write \(resultPath)") }
guard fputs(line, file) >= 0, fclose(file) == 0 else { fail(2, "cannot write \(resultPath)") }
exit(0)
