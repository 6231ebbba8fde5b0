import Foundation
@preconcurrency import Glibc
import Testing

/// The real `pinfetch` executable against a real nginx, fetching a real Debian package whose
/// SHA-256 comes from apt's index: a straight fetch, interrupted runs that resume, and a large
/// file fetched in flat memory.
///
/// Needs `/usr/sbin/nginx` (`nginx-light`), apt's lists and Debian's mirror; `.ci/run` has all
/// three. Without the mirror the tests fail, saying so; `PINFETCH_SKIP_E2E=1` skips the suite.
@Suite(
    .enabled(if: ProcessInfo.processInfo.environment["PINFETCH_SKIP_E2E"] != "1", "PINFETCH_SKIP_E2E=1"),
    .timeLimit(.minutes(3))
)
struct EndToEndTests {
    static let quiet = ["-q", "--json", "--retry-delay", "0", "--no-cache"]

    @Test func `fetches a real Debian package`() async throws {
        let package = try await DebianPackage.coreutils.value
        try await withNginx { nginx in
            try nginx.serve(package.bytes, as: package.fileName)
            try await withTemporaryDirectory { work in
                let downloads = try Self.makeDirectory(work + "/downloads")
                let destination = downloads + "/" + package.fileName
                let run = try await self.pinfetch(
                    ["--sha256", package.sha256, "-o", destination, nginx.url(package.fileName)],
                    logs: work + "/run"
                ).result
                let why = Self.explain(run, nginx)
                #expect(run.status == 0, why)
                #expect(run.string("status") == "downloaded", why)
                #expect(run.string("sha256") == package.sha256, why)
                #expect(run.int("bytes") == package.bytes.count, why)
                #expect(run.int("downloaded_bytes") == package.bytes.count, why)
                #expect(run.int("resumed_from") == 0, why)
                #expect(contents(destination) == package.bytes, why)
                #expect(Self.leftovers(downloads) == [package.fileName], why)
                let requests = nginx.requests
                #expect(requests.map(\.method) == ["GET"], why)  // no partial: no HEAD
                #expect(requests.allSatisfy { $0.acceptEncoding == "identity" && $0.range == nil }, why)
                #expect(requests.last?.status == 200, why)
                #expect(requests.last?.bodyBytes == package.bytes.count, why)
            }
        }
    }

    /// Kills a run on the throttled URL once ≥ 30% is on disk and a checkpoint exists, then resumes
    /// at full speed on the same URL (a checkpoint belongs to its URL). `SIGKILL` leaves the last
    /// light checkpoint (every half second), whose span the rerun hashes again from `.part`;
    /// `SIGTERM` makes pinfetch take a durable one at its offset and exit 143.
    @Test(arguments: [SIGKILL, SIGTERM])
    func `an interrupted download resumes from its checkpoint`(signal: Int32) async throws {
        let package = try await DebianPackage.coreutils.value
        let size = package.bytes.count
        try await withNginx { nginx in
            try nginx.serve(package.bytes, as: package.fileName)
            try await withTemporaryDirectory { work in
                let downloads = try Self.makeDirectory(work + "/downloads")
                let destination = downloads + "/" + package.fileName
                let partial = destination + ".part"
                let arguments = ["--sha256", package.sha256, "-o", destination, nginx.slowURL(package.fileName)]

                let first = try self.startPinfetch(["--retries", "0"] + arguments, logs: work + "/first")
                defer { first.stop() }
                let deadline = ContinuousClock.now + .seconds(30)
                let state = partial + ".state"
                while Self.size(of: partial) < size * 3 / 10 || !FileManager.default.fileExists(atPath: state) {
                    guard first.isRunning, ContinuousClock.now < deadline else {
                        Issue.record("never had 30% and a checkpoint to interrupt:\n\(first.transcript)\n\(nginx.log)")
                        return
                    }
                    try await Task.sleep(for: .milliseconds(20))
                }
                first.signal(signal)
                let ended = try await first.wait(timeout: .seconds(20))
                let interrupted = first.result
                if signal == SIGKILL {
                    #expect(ended == .signalled(SIGKILL), "\(first.transcript)")
                } else {
                    #expect(ended == .exited(143), "\(first.transcript)")
                    #expect(interrupted.string("status") == "failed", "\(first.transcript)")
                    #expect((interrupted.json["error"] as? [String: Any])?["exit_code"] as? Int == 143)
                }
                #expect(!FileManager.default.fileExists(atPath: destination))
                #expect(Self.leftovers(downloads) == [package.fileName + ".part", package.fileName + ".part.state"])
                let kept = Self.size(of: partial)
                let left = ProcessTests.Snapshot(destination)

                let second = try await self.pinfetch(Nginx.unthrottled + arguments, logs: work + "/second").result
                let why = Self.explain(second, nginx)
                #expect(second.status == 0, why)
                #expect(second.string("status") == "resumed", why)
                let resumedFrom = try #require(second.int("resumed_from"), why)
                #expect(resumedFrom > 0 && resumedFrom <= kept, why)
                if signal == SIGTERM {
                    #expect(resumedFrom == kept, why)  // the checkpoint flushed on SIGTERM covers all of .part
                    #expect(resumedFrom >= size * 3 / 10, why)
                }
                // After SIGKILL the light checkpoint is trusted after its tail check: the same boot
                // lost no written byte (after SIGTERM there is no light span at all).
                #expect(resumedFrom == left.checkpointOffset, "\(left)\n\(why)")
                #expect(second.int("rehashed_bytes") == 0, "\(left)\n\(why)")
                #expect(second.int("downloaded_bytes") == size - resumedFrom, why)
                #expect(second.int("bytes") == size, why)
                #expect(second.string("sha256") == package.sha256, why)
                #expect(contents(destination) == package.bytes, why)
                #expect(Self.leftovers(downloads) == [package.fileName], why)

                // What nginx saw: one ranged GET, answered 206 with the rest only, under If-Range.
                let requests = nginx.requests
                #expect(requests.allSatisfy { $0.acceptEncoding == "identity" }, why)
                let ranged = requests.filter { $0.range != nil }
                #expect(ranged.count == 1, why)
                let resume = try #require(ranged.first, why)
                #expect(resume.method == "GET" && resume.status == 206, why)
                #expect(resume.range == "bytes=\(resumedFrom)-", why)
                #expect(resume.ifRange != nil && resume.ifRange == resume.etag, why)
                #expect(resume.bodyBytes == size - resumedFrom, why)
            }
        }
    }

    /// 512 MiB through pinfetch with a peak RSS under 64 MiB: the body streams to disk.
    @Test func `memory stays flat for a 512 MiB file`() async throws {
        let mebibytes = 512
        try await withNginx { nginx in
            let source = nginx.root + "/big.bin"
            try Self.writePseudoRandomFile(source, mebibytes: mebibytes)
            try await withTemporaryDirectory { work in
                let expected = try await Self.sha256sum(source, logs: work + "/sha256sum-source")
                let destination = try Self.makeDirectory(work + "/downloads") + "/big.bin"
                let child = try await self.pinfetch(
                    ["--sha256", expected, "-o", destination, nginx.url("big.bin")],
                    logs: work + "/pinfetch"
                )
                let run = child.result
                let why = Self.explain(run, nginx)
                #expect(run.status == 0, why)
                let peak = try #require(child.peakResidentKiB)  // VmHWM while it ran
                #expect(peak < 64 * 1024, "peak RSS \(peak) KiB")
                #expect(run.string("sha256") == expected, why)
                #expect(run.int("bytes") == mebibytes << 20, why)
                #expect(Self.size(of: destination) == mebibytes << 20)
                #expect(try await Self.sha256sum(destination, logs: work + "/sha256sum-destination") == expected)
            }
        }
    }

    // MARK: - Running pinfetch

    /// The `pinfetch` that `swift build` put beside this test bundle, in `.build/<config>/`.
    static func pinfetchExecutable() throws -> String {
        let bundle = Bundle.main.executablePath.map { URL(filePath: $0) }
        let process = try? URL(filePath: FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
        for executable in [bundle, process].compactMap({ $0 }) {
            let candidate = executable.deletingLastPathComponent().appending(path: "pinfetch").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw ChildProcessError("no pinfetch executable beside \(bundle?.path ?? "?") or \(process?.path ?? "?")")
    }

    /// Starts pinfetch with ``quiet`` and `arguments`; its output goes to `<logs>.out` / `.err`.
    func startPinfetch(_ arguments: [String], logs: String) throws -> ChildProcess {
        try ChildProcess(try Self.pinfetchExecutable(), Self.quiet + arguments, logs: logs)
    }

    /// Runs pinfetch with ``quiet`` and `arguments` to its end.
    func pinfetch(_ arguments: [String], logs: String) async throws -> ChildProcess {
        let child = try self.startPinfetch(arguments, logs: logs)
        try await child.wait(timeout: .seconds(60))
        return child
    }

    /// What pinfetch printed and what nginx logged, for failure messages.
    static func explain(_ run: CLIRun, _ nginx: Nginx) -> Comment {
        "pinfetch status \(run.status)\nstdout: \(run.standardOutput)\nstderr: \(run.standardError)\n\(nginx.log)"
    }

    // MARK: - Files

    /// The names in `directory` but the lock file, which may stay after a run.
    static func leftovers(_ directory: String) -> [String] {
        listing(directory).filter { !$0.hasSuffix(".part.lock") }
    }

    static func makeDirectory(_ path: String) throws -> String {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// The size of the file at `path` in bytes, 0 when there is none.
    static func size(of path: String) -> Int {
        var info = stat()
        return stat(path, &info) == 0 ? Int(info.st_size) : 0
    }

    /// Writes `mebibytes` MiB of pseudo-random bytes to `path`, 1 MiB at a time: one random block
    /// whose every 4 KiB page is stamped with its MiB and page number, so no two pages are alike.
    static func writePseudoRandomFile(_ path: String, mebibytes: Int) throws {
        var generator = SystemRandomNumberGenerator()
        var block = (0..<(1 << 17)).map { _ in generator.next() as UInt64 }  // 1 MiB
        guard FileManager.default.createFile(atPath: path, contents: nil) else {
            throw ChildProcessError("cannot create \(path)")
        }
        let handle = try FileHandle(forWritingTo: URL(filePath: path))
        defer { try? handle.close() }
        for mebibyte in 0..<mebibytes {
            for page in 0..<256 { block[page * 512] = UInt64(mebibyte << 8 | page) }
            try block.withUnsafeBytes { try handle.write(contentsOf: $0) }
        }
    }

    /// The SHA-256 of the file at `path`, from `/usr/bin/sha256sum` (independent of pinfetch).
    static func sha256sum(_ path: String, logs: String) async throws -> String {
        let run = try await ChildProcess.run("/usr/bin/sha256sum", [path], logs: logs)
        let digest = String(run.standardOutput.prefix(64))
        guard run.termination == .exited(0), digest.count == 64 else {
            throw ChildProcessError("sha256sum failed:\n\(run.transcript)")
        }
        return digest
    }
}

extension ChildProcess {
    /// The exit status (128 + signal when a signal ended it; -1 while it runs) and the output.
    var result: CLIRun {
        CLIRun(
            status: self.termination?.status ?? -1,
            standardOutput: self.standardOutput,
            standardError: self.standardError
        )
    }
}
