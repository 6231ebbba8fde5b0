import Foundation
@preconcurrency import Glibc
import Testing

/// Two processes whose destinations overlap: `-o D/x` keeps its partial at `D/x.part`, which
/// `-o D/x.part` names. They never run at once (each takes the other's lock), and neither
/// empties, replaces or renames a file the other made: a success lasts.
extension ProcessTests {
    /// Starts pinfetch pinned to `pin` for `url` into `output`, logs at `logs`.
    func startPinned(_ url: String, _ pin: String, to output: String, logs: String) throws -> ChildProcess {
        try self.startPinfetch(["--retries", "0", "--sha256", pin, "-o", output, url], logs: logs)
    }

    @Test(arguments: [false, true])
    func `a run to x never takes the file a run to x.part placed, nor the other way round`(
        partFirst: Bool
    ) async throws {
        try await withTestHTTPServer(serving: TestResource(body: Fixtures.a, etag: Fixtures.etagA)) { serverA in
            try await withTestHTTPServer(serving: TestResource(body: Fixtures.b, etag: Fixtures.etagB)) { serverB in
                try await withTemporaryDirectory { work in
                    let x = try EndToEndTests.makeDirectory(work + "/D") + "/x"
                    let runs = [
                        (serverA.url(), Fixtures.sha256A, x), (serverB.url(), Fixtures.sha256B, x + ".part"),
                    ]
                    for (index, run) in (partFirst ? runs.reversed() : runs).enumerated() {
                        let child = try self.startPinned(run.0, run.1, to: run.2, logs: work + "/run\(index)")
                        try await child.wait(timeout: .seconds(60))
                        if !partFirst || index == 0 { #expect(child.termination == .exited(0), "\(child.transcript)") }
                        if partFirst, index == 1 {
                            // x's partial path holds x.part's verified file: x is refused, nothing lost.
                            #expect(child.termination == .exited(3), "\(child.transcript)")
                            #expect(
                                child.standardError.contains("is not a partial pinfetch wrote"),
                                "\(child.transcript)"
                            )
                        }
                    }
                    #expect(contents(x + ".part") == Fixtures.b)
                    #expect(partFirst ? !FileManager.default.fileExists(atPath: x) : contents(x) == Fixtures.a)
                    #expect(EndToEndTests.leftovers(work + "/D") == (partFirst ? ["x.part"] : ["x", "x.part"]))
                }
            }
        }
    }

    /// Both at once, over and over with the second starting at different moments: each run
    /// that says it succeeded has its verified bytes at its destination when both are done.
    @Test func `two processes on x and x.part at once: every success lasts`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: Fixtures.a, etag: Fixtures.etagA)) { serverA in
            try await withTestHTTPServer(serving: TestResource(body: Fixtures.b, etag: Fixtures.etagB)) { serverB in
                serverA.faults = TestFaults(bytesPerSecond: 4_000_000)
                serverB.faults = TestFaults(bytesPerSecond: 4_000_000)
                for round in 0..<6 {
                    try await withTemporaryDirectory { work in
                        let x = try EndToEndTests.makeDirectory(work + "/D") + "/x"
                        let first = try self.startPinned(serverA.url(), Fixtures.sha256A, to: x, logs: work + "/a")
                        defer { first.stop() }
                        try await Task.sleep(for: .milliseconds(40 * round))
                        let second = try self.startPinned(
                            serverB.url(),
                            Fixtures.sha256B,
                            to: x + ".part",
                            logs: work + "/b"
                        )
                        defer { second.stop() }
                        try await first.wait(timeout: .seconds(60))
                        try await second.wait(timeout: .seconds(60))
                        let why: Comment = "round \(round)\n\(first.transcript)\n\(second.transcript)"
                        #expect([.exited(0), .exited(3)].contains(first.termination), why)
                        #expect(second.termination == .exited(0), why)
                        if first.termination == .exited(0) { #expect(contents(x) == Fixtures.a, why) }
                        if second.termination == .exited(0) { #expect(contents(x + ".part") == Fixtures.b, why) }
                    }
                }
            }
        }
    }

    @Test func `a run to x.part leaves the partial of a killed run to x, which then resumes`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: Fixtures.a, etag: Fixtures.etagA)) { serverA in
            try await withTestHTTPServer(serving: TestResource(body: Fixtures.b, etag: Fixtures.etagB)) { serverB in
                serverA.faults = TestFaults(bytesPerSecond: 200_000)
                try await withTemporaryDirectory { work in
                    let x = try EndToEndTests.makeDirectory(work + "/D") + "/x"
                    let killed = try self.startPinned(serverA.url(), Fixtures.sha256A, to: x, logs: work + "/killed")
                    defer { killed.stop() }
                    try await Self.waitUntil("a partial of 300 kB", killed) {
                        (Self.fileSize(x + ".part") ?? 0) >= 300_000
                    }
                    killed.signal(SIGKILL)
                    try await killed.wait(timeout: .seconds(10))
                    let kept = contents(x + ".part")
                    let other = try self.startPinned(
                        serverB.url(),
                        Fixtures.sha256B,
                        to: x + ".part",
                        logs: work + "/b"
                    )
                    try await other.wait(timeout: .seconds(60))
                    #expect(other.termination == .exited(3), "\(other.transcript)")
                    #expect(other.standardError.contains("unfinished download of \(x)"), "\(other.transcript)")
                    #expect(serverB.requests.isEmpty)
                    #expect(contents(x + ".part") == kept)
                    serverA.faults = TestFaults()
                    let resumed = try self.startPinned(serverA.url(), Fixtures.sha256A, to: x, logs: work + "/resumed")
                    try await resumed.wait(timeout: .seconds(60))
                    #expect(resumed.termination == .exited(0), "\(resumed.transcript)")
                    #expect(resumed.standardOutput.contains(#""status":"resumed""#), "\(resumed.transcript)")
                    #expect(contents(x) == Fixtures.a)
                }
            }
        }
    }
}
