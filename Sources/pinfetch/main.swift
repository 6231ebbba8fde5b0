import Dispatch
import PinFetchCLI
import Synchronization

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

// First, before any thread exists: closed standard descriptors get /dev/null (else the next
// descriptor opened would take their number, and output would go into it).
CommandLineTool.Output.reserveStandardDescriptors()
// SIGHUP, SIGINT and SIGTERM wait, blocked, for the fetch to take them, so one that comes early
// is not lost (`gc` keeps their default actions).
let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first != "gc" { SignalCancellation.holdStopSignals() }
// Text is UTF-8 whatever the environment's locale: libcurl hands an internationalized host
// name to libidn2 as text in the locale's character set, and under the C locale (most CI
// containers) every non-ASCII name would fail to convert.
setlocale(LC_CTYPE, "C.UTF-8")
// A reader that closes the pipe early (`pinfetch -o - URL | head -c 10`) gives EPIPE, reported
// with exit 3, instead of a silent death by SIGPIPE.
signal(SIGPIPE, SIG_IGN)

/// The exit status, handed from the task that runs the command to the main thread.
final class ExitStatus: Sendable {
    let value = Mutex<Int32>(1)
    let done = DispatchSemaphore(value: 0)
}

// The main thread waits here rather than in an `await` at top level: an async main drains the
// main queue with `dispatch_main`, which unblocks every signal on this thread.
let ending = ExitStatus()
Task.detached {
    let status = await CommandLineTool.run(arguments)
    ending.value.withLock { $0 = status }
    ending.done.signal()
}
ending.done.wait()
exit(ending.value.withLock { $0 })
