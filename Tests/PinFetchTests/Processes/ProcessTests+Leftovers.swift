import Foundation
@preconcurrency import Glibc
import Testing

@testable import PinFetch

/// What a `SIGKILL` leaves where no later run looks: the private directory of `-o -` (with up to
/// the whole download in it) is found and removed by the next `-o -` run and by `pinfetch gc`,
/// never while the run that made it lives.
extension ProcessTests {
    /// Sets the modification time of `path` `seconds` back, as if left that long ago.
    static func backdate(_ path: String, by seconds: Double) throws {
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSinceNow: -seconds)],
            ofItemAtPath: path
        )
    }

    /// Starts `pinfetch gc DIRECTORY` with `environment`.
    static func gc(in directory: String, logs: String, environment: [String: String]) throws -> ChildProcess {
        try ChildProcess(
            try EndToEndTests.pinfetchExecutable(),
            ["gc", directory],
            logs: logs,
            environment: environment
        )
    }

    @Test func `a private directory a SIGKILL left behind is removed by the next run, a live one never`()
        async throws
    {
        let body = Self.pseudoRandomContent(4 << 20, seed: 311)
        try await withTestHTTPServer(serving: TestResource(body: body, etag: "\"k\"")) { server in
            var faults = TestFaults()
            faults.bytesPerSecond = 256 << 10
            server.faults = faults
            try await withTemporaryDirectory { work in
                let temporary = try EndToEndTests.makeDirectory(work + "/tmp")
                let environment = ["TMPDIR": temporary]
                let killed = try self.startPinfetch(
                    ["-o", "-", server.url()],
                    logs: work + "/killed",
                    environment: environment
                )
                defer { killed.stop() }
                try await Self.waitUntil("a private directory with bytes in it", killed) {
                    listing(temporary).count == 1
                        && (Self.fileSize(temporary + "/" + listing(temporary)[0] + "/file.part") ?? 0) > 0
                }
                killed.signal(SIGKILL)
                _ = try await killed.wait(timeout: .seconds(20))
                let left = listing(temporary)
                #expect(left.count == 1 && left[0].hasPrefix("pinfetch-stdout-"), "\(left)")
                try Self.backdate(temporary + "/" + left[0], by: 120)

                let live = try self.startPinfetch(
                    ["-o", "-", server.url()],
                    logs: work + "/live",
                    environment: environment
                )
                defer { live.stop() }
                try await Self.waitUntil("the next run's own directory, the killed run's gone", live) {
                    let now = listing(temporary)
                    return now.count == 1 && now[0] != left[0]
                }
                let running = listing(temporary)[0]
                try Self.backdate(temporary + "/" + running, by: 120)
                let gc = try Self.gc(
                    in: try EndToEndTests.makeDirectory(work + "/nothing"),
                    logs: work + "/gc",
                    environment: environment
                )
                #expect(try await gc.wait(timeout: .seconds(60)) == .exited(0), "\(gc.transcript)")
                #expect(listing(temporary) == [running], "a live run's directory stays: \(gc.transcript)")
                live.signal(SIGKILL)
                _ = try await live.wait(timeout: .seconds(20))
                try Self.backdate(temporary + "/" + running, by: 120)  // its checkpoints touched it since
                let after = try Self.gc(in: work + "/nothing", logs: work + "/gc-after", environment: environment)
                #expect(try await after.wait(timeout: .seconds(60)) == .exited(0), "\(after.transcript)")
                #expect(listing(temporary).isEmpty, "\(after.transcript)")
                #expect(after.transcript.contains(running), "\(after.transcript)")
                // The summary counts the directory and the partial it held.
                #expect(after.transcript.contains("1 private directory of -o - runs"), "\(after.transcript)")
                #expect(!after.transcript.contains("freed 0 B"), "\(after.transcript)")
            }
        }
    }

    /// A directory of the same name that pinfetch did not make (no mark, or a mark that is a
    /// link), or one it made that holds something else too (a user's file beside a killed run's
    /// partial) or was opened to others (mode 0777), is the user's: neither the next `-o -` run
    /// nor `pinfetch gc` removes it, however old. One that holds only a killed run's files goes.
    @Test func `a directory named like a private directory but not pinfetch's is left alone`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: Fixtures.a, etag: Fixtures.etagA)) { server in
            try await withTemporaryDirectory { work in
                let temporary = try EndToEndTests.makeDirectory(work + "/tmp")
                let environment = ["TMPDIR": temporary]
                let unmarked = try EndToEndTests.makeDirectory(temporary + "/pinfetch-stdout-mine01")
                try Data("the user's notes".utf8).write(to: URL(filePath: unmarked + "/notes.txt"))
                let linked = try EndToEndTests.makeDirectory(temporary + "/pinfetch-stdout-mine02")
                try Data(TemporaryDirectory.markText).write(to: URL(filePath: work + "/mark"))
                try FileManager.default.createSymbolicLink(
                    atPath: linked + "/" + TemporaryDirectory.markName,
                    withDestinationPath: work + "/mark"
                )
                var planted = [unmarked, linked]
                for (name, mode, files) in [
                    ("mine03", 0o700, ["file.part", "notes.txt"]), ("mine04", 0o777, ["file.part"]),
                    ("gone05", 0o700, ["file.part", "file.part.state"]),
                ] {
                    let marked = try EndToEndTests.makeDirectory(temporary + "/pinfetch-stdout-" + name)
                    try Data(TemporaryDirectory.markText).write(
                        to: URL(filePath: marked + "/" + TemporaryDirectory.markName)
                    )
                    for file in files { try Data("x".utf8).write(to: URL(filePath: marked + "/" + file)) }
                    #expect(chmod(marked, mode_t(mode)) == 0)
                    planted.append(marked)
                }
                for directory in planted { try Self.backdate(directory, by: 3600) }
                let run = try self.startPinfetch(
                    ["-o", "-", server.url()],
                    logs: work + "/run",
                    environment: environment
                )
                defer { run.stop() }
                #expect(try await run.wait(timeout: .seconds(60)) == .exited(0), "\(run.transcript)")
                let gc = try Self.gc(
                    in: try EndToEndTests.makeDirectory(work + "/nothing"),
                    logs: work + "/gc",
                    environment: environment
                )
                #expect(try await gc.wait(timeout: .seconds(60)) == .exited(0), "\(gc.transcript)")
                #expect(
                    listing(temporary) == [
                        "pinfetch-stdout-mine01", "pinfetch-stdout-mine02", "pinfetch-stdout-mine03",
                        "pinfetch-stdout-mine04",
                    ]
                )
                #expect(contents(temporary + "/pinfetch-stdout-mine03/notes.txt") == Array("x".utf8))
                #expect(contents(unmarked + "/notes.txt") == Array("the user's notes".utf8))
            }
        }
    }
}
