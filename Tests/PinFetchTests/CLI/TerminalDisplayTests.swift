import Foundation
@preconcurrency import Glibc
import Testing

@testable import PinFetchCLI

/// The progress display in a real pseudo-terminal: pinfetch runs in a tmux
/// window 80, 60 or 50 columns wide, and `tmux capture-pane -p` reads the screen as a person
/// sees it.
struct TerminalDisplayTests {
    /// A tmux server of its own (`-L`), so the test never touches the user's.
    struct Tmux {
        let socket = "pinfetch-test-\(UUID().uuidString.prefix(8))"

        /// The logs of each tmux client run go under this prefix.
        let logs: String

        /// Runs a tmux client with `arguments` to its end and returns what it printed. Spawned with
        /// ``ChildProcess`` (a clean signal mask, no inherited descriptors): the tmux server that
        /// `new-session` starts must not inherit the test's.
        @discardableResult
        func run(_ arguments: [String]) async throws -> String {
            let child = try await ChildProcess.run(
                "/usr/bin/tmux",
                ["-L", self.socket] + arguments,
                logs: "\(self.logs)-\(UUID().uuidString.prefix(8))",
                timeout: .seconds(20)
            )
            return child.standardOutput
        }

        /// The rows of the window as shown (a wrapped line is two rows).
        func screen() async throws -> [String] {
            try await self.run(["capture-pane", "-p", "-t", "t"])
                .split(separator: "\n", omittingEmptySubsequences: false)
                .map { String($0) }.filter { !$0.isEmpty }
        }

        func kill() async { _ = try? await self.run(["kill-server"]) }
    }

    static let longNames = [
        "a-really-long-release-artifact-name-for-linux-amd64-v1.2.3.tar.gz",
        "b-another-long-release-artifact-name-for-darwin-arm64.tar.gz", "c.bin",
    ]

    static func waitFor(_ what: String, _ tmux: Tmux, _ condition: ([String]) -> Bool) async throws -> [String] {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            let rows = try await tmux.screen()
            if condition(rows) { return rows }
            try await Task.sleep(for: .milliseconds(100))
        }
        let rows = try await tmux.screen()
        Issue.record("gave up waiting for \(what): \(rows.joined(separator: "\n"))")
        return rows
    }

    /// A progress row (a file's or a batch's overall one): not a line pinfetch printed, with a bar.
    static func isBar(_ row: String) -> Bool {
        !row.hasPrefix("pinfetch") && !row.hasPrefix("EXIT=") && row.contains("[") && row.contains("]")
    }

    /// The column `character` first shows in, in `row`.
    static func column(of character: Character, in row: String) -> Int? {
        row.firstIndex(of: character).map { TerminalCapabilities.displayWidth(row[..<$0]) }
    }

    /// Starts `command` in a tmux window `columns` wide, or records that tmux is missing.
    static func start(_ command: String, columns: Int, logs: String) async throws -> Tmux? {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/tmux") else {
            Issue.record("tmux is not installed (Debian: tmux)")
            return nil
        }
        let tmux = Tmux(logs: logs)
        try await tmux.run(["new-session", "-d", "-x", "\(columns)", "-y", "20", "-s", "t", command])
        return tmux
    }

    @Test func `at 60 columns bars fit, a 404 stays on screen, and Ctrl-C leaves every line and no bar`() async throws {
        let body = [UInt8](repeating: 0x5A, count: 8 << 20)
        try await withTestHTTPServer(serving: TestResource(body: body, etag: "\"v\"")) { server in
            server.faults = TestFaults(bytesPerSecond: 400_000)
            server.handler = { request, _ in request.target == "/missing" ? TestResponse(status: 404) : nil }
            try await withTemporaryDirectory { directory in
                let urls = Self.longNames.map { server.url("/\($0)") } + [server.url("/missing")]
                try (urls.joined(separator: "\n") + "\n").write(
                    toFile: "\(directory)/list",
                    atomically: true,
                    encoding: .utf8
                )
                let command =
                    "cd \(directory) && \(try EndToEndTests.pinfetchExecutable()) --no-cache --retries 0 -j 4 "
                    + "-P out -i list; echo EXIT=$?; sleep 60"
                guard let tmux = try await Self.start(command, columns: 60, logs: "\(directory)/tmux") else { return }

                // Three files' rows and the batch's overall row.
                let running = try await Self.waitFor("three bars, the overall row and the 404", tmux) { rows in
                    rows.filter(Self.isBar).count == 4 && rows.contains { $0.contains("404") }
                }
                let bars = running.filter(Self.isBar)
                for bar in bars {
                    #expect(TerminalCapabilities.displayWidth(bar) < 60, "\(bar)")
                }
                #expect(bars.contains { $0.contains("…") }, "long names are shortened: \(running)")
                #expect(
                    bars.last?.hasPrefix("0/4 files") == true || bars.last?.hasPrefix("1/4 files") == true,
                    "\(bars)"
                )

                try await tmux.run(["send-keys", "-t", "t", "C-c"])
                let ended = try await Self.waitFor("the exit status", tmux) { rows in
                    rows.contains { $0.hasPrefix("EXIT=") }
                }
                let text = ended.joined(separator: "\n")
                #expect(ended.contains("EXIT=130"), "\(text)")
                #expect(!ended.contains(where: Self.isBar), "a bar was left: \(text)")
                #expect(text.contains("404"), "the 404 line was erased: \(text)")
                let joined = try await tmux.run(["capture-pane", "-p", "-J", "-t", "t"])
                await tmux.kill()
                // A line per file the signal caught, by name, each within the width (`-J` joins
                // what a terminal wrapped).
                let stopped = joined.split(separator: "\n").filter { $0.contains(": interrupted ") }
                for name in Self.longNames {
                    #expect(stopped.contains { $0.hasPrefix("pinfetch: \(name.prefix(6))") }, "\(name): \(joined)")
                }
                #expect(stopped.count >= 3, "\(joined)")
                #expect(stopped.allSatisfy { TerminalCapabilities.displayWidth(String($0)) < 60 }, "\(joined)")
            }
        }
    }

    /// One file, then four of long names at once: every file has a bar, the rows of a batch
    /// line up (their bars start and end in the same columns), and the batch has an overall row.
    @Test(arguments: [80, 50])
    func `one file and a batch of long names each have a bar, in rows that line up`(columns: Int) async throws {
        let body = [UInt8](repeating: 0x5A, count: 8 << 20)
        try await withTestHTTPServer(serving: TestResource(body: body, etag: "\"v\"")) { server in
            server.faults = TestFaults(bytesPerSecond: 300_000)
            try await withTemporaryDirectory { directory in
                let names = Self.longNames + ["d-release-notes-and-checksums-for-every-platform.txt"]
                try (names.map { server.url("/\($0)") }.joined(separator: "\n") + "\n").write(
                    toFile: "\(directory)/list",
                    atomically: true,
                    encoding: .utf8
                )
                let pinfetch = try EndToEndTests.pinfetchExecutable()
                let command =
                    "cd \(directory) && \(pinfetch) --no-cache -o one.bin \(server.url("/\(Self.longNames[0])")); "
                    + "\(pinfetch) --no-cache -j 4 -P out -i list; sleep 60"
                guard let tmux = try await Self.start(command, columns: columns, logs: "\(directory)/tmux") else {
                    return
                }
                let one = try await Self.waitFor("the one file's bar with its rate", tmux) { rows in
                    rows.contains { Self.isBar($0) && $0.hasSuffix("/s") || $0.contains("ETA") }
                }
                let bar = one.filter(Self.isBar)
                #expect(bar.count == 1 && bar[0].contains("%"), "\(one)")
                #expect(bar.allSatisfy { TerminalCapabilities.displayWidth($0) < columns }, "\(one)")
                if columns >= 80 { #expect(bar.first?.contains("ETA") == true, "\(one)") }
                // The file done (about 28 s at the server's rate), the batch: four rows and the overall one.
                let batch = try await Self.waitFor("four bars and the overall row", tmux) { rows in
                    rows.filter(Self.isBar).count == 5 && rows.contains { $0.contains(" files") && Self.isBar($0) }
                }
                await tmux.kill()
                let rows = batch.filter(Self.isBar)
                let opens = Set(rows.map { Self.column(of: "[", in: $0) })
                let closes = Set(rows.map { Self.column(of: "]", in: $0) })
                #expect(opens.count == 1 && closes.count == 1, "rows do not line up: \(rows.joined(separator: "\n"))")
                #expect(rows.allSatisfy { TerminalCapabilities.displayWidth($0) < columns }, "\(rows)")
                #expect(rows.filter { $0.contains("…") }.count >= 3, "long names are shortened: \(rows)")
                #expect(rows.last?.contains("/4 files") == true, "\(rows)")
            }
        }
    }

    /// A download that stops receiving shows `stalled`; one whose destination another pinfetch
    /// holds shows that it waits for it.
    @Test(arguments: [80, 50])
    func `a stall and a lock wait show as such`(columns: Int) async throws {
        let body = [UInt8](repeating: 0x5A, count: 8 << 20)
        try await withTestHTTPServer(serving: TestResource(body: body, etag: "\"v\"")) { stalling in
            stalling.faults = TestFaults(stallAfterBodyBytes: 1 << 20)
            try await withTestHTTPServer(serving: TestResource(body: body, etag: "\"v\"")) { slow in
                slow.faults = TestFaults(bytesPerSecond: 200_000)
                try await withTemporaryDirectory { directory in
                    let pinfetch = try EndToEndTests.pinfetchExecutable()
                    // The stalled download is stopped with Ctrl-C before the other two start.
                    let command =
                        "cd \(directory) && \(pinfetch) --no-cache --stall-timeout 60 -o stall.bin \(stalling.url()); "
                        + "\(pinfetch) --no-cache -q -o held.bin \(slow.url()) & sleep 1; "
                        + "\(pinfetch) --no-cache -o held.bin \(slow.url()); sleep 60"
                    guard let tmux = try await Self.start(command, columns: columns, logs: "\(directory)/tmux") else {
                        return
                    }
                    let stalled = try await Self.waitFor("a stalled row", tmux) { rows in
                        rows.contains { Self.isBar($0) && $0.contains("stalled") }
                    }
                    try await tmux.run(["send-keys", "-t", "t", "C-c"])
                    let waiting = try await Self.waitFor("a lock wait", tmux) { rows in
                        // With how long it has waited, at any width.
                        rows.contains { Self.isBar($0) && $0.contains(#/other pinfetch \d+s/#) }
                    }
                    let rows = stalled.filter(Self.isBar) + waiting.filter(Self.isBar)
                    await tmux.kill()
                    let shown = rows
                    #expect(shown.allSatisfy { TerminalCapabilities.displayWidth($0) < columns }, "\(shown)")
                    if columns >= 80 {
                        #expect(shown.contains { $0.contains("waiting for another pinfetch") }, "\(shown)")
                    }
                }
            }
        }
    }
}
