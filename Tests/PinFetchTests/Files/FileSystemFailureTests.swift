import Foundation
import Testing

@testable import PinFetch

/// A full disk and a read-only directory, on a small tmpfs the test mounts (root only; the
/// tests are skipped where the machine does not allow mounting); a `TMPDIR` that is no directory.
struct FileSystemFailureTests {
    static let canMount: Bool = {
        guard getuid() == 0 else { return false }
        let probe = FileManager.default.temporaryDirectory.appending(path: "pinfetch-mount-probe-\(getpid())").path
        try? FileManager.default.createDirectory(atPath: probe, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: probe) }
        guard command("/bin/mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", probe) == 0 else { return false }
        return command("/bin/umount", probe) == 0
    }()

    @discardableResult
    static func command(_ path: String, _ arguments: String...) -> Int32 {
        let process = Process()
        process.executableURL = URL(filePath: path)
        process.arguments = arguments
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return -1 }
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// Runs `body` with a tmpfs of `size` mounted on a fresh directory.
    func withTmpfs(size: String, _ body: (String) async throws -> Void) async throws {
        try await withTemporaryDirectory { directory in
            try #require(Self.command("/bin/mount", "-t", "tmpfs", "-o", "size=\(size)", "tmpfs", directory) == 0)
            defer { Self.command("/bin/umount", directory) }
            try await body(directory)
        }
    }

    @Test(.enabled(if: Self.canMount, "needs root and mount"))
    func `a full disk is exit 3 and leaves a partial cut back to its checkpoint`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: Fixtures.a, etag: Fixtures.etagA)) { server in
            try await self.withTmpfs(size: "2m") { directory in
                let output = "\(directory)/out.bin"
                let pin = try Pin(sha256Hex: Fixtures.sha256A)
                server.enqueueFaults(TestFaults(closeAfterBodyBytes: 300_000))
                let cut = await Fetcher.immediate(retries: 0).run(server.url(), to: output, verifying: pin)
                #expect(cut.error?.code == .network, "\(failure(cut))")
                // Leave about 200 KB free: the next run fills the disk part-way through the rest.
                let filler = "\(directory)/filler"
                let free = try #require(
                    try FileManager.default.attributesOfFileSystem(forPath: directory)[.systemFreeSize] as? Int
                )
                try Data(count: free - 200_000).write(to: URL(filePath: filler))

                var options = FetchOptions()
                options.durableCheckpointInterval = 64 * 1024
                let failed = await Fetcher(options: options).run(server.url(), to: output, verifying: pin)
                let error = try #require(failed.error)
                #expect(error.code.exitStatus == 3)
                #expect(error.message.contains(output))
                #expect(failed.mirrors.map(\.outcome) == ["fileIO"])  // the file system failed, not the mirror
                #expect(!FileManager.default.fileExists(atPath: output))
                let kept = try #require(FileManager.default.attributesOfItem(atPath: output + ".part")[.size] as? Int)
                let saved = try #require(CheckpointFile.read(output + ".part.state"))
                #expect(saved.durable.first?.offset == Int64(kept))  // cut back to the durable checkpoint
                #expect(saved.light == nil)
                #expect(kept >= 300_000)
                #expect(contents(output + ".part") == Array(Fixtures.a[..<kept]))

                try FileManager.default.removeItem(atPath: filler)
                let resumed = await Fetcher.immediate().run(server.url(), to: output, verifying: pin)
                #expect(resumed.error == nil, "\(failure(resumed))")
                #expect(resumed.resumedFrom == Int64(kept))
                #expect(resumed.rehashedBytes == 0)
                #expect(contents(output) == Fixtures.a)
            }
        }
    }

    @Test(.enabled(if: Self.canMount, "needs root and mount"))
    func `a read-only directory is exit 3 naming the path`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: Fixtures.a, etag: Fixtures.etagA)) { server in
            try await self.withTmpfs(size: "4m") { directory in
                try #require(Self.command("/bin/mount", "-o", "remount,ro", directory) == 0)
                let result = await Fetcher().run(server.url(), to: "\(directory)/out.bin")
                #expect(result.error?.code == .fileIO, "\(failure(result))")
                #expect(result.error?.message.contains("\(directory)/out.bin") == true, "\(failure(result))")
                #expect(listing(directory).isEmpty)
            }
        }
    }

    /// User environment: a TMPDIR that does not exist, or is a file.
    @Test(arguments: ["missing/deeper", "file"])
    func `a TMPDIR that is no directory is passed over, never created`(tmpdir: String) async throws {
        try await withTestHTTPServer(serving: TestResource(body: [])) { server in
            server.handler = { request, _ in
                request.target == "/list"
                    ? TestResponse(status: 200, body: Array("\(server.url("/f")) f\n".utf8))
                    : TestResponse(status: 200, body: Array("file".utf8))
            }
            try await withTemporaryDirectory { directory in
                _ = FileManager.default.createFile(atPath: "\(directory)/file", contents: Data("x".utf8))
                for arguments in [
                    ["-i", server.url("/list"), "-P", "\(directory)/out"], ["-o", "-", server.url("/f")],
                ] {
                    let child = try ChildProcess(
                        try EndToEndTests.pinfetchExecutable(),
                        quietOnce + arguments,
                        logs: "\(directory)/log",
                        environment: ["TMPDIR": "\(directory)/\(tmpdir)"]
                    )
                    let ended = try await child.wait(timeout: .seconds(30))
                    #expect(ended == .exited(0), "\(child.transcript)")
                }
                #expect(contents("\(directory)/out/f") == Array("file".utf8))
                #expect(!FileManager.default.fileExists(atPath: "\(directory)/missing"))
            }
        }
    }
}
