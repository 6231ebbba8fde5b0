import Foundation
@preconcurrency import Glibc
import Testing

@testable import PinFetch

/// What is already at the destination, and other pinfetch processes on it.
struct DestinationTests {
    static let quiet = ["-q", "--json", "--retry-delay", "0"]
    static var resourceA: TestResource { TestResource(body: Fixtures.a, etag: Fixtures.etagA) }
    static var pinA: Pin { get throws { try Pin(sha256Hex: Fixtures.sha256A) } }

    @Test func `a pinned file already in place is verified and not downloaded`() async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                try Data(Fixtures.a).write(to: URL(filePath: "\(directory)/out.bin"))
                let result = await Fetcher.immediate().run(
                    server.url(),
                    to: "\(directory)/out.bin",
                    verifying: try Self.pinA
                )
                #expect(result.error == nil, "\(failure(result))")
                #expect(result.status == .alreadyComplete)
                #expect(result.downloadedBytes == 0)
                #expect(result.bytes == 1_048_576)
                #expect(server.requests.isEmpty)
                #expect(listing(directory) == ["out.bin"])
            }
        }
    }

    @Test(arguments: [true, false])
    func `a different file in place is replaced`(pinned: Bool) async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                try Data(Fixtures.b).write(to: URL(filePath: "\(directory)/out.bin"))
                let pin = pinned ? try Self.pinA : nil
                let result = await Fetcher.immediate().run(server.url(), to: "\(directory)/out.bin", verifying: pin)
                #expect(result.error == nil, "\(failure(result))")
                #expect(result.status == .downloaded)
                #expect(contents("\(directory)/out.bin") == Fixtures.a)
            }
        }
    }

    @Test func `a second process waits for the lock, then finds the verified file`() async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            // About 9 s for A: the checks below fit inside even when CI's 5 GiB test holds the machine
            // for seconds (at 2.6 s the first run could end before its `.part` was seen).
            server.faults = TestFaults(bytesPerSecond: 120_000)
            try await withTemporaryDirectory { directory in
                let output = "\(directory)/out.bin"
                let pin = try Self.pinA
                async let first = Fetcher.immediate { $0.headers = ["X-Run: first"] }.run(
                    server.url(),
                    to: output,
                    verifying: pin
                )
                try await waitUntil { FileManager.default.fileExists(atPath: output + ".part") }
                let impatient = await Fetcher.immediate {
                    $0.lockTimeout = 0.1
                    $0.headers = ["X-Run: impatient"]
                }.run(
                    server.url(),
                    to: output,
                    verifying: pin
                )
                #expect(impatient.error?.code == .destinationLocked, "\(failure(impatient))")
                #expect(
                    impatient.error?.message.hasSuffix(
                        "is held by another process after 0.1 s (another pinfetch? --lock-timeout S waits longer)"
                    ) == true,
                    "\(failure(impatient))"
                )
                let second = await Fetcher.immediate { $0.headers = ["X-Run: second"] }.run(
                    server.url(),
                    to: output,
                    verifying: pin
                )
                let firstResult = await first
                #expect(firstResult.error == nil, "\(failure(firstResult))")
                #expect(second.error == nil, "\(failure(second))")
                #expect(second.status == .alreadyComplete)
                // Only the first asked (each run by its own header: a stray client of an earlier
                // test's port may knock on a loaded machine).
                let seen = server.requests.map { "\($0.method) \($0.target) \($0.header("X-Run") ?? "-")" }
                #expect(
                    server.getRequests.filter { $0.header("X-Run") == "first" }.count == firstResult.attempts,
                    "\(seen)"
                )
                #expect(
                    server.requests.allSatisfy { !["impatient", "second"].contains($0.header("X-Run")) },
                    "\(seen)"
                )
                #expect(contents(output) == Fixtures.a)
                #expect(listing(directory) == ["out.bin"])
            }
        }
    }
}

extension DestinationTests {
    /// The command line's part of the test above: a lock not had in time is exit 10, in the
    /// `--json` line too.
    @Test func `a run that does not get the lock in time is exit 10`() async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let output = "\(directory)/out.bin"
                let held = try DestinationLock(path: output + ".part.lock", timeout: 0)
                defer { held.release() }
                let impatient = await runCLI(
                    Self.quiet + ["--lock-timeout", "0.1", "--sha256", Fixtures.sha256A, "-o", output, server.url()]
                )
                #expect(impatient.status == 10)
                #expect((impatient.json["error"] as? [String: Any])?["exit_code"] as? Int == 10)
            }
        }
    }

    @Test func `a process waiting for the lock can be cancelled`() async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            // About 26 s for A, and the first run is cancelled once the waiting one was: it still
            // holds the lock then however loaded the machine (at 9 s, a run here under CI's load
            // finished first, and the "waiting" run found the lock free and asked).
            server.faults = TestFaults(bytesPerSecond: 40_000)
            try await withTemporaryDirectory { directory in
                let output = "\(directory)/out.bin"
                // Each run names itself, so the counts below are per run: on a loaded machine the
                // first may retry, and a stray client of an earlier test's port may knock.
                let first = Task {
                    await Fetcher.immediate { $0.headers = ["X-Run: first"] }.run(server.url(), to: output)
                }
                try await waitUntil { FileManager.default.fileExists(atPath: output + ".part") }
                let waiting = Task {
                    await Fetcher.immediate { $0.headers = ["X-Run: waiting"] }.run(server.url(), to: output)
                }
                try await Task.sleep(for: .milliseconds(200))
                waiting.cancel()
                let result = await waiting.value
                #expect(result.error?.code == .cancelled)
                try #require(FileManager.default.fileExists(atPath: output + ".part"), "the first run ended already")
                first.cancel()
                let firstResult = await first.value
                #expect(firstResult.error?.code == .cancelled, "\(failure(firstResult))")
                let seen = server.requests.map { "\($0.method) \($0.target) \($0.header("X-Run") ?? "-")" }
                #expect(server.requests.filter { $0.header("X-Run") == "waiting" }.isEmpty, "\(seen)")
                #expect(
                    server.getRequests.filter { $0.header("X-Run") == "first" }.count == firstResult.attempts,
                    "\(seen)"
                )
            }
        }
    }

    // MARK: - What stands at the destination

    /// A FIFO, a link to one, a link to a device (`/dev/null`: run as root, the rename would
    /// have replaced the link only, but `-o /dev/null` itself would destroy it), a link to a
    /// directory: exit 2 before any request, and the thing is still there.
    @Test(arguments: ["fifo", "link-to-fifo", "link-to-null", "link-to-directory"])
    func `a destination that is not a regular file is exit 2 before any request`(kind: String) async throws {
        try await withTestHTTPServer(serving: TestResource(body: Fixtures.a, etag: Fixtures.etagA)) { server in
            try await withTemporaryDirectory { directory in
                #expect(mkfifo("\(directory)/fifo", 0o644) == 0)
                try FileManager.default.createDirectory(atPath: "\(directory)/dir", withIntermediateDirectories: false)
                let links = [
                    "link-to-fifo": "\(directory)/fifo", "link-to-null": "/dev/null",
                    "link-to-directory": "\(directory)/dir",
                ]
                for (name, target) in links {
                    try FileManager.default.createSymbolicLink(
                        atPath: "\(directory)/\(name)",
                        withDestinationPath: target
                    )
                }
                let before = listing(directory)
                let run = await runCLI(["-q", "--sha256", Fixtures.sha256A, "-o", "\(directory)/\(kind)", server.url()])
                #expect(run.status == 2)
                #expect(run.standardError.contains("\(directory)/\(kind)"))
                // The library refuses it too, for callers that do not plan through the command line.
                let result = await Fetcher().run(server.url(), to: "\(directory)/\(kind)")
                #expect(result.error?.code == .usage)
                #expect(server.requests.isEmpty)
                #expect(listing(directory) == before)
                var info = stat()
                #expect(lstat("\(directory)/fifo", &info) == 0 && info.st_mode & S_IFMT == S_IFIFO)
            }
        }
    }

    /// A link to a regular file, or to nothing, is replaced by the verified file: the rename
    /// replaces the link itself, and what it pointed to is untouched.
    @Test(arguments: [true, false])
    func `a symbolic link at the destination is replaced, never written through`(dangling: Bool) async throws {
        try await withTestHTTPServer(serving: TestResource(body: Fixtures.a, etag: Fixtures.etagA)) { server in
            try await withTemporaryDirectory { directory in
                let target = "\(directory)/target"
                if !dangling { try Data("keep me".utf8).write(to: URL(filePath: target)) }
                let output = "\(directory)/out.bin"
                try FileManager.default.createSymbolicLink(atPath: output, withDestinationPath: target)
                let result = await Fetcher().run(server.url(), to: output, verifying: try Self.pinA)
                #expect(result.error == nil, "\(failure(result))")
                #expect(contents(output) == Fixtures.a)
                let type = try FileManager.default.attributesOfItem(atPath: output)[.type] as? FileAttributeType
                #expect(type == .typeRegular)
                #expect(contents(target) == (dangling ? nil : Array("keep me".utf8)))
            }
        }
    }

    /// Planted file: a symbolic link at the destination to a file that holds the pinned bytes.
    @Test func `a symbolic link at the destination holding the pinned bytes is replaced, not kept`() async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let target = "\(directory)/elsewhere"
                try Data(Fixtures.a).write(to: URL(filePath: target))
                try FileManager.default.createSymbolicLink(atPath: "\(directory)/out", withDestinationPath: target)
                let once = Fetcher.immediate(retries: 0)
                let result = await once.run(server.url(), to: "\(directory)/out", verifying: try Self.pinA)
                #expect(result.error == nil, "\(failure(result))")
                #expect(result.status == .downloaded)
                #expect(CacheTests.status("\(directory)/out").map { $0.st_mode & S_IFMT } == S_IFREG)
                #expect(contents("\(directory)/out") == Fixtures.a)
            }
        }
    }
}

/// Polls `condition` every 10 ms for up to `seconds`.
/// Polls `condition` every 10 ms for `seconds` at most (a guard against a hang: CI runs the 5 GiB
/// test beside these, whose fsync can hold the machine for many seconds), then throws.
func waitUntil(seconds: Double = 60, _ condition: () -> Bool) async throws {
    let deadline = Date().addingTimeInterval(seconds)
    while !condition() {
        guard Date() < deadline else { throw CancellationError() }
        try await Task.sleep(for: .milliseconds(10))
    }
}
