import Foundation
@preconcurrency import Glibc
import Testing

@testable import PinFetch

/// What another user or process planted beside the destination: a symbolic link, a FIFO or a
/// directory at a sidecar's path is never written through, waited on or removed (exit 3), a
/// `.part` replaced during the download is never renamed onto the destination, and files that
/// only look like sidecars are left alone.
@Suite(.timeLimit(.minutes(1)))
struct PlantedPartialTests {
    static let resource = TestResource(body: Fixtures.a, etag: Fixtures.etagA)

    /// One attempt, as `--retries 0` is.
    static var once: FetchOptions {
        var options = FetchOptions()
        options.retries = 0
        return options
    }

    /// What a result shows of its URLs and failure: where a secret must never be.
    static func shown(_ result: FetchResult) -> String {
        ([result.url, result.source ?? "", failure(result)] + result.mirrors.map(\.url)).joined(separator: " ")
    }

    /// Puts something other than a regular file at `path`: a `"fifo"`, a `"link"` to `target`, a
    /// `"dangling link"`, or a `"directory"`.
    static func plant(_ kind: String, at path: String, linkingTo target: String) throws {
        switch kind {
        case "fifo": #expect(mkfifo(path, 0o644) == 0)
        case "link": try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: target)
        case "dangling link":
            try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: target + ".none")
        default: try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        }
    }

    /// A valid checkpoint for the first 400,000 bytes beside `output`, and no `.part` yet: the
    /// test plants something there.
    static func leaveCheckpointWithoutPartial(for output: String, from server: TestHTTPServer) throws {
        try writePartial(
            Fixtures.a[..<400_000],
            of: Int64(Fixtures.a.count),
            to: output,
            url: server.url(),
            etag: Fixtures.etagA
        )
        try FileManager.default.removeItem(atPath: output + ".part")
    }

    @Test func `a symbolic link at .part beside a valid checkpoint is not written through, and is left alone`()
        async throws
    {
        try await withTestHTTPServer(serving: Self.resource) { server in
            try await withTemporaryDirectory { directory in
                let output = "\(directory)/out.bin"
                let victim = "\(directory)/victim.txt"
                try Data("keep me".utf8).write(to: URL(filePath: victim))
                try Self.leaveCheckpointWithoutPartial(for: output, from: server)
                try FileManager.default.createSymbolicLink(atPath: output + ".part", withDestinationPath: victim)
                let pin = try Pin(sha256Hex: Fixtures.sha256A)
                let result = await Fetcher().run(server.url(), to: output, verifying: pin)
                #expect(result.error?.code == .fileIO, "\(failure(result))")
                #expect(contents(victim) == Array("keep me".utf8))
                #expect(!FileSystem.exists(output))
                let link = try? FileManager.default.destinationOfSymbolicLink(atPath: output + ".part")
                #expect(link == victim)
                #expect(server.requests.isEmpty)
            }
        }
    }

    @Test func `a FIFO at .part beside a valid checkpoint is not waited on, and is left alone`() async throws {
        try await withTestHTTPServer(serving: Self.resource) { server in
            try await withTemporaryDirectory { directory in
                let output = "\(directory)/out.bin"
                try Self.leaveCheckpointWithoutPartial(for: output, from: server)
                #expect(mkfifo(output + ".part", 0o644) == 0)
                let pin = try Pin(sha256Hex: Fixtures.sha256A)
                let result = await Fetcher().run(server.url(), to: output, verifying: pin)
                #expect(result.error?.code == .fileIO, "\(failure(result))")
                #expect(result.error?.message.contains("\(output).part is not a regular file") == true)
                var info = stat()
                #expect(lstat(output + ".part", &info) == 0 && (info.st_mode & S_IFMT) == S_IFIFO)
                #expect(!FileSystem.exists(output))
            }
        }
    }

    @Test func `a partial is never opened through a symbolic link nor as a FIFO`() async throws {
        try await withTemporaryDirectory { directory in
            let victim = "\(directory)/victim.txt"
            try Data("keep me".utf8).write(to: URL(filePath: victim))
            try FileManager.default.createSymbolicLink(atPath: "\(directory)/link.part", withDestinationPath: victim)
            #expect(mkfifo("\(directory)/fifo.part", 0o644) == 0)
            for name in ["link.part", "fifo.part"] {
                for readOnly in [false, true] {
                    let error = #expect(throws: PinFetchError.self) {
                        try PartialFile(path: "\(directory)/\(name)", readOnly: readOnly)
                    }
                    #expect(error?.code == .fileIO)
                    #expect(error?.message.contains("\(directory)/\(name)") == true)
                }
            }
            #expect(contents(victim) == Array("keep me".utf8))
        }
    }

    /// Two outputs named `x` and `x.part` (two processes, or a batch): the second one's commit
    /// renames its file onto the first one's `.part` path. The first one must notice that the
    /// path no longer names the file it hashed.
    @Test func `a .part replaced during the download is never renamed onto the destination`() async throws {
        try await withTestHTTPServer(serving: Self.resource) { server in
            // 100 kB/s: after the first 100 kB, 9 s of the body are left for the replacement, which
            // a loaded machine needs (the body is sent fast once the .part was replaced).
            server.faults = TestFaults(bytesPerSecond: 100_000)
            try await withTemporaryDirectory { directory in
                let output = "\(directory)/out.bin"
                let pin = try Pin(sha256Hex: Fixtures.sha256A)
                let fetch = Task { await Fetcher().run(server.url(), to: output, verifying: pin) }
                let deadline = ContinuousClock.now + .seconds(20)
                while (ProcessTests.fileSize(output + ".part") ?? 0) < 100_000, ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(20))
                }
                try Data(Fixtures.b).write(to: URL(filePath: "\(directory)/other"))
                #expect(rename("\(directory)/other", output + ".part") == 0)
                server.faults = TestFaults()
                let result = await fetch.value
                #expect(result.error?.code == .fileIO)
                #expect(result.error?.message.contains("was replaced") == true)
                #expect(!FileManager.default.fileExists(atPath: output))
            }
        }
    }

    /// A race of two processes, `-o x` pinned to A and `-o x.part`
    /// pinned to B. B renames its verified file onto `x.part`, A's partial path; A must never
    /// rename that onto `x`. Run several times, with B starting at different moments.
    @Test func `two runs writing x and x.part never leave x holding the other's bytes`() async throws {
        try await withTestHTTPServer(serving: Self.resource) { serverA in
            try await withTestHTTPServer(serving: TestResource(body: Fixtures.b, etag: Fixtures.etagB)) { serverB in
                serverA.faults = TestFaults(bytesPerSecond: 8_000_000)
                serverB.faults = TestFaults(bytesPerSecond: 8_000_000)
                for round in 0..<6 {
                    try await withTemporaryDirectory { directory in
                        let x = "\(directory)/x"
                        let once = Fetcher(options: Self.once)
                        let pinA = try Pin(sha256Hex: Fixtures.sha256A)
                        let pinB = try Pin(sha256Hex: Fixtures.sha256B)
                        async let first = once.run(serverA.url(), to: x, verifying: pinA)
                        try await Task.sleep(for: .milliseconds(25 * round))
                        async let second = once.run(serverB.url(), to: x + ".part", verifying: pinB)
                        let (a, b) = await (first, second)
                        #expect([nil, .fileIO].contains(a.error?.code), "round \(round): \(failure(a))")
                        #expect(b.error == nil, "round \(round): \(failure(b))")
                        let held = contents(x)
                        #expect(held == nil || held == Fixtures.a, "round \(round): x holds bytes that are not A's")
                        #expect(a.error != nil || held == Fixtures.a, "round \(round): success without A at x")
                    }
                }
            }
        }
    }

    /// The fix for the race above, shown without timing: a download to `x.part` (or another
    /// sidecar name of `x`) waits for the lock of a download to `x`, so it never renames its file
    /// onto that download's partial while it runs.
    @Test(arguments: [".part", ".part.state", ".part.cache"])
    func `an output named as another output's sidecar waits for that download's lock`(suffix: String) async throws {
        try await withTestHTTPServer(serving: TestResource(body: Fixtures.b, etag: Fixtures.etagB)) { server in
            try await withTemporaryDirectory { directory in
                let x = "\(directory)/x"
                let held = try DestinationLock(path: x + ".part.lock", timeout: 0)
                let pin = try Pin(sha256Hex: Fixtures.sha256B)
                let impatient = Fetcher.immediate { $0.lockTimeout = 0.3 }
                let waited = await impatient.run(server.url(), to: x + suffix, verifying: pin)
                #expect(waited.error?.code == .destinationLocked, "\(failure(waited))")
                #expect(server.requests.isEmpty)
                #expect(!FileManager.default.fileExists(atPath: x + suffix))
                held.release()
                let ran = await Fetcher().run(server.url(), to: x + suffix, verifying: pin)
                #expect(ran.error == nil, "\(failure(ran))")
                #expect(contents(x + suffix) == Fixtures.b)
                #expect(listing(directory) == ["x" + suffix])  // no lock file left behind
            }
        }
    }

    @Test(arguments: [".part.state", ".part"], ["fifo", "link", "dangling link", "directory"])
    func `a sidecar path that is not a regular file is exit 3 naming it, at once, and is left alone`(
        suffix: String,
        kind: String
    )
        async throws
    {
        try await withTestHTTPServer(serving: Self.resource) { server in
            try await withTemporaryDirectory { directory in
                let output = "\(directory)/out.bin"
                let state = output + suffix
                let target = "\(directory)/target"
                try Data("keep".utf8).write(to: URL(filePath: target))
                try Self.plant(kind, at: state, linkingTo: target)
                let result = await Fetcher.immediate(retries: 0).run(server.url(), to: output)
                #expect(result.elapsedSeconds < 10)  // a FIFO is never opened to wait on
                #expect(result.error?.code == .fileIO, "\(failure(result))")
                #expect(result.error?.message.contains("\(state) is not a regular file") == true, "\(failure(result))")
                #expect(server.requests.isEmpty)
                #expect(FileSystem.exists(state) && !FileSystem.exists(output))
                #expect(contents(target) == Array("keep".utf8))
            }
        }
    }

    @Test func `a FIFO or a directory at .part.lock is exit 3 naming it, and is left alone`() async throws {
        try await withTestHTTPServer(serving: Self.resource) { server in
            try await withTemporaryDirectory { directory in
                #expect(mkfifo("\(directory)/fifo.bin.part.lock", 0o644) == 0)
                try FileManager.default.createDirectory(
                    atPath: "\(directory)/dir.bin.part.lock",
                    withIntermediateDirectories: false
                )
                for name in ["fifo.bin", "dir.bin"] {
                    let result = await Fetcher().run(server.url(), to: "\(directory)/\(name)")
                    #expect(result.error?.code == .fileIO)
                    #expect(result.error?.message.contains("\(directory)/\(name).part.lock") == true)
                }
                #expect(server.requests.isEmpty)
                #expect(listing(directory) == ["dir.bin.part.lock", "fifo.bin.part.lock"])
            }
        }
    }

    @Test func `a fresh partial never truncates what a hard link planted at its path points to`() async throws {
        try await withTemporaryDirectory { directory in
            let victim = "\(directory)/victim.txt"
            try Data("keep me".utf8).write(to: URL(filePath: victim))
            #expect(link(victim, "\(directory)/out.bin.part") == 0)
            let partial = try PartialFile(path: "\(directory)/out.bin.part", fresh: true)
            try Array("new".utf8).withUnsafeBytes { try partial.write($0, at: 0) }
            #expect(contents(victim) == Array("keep me".utf8))
            #expect(contents("\(directory)/out.bin.part") == Array("new".utf8))
        }
    }

    /// A URL's password and signing values never reach a sidecar, the
    /// sidecars are private (0600), and the verified file gets the usual mode; the resume still
    /// finds its checkpoint (it compares URLs without their secrets).
    @Test func `secrets stay out of the checkpoint, sidecars are 0600, the file gets the usual mode`() async throws {
        try await withTestHTTPServer(serving: Self.resource) { server in
            try await withTemporaryDirectory { directory in
                let url = server.url("/file?X-Amz-Signature=SIGSECRET&v=1").replacingOccurrences(
                    of: "http://",
                    with: "http://user:PWSECRET@"
                )
                let output = "\(directory)/out.bin"
                server.enqueueFaults(TestFaults(closeAfterBodyBytes: 400_000))
                let first = await Fetcher(options: Self.once).run(url, to: output)
                #expect(first.error?.code == .network, "\(failure(first))")
                let state = String(decoding: try #require(contents(output + ".part.state")), as: UTF8.self)
                #expect(!state.contains("SECRET"))
                #expect(state.contains("user:***@") && state.contains("X-Amz-Signature=***&v=1"))
                #expect(!Self.shown(first).contains("SECRET"), "\(Self.shown(first))")
                for sidecar in [".part", ".part.state"] {
                    let mode = try FileManager.default.attributesOfItem(atPath: output + sidecar)[.posixPermissions]
                    #expect(mode as? Int == 0o600, "\(sidecar)")
                }
                let second = await Fetcher().run(url, to: output, verifying: try Pin(sha256Hex: Fixtures.sha256A))
                #expect(second.error == nil, "\(failure(second))")
                #expect(second.resumedFrom == 400_000)
                #expect(!Self.shown(second).contains("SECRET"), "\(Self.shown(second))")
                #expect(contents(output) == Fixtures.a)
                let mode = try FileManager.default.attributesOfItem(atPath: output)[.posixPermissions] as? Int
                #expect(mode == Int(FileSystem.creationMode))
            }
        }
    }

    /// The command line's part of the test above: what it prints of the two runs (the `--json`
    /// lines, the errors) holds no secret of the URL either.
    @Test func `secrets stay out of what the command line prints`() async throws {
        try await withTestHTTPServer(serving: Self.resource) { server in
            try await withTemporaryDirectory { directory in
                let url = server.url("/file?X-Amz-Signature=SIGSECRET&v=1").replacingOccurrences(
                    of: "http://",
                    with: "http://user:PWSECRET@"
                )
                let output = "\(directory)/out.bin"
                server.enqueueFaults(TestFaults(closeAfterBodyBytes: 400_000))
                let first = await runCLI(["-q", "--json", "--retries", "0", "-o", output, url])
                #expect(first.status == 4)
                #expect(!first.standardOutput.contains("SECRET") && !first.standardError.contains("SECRET"))
                let second = await runCLI(["-q", "--json", "--sha256", Fixtures.sha256A, "-o", output, url])
                #expect(second.status == 0)
                #expect(!second.standardOutput.contains("SECRET"))
            }
        }
    }

    /// Planted file: the user's own x.part or x.part.state (no mark, no checkpoint beside it), or
    /// x.part.lock with bytes in it (pinfetch's locks are empty), is neither emptied, removed nor
    /// renamed onto x; the run says which path holds it.
    @Test(arguments: ["x.part", "x.part.state", "x.part.lock"])
    func `a user's file at a sidecar path is left alone, and the run says so`(name: String) async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
            try await withTemporaryDirectory { directory in
                try Data("mine".utf8).write(to: URL(filePath: "\(directory)/\(name)"))
                let pin = try Pin(sha256Hex: Fixtures.sha256A)
                let result = await Fetcher.immediate(retries: 0).run(server.url(), to: "\(directory)/x", verifying: pin)
                #expect(result.error?.code == .fileIO, "\(failure(result))")
                #expect(result.error?.message.contains("\(directory)/\(name) is not a") == true, "\(failure(result))")
                #expect(server.requests.isEmpty)
                #expect(listing(directory) == [name])
                #expect(contents("\(directory)/\(name)") == Array("mine".utf8))
            }
        }
    }

    /// Planted file: the user's own x.part.cache and x.part.state.tmp beside the destination x.
    @Test func `files named like a placement or an old checkpoint temporary are not pinfetch's to remove`()
        async throws
    {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
            try await withTemporaryDirectory { directory in
                for name in ["x.part.cache", "x.part.state.tmp"] {
                    try Data("mine".utf8).write(to: URL(filePath: "\(directory)/\(name)"))
                }
                let pin = try Pin(sha256Hex: Fixtures.sha256A)
                let result = await Fetcher.immediate(retries: 0).run(server.url(), to: "\(directory)/x", verifying: pin)
                #expect(result.error == nil, "\(failure(result))")
                #expect(listing(directory) == ["x", "x.part.cache", "x.part.state.tmp"])
            }
        }
    }

    /// Planted file: a FIFO in place of the checkpoint while the download runs.
    @Test func `a FIFO planted at the checkpoint during the download fails it, and is left alone`() async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
            server.faults = TestFaults(bytesPerSecond: 1_000_000)
            try await withTemporaryDirectory { directory in
                let output = "\(directory)/x"
                var options = FetchOptions()
                options.retries = 0
                options.lightCheckpointPeriod = 0.05
                let fetch = Task { [options] in await Fetcher(options: options).run(server.url(), to: output) }
                let deadline = ContinuousClock.now + .seconds(30)
                while !FileSystem.exists(output + ".part"), ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(5))
                }
                unlink(output + ".part.state")
                #expect(mkfifo(output + ".part.state", 0o644) == 0)
                let result = await fetch.value
                // Planted before the first checkpoint, the FIFO fails the download (exit 3); after
                // it, checkpoints go on to the open, unlinked file and the download ends well.
                if let error = result.error {
                    #expect(error.code == .fileIO, "\(error)")
                    #expect(!FileSystem.exists(output))
                } else {
                    #expect(contents(output) == Fixtures.a)
                }
                var info = stat()
                #expect(lstat(output + ".part.state", &info) == 0 && (info.st_mode & S_IFMT) == S_IFIFO)
            }
        }
    }
}
