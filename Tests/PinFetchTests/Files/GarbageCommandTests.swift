import Foundation
@preconcurrency import Glibc
import Testing

@testable import PinFetch
@testable import PinFetchCLI

/// Kept partials: a failed file's `--json` line names its partial, and `pinfetch gc` removes
/// abandoned ones (and nothing else).
struct GarbageCommandTests {
    static let magic = Array("pinfetch-checkpoint 1\n{}\ncrc32 00000000\n".utf8)
    static let week: TimeInterval = 8 * 86_400

    /// Writes `bytes` to `path` with a modification time `age` seconds ago.
    static func write(_ bytes: [UInt8], to path: String, age: TimeInterval = 0) throws {
        try Data(bytes).write(to: URL(filePath: path))
        try FileManager.default.setAttributes([.modificationDate: Date() - age], ofItemAtPath: path)
    }

    @Test func `a failed file's JSON line names the partial it kept, a success names none`() async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
            try await withTemporaryDirectory { directory in
                server.enqueueFaults(TestFaults(closeAfterBodyBytes: 400_000))
                let output = "\(directory)/out.bin"
                let failed = await runCLI(["-q", "--json", "--retries", "0", "-o", output, server.url()])
                #expect(failed.status == 4)
                let partial = try #require(failed.json["partial"] as? [String: Any])
                #expect(partial["path"] as? String == output + ".part")
                #expect((partial["bytes"] as? NSNumber)?.intValue == 400_000)
                let done = await runCLI(["-q", "--json", "-o", output, server.url()])
                #expect(done.status == 0)
                #expect(done.json["partial"] is NSNull)
            }
        }
    }

    @Test func `gc removes old pinfetch partials with their checkpoints, and nothing else`() async throws {
        try await withTemporaryDirectory { directory in
            let nested = directory + "/linux/amd64"
            try FileManager.default.createDirectory(atPath: nested, withIntermediateDirectories: true)
            let old = [UInt8](repeating: 7, count: 5000)
            try Self.write(old, to: "\(nested)/old.bin.part", age: Self.week)
            try Self.write(Self.magic, to: "\(nested)/old.bin.part.state", age: Self.week)
            try Self.write(old, to: "\(directory)/recent.bin.part")
            try Self.write(Self.magic, to: "\(directory)/recent.bin.part.state")
            try Self.write(old, to: "\(directory)/stranger.part", age: Self.week)  // no checkpoint: not ours
            try Self.write(old, to: "\(directory)/foreign.part", age: Self.week)
            try Self.write(Array("not a checkpoint".utf8), to: "\(directory)/foreign.part.state", age: Self.week)
            try Self.write(old, to: "\(directory)/busy.bin.part", age: Self.week)
            try Self.write(Self.magic, to: "\(directory)/busy.bin.part.state", age: Self.week)
            let lock = try DestinationLock(path: "\(directory)/busy.bin.part.lock", timeout: 0)
            defer { lock.release() }

            let run = await runCLI(["gc", directory, "--older-than", "7d"])
            #expect(run.status == 0, "\(run.standardError)")
            #expect(run.standardOutput == "removed \(nested)/old.bin.part (4.9 KiB)\n")
            #expect(run.standardError.contains("removed 1 partial, freed 4.9 KiB"))
            #expect(listing(nested).isEmpty)
            #expect(
                listing(directory) == [
                    "busy.bin.part", "busy.bin.part.lock", "busy.bin.part.state", "foreign.part", "foreign.part.state",
                    "linux", "recent.bin.part", "recent.bin.part.state", "stranger.part",
                ]
            )
        }
    }

    @Test(arguments: [["--older-than", "soon"], ["--older-than"], ["--frobnicate"], ["/no/such/directory"]])
    func `gc with bad input is exit 2 and removes nothing`(arguments: [String]) async throws {
        try await withTemporaryDirectory { directory in
            try Self.write([1, 2, 3], to: "\(directory)/a.part", age: Self.week)
            try Self.write(Self.magic, to: "\(directory)/a.part.state", age: Self.week)
            let run = await runCLI(
                ["gc"] + arguments + (arguments.count == 1 && arguments[0].hasPrefix("/") ? [] : [directory])
            )
            #expect(run.status == 2)
            #expect(run.standardError.hasPrefix("pinfetch: ") && !run.standardError.contains("see --help"))
            #expect(listing(directory) == ["a.part", "a.part.state"])
        }
    }

    @Test(
        arguments: [
            ("90s", 90.0), ("30m", 1_800), ("12h", 43_200), ("7d", 604_800), ("0s", 0), ("1.5h", 5_400),
        ] as [(String, Double)]
    )
    func `durations`(text: String, seconds: Double) {
        #expect(GarbageCommand.duration(text) == seconds)
    }

    @Test(arguments: ["", "d", "-1d", "7w", "1e3s", "inf", "nan", "7 d", "90", "1D"])
    func `not durations`(text: String) {
        #expect(GarbageCommand.duration(text) == nil)
    }

    /// An old pinfetch partial named `name` in `directory`.
    static func abandon(_ name: String, in directory: String) throws {
        try Self.write([1, 2, 3], to: "\(directory)/\(name).part", age: Self.week)
        try Self.write(Self.magic, to: "\(directory)/\(name).part.state", age: Self.week)
    }

    @Test func `a missing directory among several is exit 2 before anything is removed`() async throws {
        try await withTemporaryDirectory { directory in
            try Self.abandon("a", in: directory)
            let run = await runCLI(["gc", directory, directory + "/missing", "--older-than", "1d"])
            #expect(run.status == 2)
            #expect(listing(directory) == ["a.part", "a.part.state"])
        }
    }

    @Test func `a placement a killed run left beside its lock goes; one without a lock, recent or in use stays`()
        async throws
    {
        try await withTemporaryDirectory { directory in
            let blob = [UInt8](repeating: 9, count: 3000)
            try Self.write(blob, to: "\(directory)/killed.bin.part.cache", age: Self.week)
            try Self.write([], to: "\(directory)/killed.bin.part.lock", age: Self.week)
            try Self.abandon("both", in: directory)  // a partial with its checkpoint, and a placement
            try Self.write(blob, to: "\(directory)/both.part.cache", age: Self.week)
            try Self.write([], to: "\(directory)/both.part.lock", age: Self.week)
            try Self.abandon("partial", in: directory)  // its partial goes; a placement without a lock stays
            try Self.write(blob, to: "\(directory)/partial.part.cache", age: Self.week)
            try Self.abandon("linked", in: directory)  // a placement that is a link is not ours
            try Self.write([], to: "\(directory)/linked.part.lock", age: Self.week)
            try FileManager.default.createSymbolicLink(
                atPath: "\(directory)/linked.part.cache",
                withDestinationPath: "\(directory)/lockless.part.cache"
            )
            try Self.write(blob, to: "\(directory)/lockless.part.cache", age: Self.week)  // not provably ours
            try Self.write(blob, to: "\(directory)/recent.part.cache")
            try Self.write([], to: "\(directory)/recent.part.lock", age: Self.week)
            // A lock made just now is a run that is starting.
            try Self.write(blob, to: "\(directory)/starting.part.cache", age: Self.week)
            try Self.write([], to: "\(directory)/starting.part.lock")
            try Self.abandon("starting2", in: directory)
            try Self.write([], to: "\(directory)/starting2.part.lock")
            try Self.write(blob, to: "\(directory)/busy.part.cache", age: Self.week)
            let lock = try DestinationLock(path: "\(directory)/busy.part.lock", timeout: 0)
            defer { lock.release() }

            let run = await runCLI(["gc", directory, "--older-than", "7d"])
            #expect(run.status == 0, "\(run.standardError)")
            #expect(
                run.standardOutput
                    == "removed \(directory)/both.part (43 B)\nremoved \(directory)/both.part.cache (2.9 KiB)\n"
                    + "removed \(directory)/killed.bin.part.cache (2.9 KiB)\nremoved \(directory)/linked.part (43 B)\n"
                    + "removed \(directory)/partial.part (43 B)\n"
            )
            #expect(run.standardError.contains("removed 3 partials and 2 cache placements, freed 6.0 KiB"))
            #expect(
                listing(directory) == [
                    "busy.part.cache", "busy.part.lock", "linked.part.cache", "lockless.part.cache",
                    "partial.part.cache",
                    "recent.part.cache", "recent.part.lock", "starting.part.cache", "starting.part.lock",
                    "starting2.part", "starting2.part.lock", "starting2.part.state",
                ]
            )
        }
    }

    @Test func `a lock that is a symbolic link or a FIFO is left alone, with its partial`() async throws {
        try await withTemporaryDirectory { directory in
            let outside = try EndToEndTests.makeDirectory(directory + "/outside")
            try Self.abandon("linked", in: directory)
            try FileManager.default.createSymbolicLink(
                atPath: "\(directory)/linked.part.lock",
                withDestinationPath: outside + "/created"
            )
            try Self.abandon("fifo", in: directory)
            #expect(mkfifo("\(directory)/fifo.part.lock", 0o600) == 0)
            let run = await runCLI(["gc", directory, "--older-than", "1d"])
            #expect(run.status == 0)
            #expect(listing(outside).isEmpty)
            #expect(
                listing(directory) == [
                    "fifo.part", "fifo.part.lock", "fifo.part.state", "linked.part", "linked.part.lock",
                    "linked.part.state", "outside",
                ]
            )
        }
    }

    @Test func `names are printed with control characters escaped, and an empty name is not ours`() async throws {
        try await withTemporaryDirectory { directory in
            try Self.abandon("a\nremoved FAKE", in: directory)
            try Self.abandon("", in: directory)
            let run = await runCLI(["gc", "--older-than", "1d", "--", directory])
            #expect(run.status == 0)
            #expect(run.standardOutput == "removed \(directory)/a\\u{A}removed FAKE.part (43 B)\n")
            #expect(listing(directory) == [".part", ".part.state"])
        }
    }

    @Test func `a download never creates a file through a symbolic link at its lock`() async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let outside = try EndToEndTests.makeDirectory(directory + "/outside")
                try FileManager.default.createSymbolicLink(
                    atPath: "\(directory)/out.bin.part.lock",
                    withDestinationPath: outside + "/created"
                )
                let run = await runCLI(["-q", "--json", "-o", "\(directory)/out.bin", server.url()])
                #expect(run.status == 3)
                #expect(listing(outside).isEmpty)
                #expect(server.requests.isEmpty)
            }
        }
    }
}
