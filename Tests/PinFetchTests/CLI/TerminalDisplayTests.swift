import Foundation
@preconcurrency import Glibc
import Testing

/// The progress display in a real pseudo-terminal: pinfetch runs in a tmux
/// window 60 columns wide, and `tmux capture-pane -p` reads the screen as a person sees it.
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

    @Test func `at 60 columns bars fit, a 404 stays on screen, and Ctrl-C leaves every line and no bar`() async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/tmux") else {
            Issue.record("tmux is not installed (Debian: tmux)")
            return
        }
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
                let tmux = Tmux(logs: "\(directory)/tmux")
                let command =
                    "cd \(directory) && \(try EndToEndTests.pinfetchExecutable()) --no-cache --retries 0 -j 4 "
                    + "-P out -i list; echo EXIT=$?; sleep 60"
                try await tmux.run(["new-session", "-d", "-x", "60", "-y", "20", "-s", "t", command])

                let running = try await Self.waitFor("three bars and the 404", tmux) { rows in
                    rows.filter { $0.contains("%)") }.count == 3 && rows.contains { $0.contains("404") }
                }
                let bars = running.filter { $0.contains("%)") }
                for bar in bars {
                    // It ends with a whole field (the rate, or the percentage when even that is dropped).
                    #expect(bar.hasSuffix("/s") || bar.hasSuffix("%)"), "a bar wrapped or was cut: \(running)")
                    #expect(bar.count < 60, "\(bar)")
                }
                #expect(bars.contains { $0.contains("…") }, "long names are shortened: \(running)")

                try await tmux.run(["send-keys", "-t", "t", "C-c"])
                let ended = try await Self.waitFor("the exit status", tmux) { rows in
                    rows.contains { $0.hasPrefix("EXIT=") }
                }
                let text = ended.joined(separator: "\n")
                #expect(ended.contains("EXIT=130"), "\(text)")
                #expect(!ended.contains { $0.contains("%)") }, "a bar was left: \(text)")
                #expect(text.contains("404"), "the 404 line was erased: \(text)")
                let joined = try await tmux.run(["capture-pane", "-p", "-J", "-t", "t"])
                await tmux.kill()
                for name in Self.longNames {
                    #expect(joined.contains("\(name)") && joined.contains("cancel"), "\(name): \(joined)")
                }
                #expect(joined.components(separatedBy: "cancel").count - 1 >= 3, "\(joined)")
            }
        }
    }
}
