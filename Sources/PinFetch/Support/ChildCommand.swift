import FoundationEssentials
@preconcurrency import Glibc

/// Runs a helper program the user named (an AWS `credential_process`): its standard input is
/// given bytes, its output and error are read up to a bound, and it is killed when it runs past
/// its time, so a helper that hangs cannot hang the download.
struct ChildCommand {
    /// What the program did: its exit status (`nil` when it was killed or ended by a signal),
    /// and up to ``limit`` bytes of each output.
    struct Ended {
        var status: Int32?
        var output: [UInt8]
        var error: [UInt8]
        var timedOut: Bool
        /// Killed because the run was cancelled.
        var cancelled = false

        /// Why a credentials helper named `name` gave nothing usable, or `nil` when it exited 0:
        /// cancelled (``PinFetchError/Code/cancelled``), past its time (`timeLimit`, the words
        /// after "within"), or an exit status other than 0 with its first line of standard
        /// error, what looks like a secret hidden (``Redaction/helperLine(_:)``); the others
        /// are ``PinFetchError/Code/authentication``.
        func failure(of name: String, timeLimit: String) -> PinFetchError? {
            if self.cancelled { return PinFetchError(.cancelled, "\(name): cancelled") }
            if self.timedOut { return PinFetchError(.authentication, "\(name) gave no answer within \(timeLimit)") }
            guard self.status != 0 else { return nil }
            let why = self.firstErrorLine.isEmpty ? "" : ": \(Redaction.helperLine(self.firstErrorLine))"
            return PinFetchError(
                .authentication,
                "\(name) failed (\(self.status.map { "exit \($0)" } ?? "killed by a signal"))\(why)"
            )
        }

        /// The first line of its standard error, at most 200 characters, for a message.
        var firstErrorLine: String {
            let line = self.error.split(separator: UInt8(ascii: "\n")).first.map { Array($0) } ?? []
            return String(String(decoding: line, as: UTF8.self).trimmingWhitespace().prefix(200))
        }
    }

    /// Bytes kept of each output.
    static let limit = 1 << 20

    /// Runs `arguments` (the first is the program: a path, or a name looked up in `PATH`) with
    /// `input` on its standard input, for at most `timeout` seconds.
    /// - Throws: ``PinFetchError/Code/generic`` when it cannot be started.
    /// It is also killed once `isCancelled` (asked about every 100 ms) says so. It runs in a
    /// process group of its own, and a kill ends the whole group (a `sleep` its script started).
    static func run(
        _ arguments: [String],
        input: [UInt8] = [],
        timeout: Double,
        isCancelled: () -> Bool = { false }
    ) throws(PinFetchError) -> Ended {
        guard let program = arguments.first, let executable = Self.resolve(program) else {
            throw PinFetchError(.generic, "cannot run '\(arguments.first ?? "")': not found")
        }
        var pipes: [[Int32]] = []
        for _ in 0..<3 {
            var fds: [Int32] = [-1, -1]
            guard pipe(&fds) == 0 else {
                for fd in pipes.joined() { close(fd) }
                throw PinFetchError(.generic, "pipe: \(String(cString: strerror(errno)))")
            }
            for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }  // the child gets them by dup2 only
            pipes.append(fds)
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, pipes[0][0], 0)
        posix_spawn_file_actions_adddup2(&actions, pipes[1][1], 1)
        posix_spawn_file_actions_adddup2(&actions, pipes[2][1], 2)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // A clean signal mask and default dispositions: the caller may block SIGINT for its own thread.
        var empty = sigset_t()
        sigemptyset(&empty)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(
            &attributes,
            Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP)
        )
        var pid: pid_t = 0
        let argv = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let spawned = posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
        close(pipes[0][0])
        close(pipes[1][1])
        close(pipes[2][1])
        guard spawned == 0 else {
            for fd in [pipes[0][1], pipes[1][0], pipes[2][0]] { close(fd) }
            throw PinFetchError(.generic, "cannot run '\(program)': \(String(cString: strerror(spawned)))")
        }
        // The input is small (a JSON line): written at once, then closed; a child that does not
        // read it gets EPIPE, never this process a SIGPIPE (MSG_NOSIGNAL is for sockets: ignored here).
        _ = input.withUnsafeBytes { write(pipes[0][1], $0.baseAddress, $0.count) }
        close(pipes[0][1])
        var ended = Ended(status: nil, output: [], error: [], timedOut: false)
        let deadline = ContinuousClock.now + .milliseconds(Int64(timeout * 1000))
        var open = [pipes[1][0], pipes[2][0]]
        var buffer = [UInt8](repeating: 0, count: 16 << 10)
        while !open.isEmpty {
            let left = deadline - ContinuousClock.now
            guard left > .zero, !isCancelled() else {
                ended.timedOut = left <= .zero
                ended.cancelled = left > .zero
                kill(-pid, SIGKILL)
                break
            }
            var polled = open.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            let milliseconds = Int32(min(100, max(1, left.components.seconds * 1000 + 1)))
            guard poll(&polled, nfds_t(polled.count), milliseconds) >= 0 || errno == EINTR else { break }
            for entry in polled where entry.revents != 0 {
                let count = buffer.withUnsafeMutableBytes { read(entry.fd, $0.baseAddress, $0.count) }
                if count <= 0 {
                    close(entry.fd)
                    open.removeAll { $0 == entry.fd }
                } else if entry.fd == pipes[1][0] {
                    if ended.output.count < Self.limit { ended.output += buffer[0..<count] }
                } else if ended.error.count < Self.limit {
                    ended.error += buffer[0..<count]
                }
            }
        }
        for fd in open { close(fd) }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        if !ended.timedOut, status & 0x7F == 0 { ended.status = (status >> 8) & 0xFF }
        return ended
    }

    /// `program` itself when it holds a `/`, else the first executable of that name in `PATH`.
    static func resolve(_ program: String) -> String? {
        if program.contains("/") { return access(program, X_OK) == 0 ? program : nil }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = Text.path(String(directory), program)
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }

    /// `line` split into words as a POSIX shell splits a simple command, without expanding
    /// anything: blanks separate words, `'…'` and `"…"` quote, `\` escapes the next character
    /// (the AWS CLI splits `credential_process` so, and runs no shell).
    /// - Returns: `nil` for an unterminated quote.
    static func words(_ line: String) -> [String]? {
        var words: [String] = []
        var word = ""
        var inWord = false
        var quote: Character?
        var escaped = false
        for character in line {
            if escaped {
                word.append(character)
                escaped = false
            } else if let open = quote {
                if character == open {
                    quote = nil
                } else if character == "\\", open == "\"" {
                    escaped = true
                } else {
                    word.append(character)
                }
            } else if character == "'" || character == "\"" {
                quote = character
                inWord = true
            } else if character == "\\" {
                escaped = true
                inWord = true
            } else if character == " " || character == "\t" {
                if inWord { words.append(word) }
                word = ""
                inWord = false
            } else {
                word.append(character)
                inWord = true
            }
        }
        guard quote == nil, !escaped else { return nil }
        if inWord { words.append(word) }
        return words
    }
}
