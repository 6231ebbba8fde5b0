import Foundation
@preconcurrency import Glibc

/// How a child process ended.
enum Termination: Hashable, Sendable, CustomStringConvertible {
    /// It called `exit` with this status.
    case exited(Int32)
    /// A signal (`SIGKILL`, …) ended it.
    case signalled(Int32)

    /// Decodes a `wait` status (the `WIFEXITED`/`WTERMSIG` macros do not come through to Swift).
    init(waitStatus: Int32) {
        let signal = waitStatus & 0x7f
        self = signal == 0 ? .exited((waitStatus >> 8) & 0xff) : .signalled(signal)
    }

    /// The shell's number for it: the exit status, or 128 + the signal.
    var status: Int32 {
        switch self {
        case .exited(let status): status
        case .signalled(let signal): 128 + signal
        }
    }

    var description: String {
        switch self {
        case .exited(let status): "exit status \(status)"
        case .signalled(let signal): "signal \(signal)"
        }
    }
}

/// A program running as a child process, started as a shell would start it, whose standard output
/// and error go to files (a chatty child never blocks on a full pipe; the output can be read at
/// any time), and whose peak memory is watched while it runs.
///
/// Not Foundation's `Process`: that passes on the signal mask of the thread that starts it, and
/// the test threads block `SIGTERM`, `SIGQUIT`, `SIGINT` and more, so a foreground nginx would
/// never see its `SIGTERM` and pinfetch would not be tested as people run it. Here the child gets
/// an empty signal mask, default signal actions, and no descriptor of this process but 0-2.
/// Not `Sendable`: one test task starts, signals and waits for it.
final class ChildProcess {
    let executable: String
    let arguments: [String]
    let processIdentifier: pid_t
    /// The file that receives the child's standard output.
    let outputPath: String
    /// The file that receives the child's standard error.
    let errorPath: String
    /// How the child ended, once it was reaped.
    private(set) var termination: Termination?
    /// The child's peak resident set size in KiB: the largest `VmHWM` of `/proc/<pid>/status` seen
    /// while ``isRunning`` and ``wait(timeout:)`` polled (every 20 ms), `nil` before the first look.
    ///
    /// Not `ru_maxrss` from `wait4`/`getrusage(RUSAGE_CHILDREN)`: `posix_spawn` runs the child on
    /// this process's memory until `execve`, and `execve` counts that memory's current RSS into the
    /// child's `ru_maxrss`, so a child of a 200 MB test process "peaks" at 200 MB even as `/bin/true`.
    private(set) var peakResidentKiB: Int?

    /// Starts `executable` (an absolute path) with `arguments`; standard input is `/dev/null`.
    ///
    /// - Parameters:
    ///   - logs: A path prefix: output goes to `<logs>.out`, errors to `<logs>.err`.
    ///   - environment: Variables set for the child on top of this process's.
    /// - Throws: ``ChildProcessError`` when `posix_spawn` fails.
    init(_ executable: String, _ arguments: [String], logs: String, environment: [String: String] = [:]) throws {
        self.executable = executable
        self.arguments = arguments
        self.outputPath = logs + ".out"
        self.errorPath = logs + ".err"

        var actions = posix_spawn_file_actions_t()
        try Self.check(posix_spawn_file_actions_init(&actions), "posix_spawn_file_actions_init")
        defer { posix_spawn_file_actions_destroy(&actions) }
        let write = O_WRONLY | O_CREAT | O_TRUNC
        try Self.check(posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0), "addopen")
        try Self.check(posix_spawn_file_actions_addopen(&actions, 1, self.outputPath, write, 0o644), "addopen")
        try Self.check(posix_spawn_file_actions_addopen(&actions, 2, self.errorPath, write, 0o644), "addopen")
        // Nothing else of this process (other tests' sockets) goes along; a descriptor closed in
        // the meantime is no error (`posix_spawn_file_actions_addclosefrom_np` is not in Swift's Glibc).
        let inherited = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        for fd in inherited.compactMap({ Int32($0) }) where fd > 2 {
            try Self.check(posix_spawn_file_actions_addclose(&actions, fd), "addclose")
        }

        var attributes = posix_spawnattr_t()
        try Self.check(posix_spawnattr_init(&attributes), "posix_spawnattr_init")
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        var all = sigset_t()
        sigemptyset(&none)
        sigfillset(&all)
        try Self.check(posix_spawnattr_setsigmask(&attributes, &none), "setsigmask")
        try Self.check(posix_spawnattr_setsigdefault(&attributes, &all), "setsigdefault")
        let flags = Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)
        try Self.check(posix_spawnattr_setflags(&attributes, flags), "setflags")

        var argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        let variables = ProcessInfo.processInfo.environment.merging(environment) { _, set in set }
        var envp = variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for variable in envp { free(variable) } }
        var pid: pid_t = 0
        try Self.check(
            posix_spawn(&pid, executable, &actions, &attributes, &argv, &envp),
            "posix_spawn \(executable)"
        )
        self.processIdentifier = pid
    }

    deinit {
        if self.termination == nil { self.stop() }  // no child outlives its test, no zombie
    }

    /// Runs `executable` to its end (see ``init(_:_:logs:)`` and ``wait(timeout:)``).
    static func run(
        _ executable: String,
        _ arguments: [String],
        logs: String,
        timeout: Duration = .seconds(120)
    ) async throws -> ChildProcess {
        let child = try ChildProcess(executable, arguments, logs: logs)
        try await child.wait(timeout: timeout)
        return child
    }

    /// Whether the child still runs (reaping it when it has ended); notes its peak memory.
    var isRunning: Bool {
        self.samplePeakResident()
        return !self.reap(blocking: false)
    }

    /// Everything the child wrote to standard output so far.
    var standardOutput: String { (try? String(contentsOfFile: self.outputPath, encoding: .utf8)) ?? "" }

    /// Everything the child wrote to standard error so far.
    var standardError: String { (try? String(contentsOfFile: self.errorPath, encoding: .utf8)) ?? "" }

    /// The command line, how it ended and what it wrote, for failure messages.
    var transcript: String {
        let state = self.termination.map(\.description) ?? "still running"
        return """
            $ \(([self.executable] + self.arguments).joined(separator: " "))  (\(state))
            stdout: \(self.standardOutput)
            stderr: \(self.standardError)
            """
    }

    /// Sends `signal` (the C function is `kill`); a no-op once the child was reaped.
    func signal(_ signal: Int32) {
        guard self.termination == nil else { return }
        kill(self.processIdentifier, signal)
    }

    /// Waits for the end of the child, polling so that no thread of the test pool blocks.
    ///
    /// - Parameter timeout: How long to wait before the child is killed (`SIGKILL`) and this throws.
    /// - Returns: How the child ended.
    @discardableResult
    func wait(timeout: Duration = .seconds(120)) async throws -> Termination {
        let deadline = ContinuousClock.now + timeout
        while self.isRunning {
            if ContinuousClock.now >= deadline {
                self.stop(grace: .zero)
                throw ChildProcessError("killed after \(timeout) without an end:\n\(self.transcript)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        return self.termination!
    }

    /// Ends the child without blocking a thread of the test pool: `SIGTERM`, then `SIGKILL`
    /// after `grace`.
    func end(grace: Duration = .seconds(5)) async {
        guard self.isRunning else { return }
        self.signal(SIGTERM)
        let deadline = ContinuousClock.now + grace
        while self.isRunning, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(10)) }
        self.signal(SIGKILL)
        _ = self.reap(blocking: true)  // at once after SIGKILL
    }

    /// Blocks the calling thread until the child ends: `SIGTERM`, then `SIGKILL` after `grace`.
    /// For `deinit`, which cannot `await` (``end(grace:)`` does not block).
    func stop(grace: Duration = .seconds(5)) {
        guard self.isRunning else { return }
        self.signal(SIGTERM)
        let deadline = ContinuousClock.now + grace
        while self.isRunning, ContinuousClock.now < deadline { usleep(10_000) }
        self.signal(SIGKILL)
        _ = self.reap(blocking: true)
    }

    /// Reads `VmHWM` (peak RSS, in kB) from `/proc/<pid>/status`; a zombie has none.
    private func samplePeakResident() {
        guard self.termination == nil,
            let status = try? String(contentsOfFile: "/proc/\(self.processIdentifier)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
            let kib = line.split(whereSeparator: \.isWhitespace).dropFirst().first.flatMap({ Int($0) })
        else { return }
        self.peakResidentKiB = max(self.peakResidentKiB ?? 0, kib)
    }

    /// `waitpid` for this child; records how it ended. Returns whether it has ended.
    private func reap(blocking: Bool) -> Bool {
        guard self.termination == nil else { return true }
        var status: Int32 = 0
        while true {
            let reaped = waitpid(self.processIdentifier, &status, blocking ? 0 : WNOHANG)
            if reaped == self.processIdentifier { break }
            if reaped == 0 { return false }
            if errno == EINTR { continue }
            self.termination = .signalled(0)  // ECHILD: reaped elsewhere, nothing more to learn
            return true
        }
        self.termination = Termination(waitStatus: status)
        return true
    }

    private static func check(_ code: Int32, _ what: String) throws {
        guard code == 0 else { throw ChildProcessError("\(what): \(String(cString: strerror(code)))") }
    }
}

/// A child process could not be started or did not end in time.
struct ChildProcessError: Error, CustomStringConvertible {
    var description: String

    init(_ description: String) { self.description = description }
}

extension ChildProcess {
    /// Starts a server with `start(port, attempt)` on a free loopback port until one listens
    /// within 30 s (at most five tries: a port taken between the choice and the bind fails
    /// one); its process and port.
    static func listening(
        _ name: String,
        _ start: (_ port: Int, _ attempt: Int) throws -> ChildProcess
    ) async throws -> (child: ChildProcess, port: Int) {
        var failures: [String] = []
        for attempt in 1...5 {
            let port = try Nginx.freePort()
            let child = try start(port, attempt)
            let deadline = ContinuousClock.now + .seconds(30)
            while child.isRunning, ContinuousClock.now < deadline, !Nginx.accepts(port: port) {
                try await Task.sleep(for: .milliseconds(50))
            }
            if child.isRunning, Nginx.accepts(port: port) { return (child, port) }
            failures.append("try \(attempt), port \(port): \(child.transcript)")
            await child.end()
        }
        throw NginxError("\(name) did not start:\n" + failures.joined(separator: "\n"))
    }
}
