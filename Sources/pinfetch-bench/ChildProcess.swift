import Foundation
@preconcurrency import Glibc

/// Spawns and measures child processes.
enum ChildProcess {
    /// The environment children get: ours without proxy variables, so loopback requests go
    /// straight to the local nginx.
    static let environment: [String] = ProcessInfo.processInfo.environment
        .filter { !$0.key.lowercased().hasSuffix("_proxy") }
        .map { "\($0.key)=\($0.value)" }
        .sorted()

    /// Starts `command`. Signals the benchmark ignores or handles come back to their defaults
    /// in the child, and its signal mask is empty.
    static func spawn(_ command: Command) throws(BenchError) -> RunningChild {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        let writeFlags = O_WRONLY | O_CREAT | O_TRUNC
        posix_spawn_file_actions_addopen(&actions, 1, command.standardOutput ?? "/dev/null", writeFlags, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, command.standardError ?? "/dev/null", writeFlags, 0o644)
        return try self.spawn(command, actions: &actions)
    }

    /// Runs `command` to its end and measures it.
    static func run(_ command: Command) throws(BenchError) -> Measurement {
        try self.spawn(command).wait()
    }

    /// Runs `command` and returns its standard output and standard error together (for
    /// version lines; small outputs only).
    static func output(of command: Command) throws(BenchError) -> (text: String, exitStatus: Int32) {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw BenchError("pipe: \(String(cString: strerror(errno)))") }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        posix_spawn_file_actions_adddup2(&actions, fds[1], 2)
        let child: RunningChild
        do {
            child = try self.spawn(command, actions: &actions)
        } catch {
            close(fds[0])
            close(fds[1])
            throw error
        }
        close(fds[1])
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fds[0], $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            bytes += buffer[0..<count]
        }
        close(fds[0])
        let measurement = child.wait()
        return (String(decoding: bytes, as: UTF8.self), measurement.exitStatus)
    }

    private static func spawn(
        _ command: Command,
        actions: inout posix_spawn_file_actions_t
    ) throws(BenchError) -> RunningChild {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGINT, SIGTERM, SIGQUIT, SIGHUP, SIGPIPE, SIGCHLD, SIGUSR1, SIGUSR2] {
            sigaddset(&defaults, signal)
        }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        let argv = ([command.executable] + command.arguments).map { strdup($0) } + [nil]
        let envp = self.environment.map { strdup($0) } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: pid_t = 0
        let start = ContinuousClock.now
        let code = posix_spawn(&pid, command.executable, &actions, &attributes, argv, envp)
        guard code == 0 else {
            throw BenchError("cannot start \(command.executable): \(String(cString: strerror(code)))")
        }
        ChildRegistry.shared.remember(pid)
        return RunningChild(pid: pid, command: command, start: start)
    }
}

extension Duration {
    /// The duration in seconds.
    var seconds: Double {
        let parts = self.components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }
}
