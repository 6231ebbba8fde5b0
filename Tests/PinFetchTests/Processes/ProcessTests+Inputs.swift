import Foundation
@preconcurrency import Glibc
import Testing

/// Input files that never open: a FIFO without a writer given as `-H @FILE`, `-i`,
/// `--checksum-file`, `--trusted-key`, `--signature`, `--netrc-file` or `--cacert`. The stop signals stay live while pinfetch
/// waits for it: each ends the run with 128 + its number, one line naming the file, and nothing
/// created; a pipe whose writer comes is read as before.
extension ProcessTests {
    /// Where the FIFO goes on the command line; the other inputs a run needs are real files.
    enum FIFOInput: String, CaseIterable {
        case headers = "-H @FIFO"
        case inputFile = "-i FIFO"
        case checksumFile = "--checksum-file FIFO"
        case trustedKey = "--trusted-key FIFO"
        case signature = "--signature FIFO"
        case netrcFile = "--netrc-file FIFO"
        case caCertificate = "--cacert FIFO"

        /// The arguments, with the FIFO at `fifo` and the other files in `work`.
        func arguments(_ fifo: String, _ work: String, url: String) -> [String] {
            switch self {
            case .headers: ["-H", "@" + fifo, "-o", work + "/out/file", url]
            case .inputFile: ["-i", fifo, "-P", work + "/out"]
            case .checksumFile: ["--checksum-file", fifo, "-o", work + "/out/file", url]
            case .trustedKey: ["--trusted-key", fifo, "--checksum-file", work + "/SUMS", "-o", work + "/out/file", url]
            case .signature:
                [
                    "--signature", fifo, "--trusted-key", work + "/release.pub", "--checksum-file", work + "/SUMS",
                    "-o", work + "/out/file", url,
                ]
            case .netrcFile: ["--netrc-file", fifo, "-o", work + "/out/file", url]
            case .caCertificate: ["--cacert", fifo, "-o", work + "/out/file", url]
            }
        }
    }

    /// Whether process `pid` holds `path` open (its `/proc/PID/fd` links): it is waiting on it.
    static func holdsOpen(_ pid: pid_t, _ path: String) -> Bool {
        let directory = "/proc/\(pid)/fd"
        return listing(directory).contains {
            (try? FileManager.default.destinationOfSymbolicLink(atPath: directory + "/" + $0)) == path
        }
    }

    @Test(arguments: FIFOInput.allCases, [SIGTERM, SIGINT, SIGHUP])
    func `a stop signal ends a run waiting for an input pipe that has no writer`(
        input: FIFOInput,
        signal: Int32
    ) async throws {
        try await withTestHTTPServer(serving: TestResource(body: Fixtures.a)) { server in
            try await withTemporaryDirectory { work in
                let output = try EndToEndTests.makeDirectory(work + "/out")
                let fifo = work + "/input"
                try #require(mkfifo(fifo, 0o600) == 0)
                try "\(Fixtures.sha256A)  file\n".write(toFile: work + "/SUMS", atomically: true, encoding: .utf8)
                try await SignedChecksumFileTests.minisignKey("release", in: work)
                let child = try self.startPinfetch(
                    input.arguments(fifo, work, url: server.url("/file")),
                    logs: work + "/run"
                )
                defer { child.stop() }
                try await Self.waitUntil("pinfetch holding \(fifo) open", child) {
                    Self.holdsOpen(child.processIdentifier, fifo)
                }
                child.signal(signal)
                let ended = try await child.wait(timeout: .seconds(10))
                #expect(ended == .exited(128 + signal), "\(child.transcript)")
                #expect(child.standardError.contains("stopped while waiting for '\(fifo)'"), "\(child.transcript)")
                #expect(listing(output).isEmpty, "\(listing(output))")
                #expect(server.requests.isEmpty)
            }
        }
    }

    /// Writes `text` into `fifo` once `child` holds it open waiting for a writer, and closes it.
    static func writeLate(_ text: String, to fifo: String, readBy child: ChildProcess) async throws {
        try await Self.waitUntil("pinfetch holding \(fifo) open", child) {
            Self.holdsOpen(child.processIdentifier, fifo)
        }
        let writer = open(fifo, O_WRONLY | O_CLOEXEC)
        try #require(writer >= 0)
        let bytes = Array(text.utf8)
        #expect(write(writer, bytes, bytes.count) == bytes.count)
        close(writer)
    }

    @Test func `an input pipe whose writer comes late is read, and the run goes on`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: Fixtures.a)) { server in
            try await withTemporaryDirectory { work in
                let fifo = work + "/headers"
                try #require(mkfifo(fifo, 0o600) == 0)
                let child = try self.startPinfetch(
                    ["-H", "@" + fifo, "--sha256", Fixtures.sha256A, "-o", work + "/file", server.url("/file")],
                    logs: work + "/run"
                )
                defer { child.stop() }
                try await Self.writeLate("X-Late: yes\n", to: fifo, readBy: child)
                let ended = try await child.wait(timeout: .seconds(30))
                #expect(ended == .exited(0), "\(child.transcript)")
                #expect(contents(work + "/file") == Fixtures.a)
                #expect(server.requests.first?.header("X-Late") == "yes")
            }
        }
    }

    /// `--netrc-file <(vault read …)`: a pipe is read once, and its credentials are used on
    /// every request to their host (the library reads a private copy of them by path).
    @Test func `a netrc file given as a pipe is read once, and its credentials used`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: Fixtures.a)) { server in
            try await withTemporaryDirectory { work in
                let fifo = work + "/netrc"
                try #require(mkfifo(fifo, 0o600) == 0)
                let child = try self.startPinfetch(
                    ["--netrc-file", fifo, "--sha256", Fixtures.sha256A, "-o", work + "/file", server.url("/file")],
                    logs: work + "/run"
                )
                defer { child.stop() }
                try await Self.writeLate(
                    "machine 127.0.0.1 login piped password Pip3dSecret\n",
                    to: fifo,
                    readBy: child
                )
                let ended = try await child.wait(timeout: .seconds(30))
                #expect(ended == .exited(0), "\(child.transcript)")
                #expect(contents(work + "/file") == Fixtures.a)
                let expected = "Basic " + Data("piped:Pip3dSecret".utf8).base64EncodedString()
                #expect(server.getRequests.first?.header("Authorization") == expected)
                #expect(!child.transcript.contains("Pip3dSecret"))
            }
        }
    }

    /// Ctrl-C on `producer | pinfetch -i -` stops the producer too: the end of the input comes
    /// with the signal, and is no empty input (it was exit 2, "lists no file to fetch").
    @Test(arguments: [["-i", "-", "-P", "OUT"], ["--checksum-file", "-", "-o", "OUT/file", "http://127.0.0.1:9/f"]])
    func `an input pipe that ends with a stop signal is a stop, not an empty input`(arguments: [String]) async throws {
        try await withTemporaryDirectory { work in
            let output = try EndToEndTests.makeDirectory(work + "/out")
            let pinfetch = try EndToEndTests.pinfetchExecutable()
            let command = ([pinfetch] + arguments.map { $0.replacingOccurrences(of: "OUT", with: output) })
                .joined(separator: " ")
            let shell = try ChildProcess(
                "/bin/sh",
                ["-c", "sleep 30 | \(command) 2> \(work)/err; echo $? > \(work)/status"],
                logs: work + "/shell"
            )
            defer { shell.stop() }
            var children: [pid_t] = []
            try await Self.waitUntil("the producer and pinfetch", shell) {
                let list = "/proc/\(shell.processIdentifier)/task/\(shell.processIdentifier)/children"
                children = ((try? String(contentsOfFile: list, encoding: .utf8)) ?? "").split(separator: " ")
                    .compactMap { pid_t($0) }
                return children.count == 2
                    && children.allSatisfy { pid in
                        (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8))?.hasPrefix("sh") == false
                    }
            }
            try await Task.sleep(for: .milliseconds(300))  // pinfetch is reading its input
            for pid in children { kill(pid, SIGINT) }  // as a terminal sends it to the whole pipeline
            try await shell.wait(timeout: .seconds(10))
            let status = (try? String(contentsOfFile: work + "/status", encoding: .utf8)) ?? ""
            let errors = (try? String(contentsOfFile: work + "/err", encoding: .utf8)) ?? ""
            #expect(status.trimmingCharacters(in: .whitespacesAndNewlines) == "130", "\(errors)")
            #expect(errors.contains("stopped while waiting for '-'"), "\(errors)")
            #expect(listing(output).isEmpty)
        }
    }

    /// `pinfetch -o - URL | reader` whose reader took one byte and stopped reading: a stop signal
    /// ends the run (143), though the pipe (or socket) is full and the write would wait forever;
    /// no more than what fits is written after it, and the private directory goes.
    @Test(arguments: ["pipe", "socket"])
    func `a stop signal ends -o - while the reader has stopped reading`(kind: String) async throws {
        let body = Self.pseudoRandomContent(8 << 20, seed: 27)
        try await withTestHTTPServer(serving: TestResource(body: body, etag: "\"p\"")) { server in
            try await withTemporaryDirectory { work in
                let temporary = try EndToEndTests.makeDirectory(work + "/tmp")
                let process = Process()
                process.executableURL = URL(filePath: try EndToEndTests.pinfetchExecutable())
                process.arguments = ["-q", "--sha256", Fixtures.sha256(body), "-o", "-", server.url()]
                process.environment = ["TMPDIR": temporary, "PATH": "/usr/bin:/bin"]
                let reader: FileHandle
                if kind == "pipe" {
                    let output = Pipe()
                    process.standardOutput = output
                    reader = output.fileHandleForReading
                } else {
                    var ends: [Int32] = [0, 0]
                    try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends) == 0)
                    process.standardOutput = FileHandle(fileDescriptor: ends[1], closeOnDealloc: true)
                    reader = FileHandle(fileDescriptor: ends[0], closeOnDealloc: true)
                }
                process.standardError = FileHandle(forWritingAtPath: "/dev/null")
                try process.run()
                defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
                if kind == "socket" { try (process.standardOutput as? FileHandle)?.close() }  // the child's now
                let first = try reader.read(upToCount: 1)
                #expect(first?.count == 1)
                // The pipe fills (64 KiB) and the write blocks; the download itself is done.
                try await Task.sleep(for: .milliseconds(500))
                kill(process.processIdentifier, SIGTERM)
                let deadline = ContinuousClock.now + .seconds(20)
                while process.isRunning, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
                #expect(!process.isRunning, "still running 20 s after SIGTERM")
                if !process.isRunning { #expect(process.terminationStatus == 143) }
                let rest = try reader.readToEnd() ?? Data()
                #expect(rest.count < 4 << 20, "\(rest.count) bytes came after the signal")
                #expect(listing(temporary).isEmpty, "\(listing(temporary))")
            }
        }
    }
}
