import Foundation
import PinFetch
import Synchronization
import Testing

@testable import PinFetchCLI

/// The progress display, on a model of a terminal: bars cut to the width,
/// result and error lines above the bars that no redraw erases (also when many threads end at
/// once), colour only when allowed, nothing left drawn at the end.
struct ProgressDisplayTests {
    /// A terminal that understands what the reporter writes: text, `\n`, `\r`, `ESC[1A` (up one
    /// row) and `ESC[J` (clear to the end of the screen). Rows are never wrapped: a row longer
    /// than the width is a defect the tests look for.
    final class Screen: Sendable {
        private struct State {
            var rows: [String] = [""]
            var row = 0
        }
        private let state = Mutex(State())

        func write(_ text: String) {
            self.state.withLock { state in
                var rest = Substring(text)
                while let first = rest.first {
                    if rest.hasPrefix("\u{1B}[1A") {
                        state.row = max(0, state.row - 1)
                        rest = rest.dropFirst(4)
                    } else if rest.hasPrefix("\u{1B}[J") {
                        state.rows = Array(state.rows.prefix(state.row)) + [""]
                        rest = rest.dropFirst(3)
                    } else if first == "\r" {
                        state.rows[state.row] = ""
                        rest = rest.dropFirst()
                    } else if first == "\n" {
                        state.row += 1
                        if state.row == state.rows.count { state.rows.append("") }
                        rest = rest.dropFirst()
                    } else {
                        state.rows[state.row].append(first)
                        rest = rest.dropFirst()
                    }
                }
            }
        }

        /// Re-wraps every row to `columns`, as tmux, VTE and iTerm2 do when a window narrows; the
        /// cursor stays on the row its text moved to.
        func reflow(to columns: Int) {
            self.state.withLock { state in
                var rows: [String] = []
                var cursor = 0
                for (index, row) in state.rows.enumerated() {
                    if index == state.row { cursor = rows.count }
                    var rest = Substring(row)
                    repeat {
                        rows.append(String(rest.prefix(columns)))
                        rest = rest.dropFirst(columns)
                    } while !rest.isEmpty
                }
                state.rows = rows
                state.row = cursor
            }
        }

        /// The rows, the empty one under the cursor at the end left out.
        var rows: [String] {
            self.state.withLock { state in state.rows.last == "" ? Array(state.rows.dropLast()) : state.rows }
        }
    }

    static func terminal(_ columns: Int, colour: Bool = false) -> TerminalCapabilities {
        TerminalCapabilities(redraws: true, colour: colour, columns: { columns })
    }

    static func progress(_ path: String, _ done: Int64, of total: Int64) -> FetchProgress {
        FetchProgress(path: path, completedBytes: done, totalBytes: total, receivedBytes: done)
    }

    @Test(arguments: [40, 60, 80, 200])
    func `every bar fits in the width, long and wide names shortened in the middle`(columns: Int) {
        let screen = Screen()
        let reporter = ProgressReporter(terminal: Self.terminal(columns), write: screen.write)
        let names = [
            "short.iso", String(repeating: "a-very-long-release-name-", count: 8) + "linux-amd64.tar.gz",
            String(repeating: "漢字", count: 40) + ".zip", "e\u{301}" + String(repeating: "x", count: 300),
        ]
        for (index, name) in names.enumerated() {
            reporter.report(Self.progress("/tmp/\(name)", Int64(index + 1) << 20, of: 8 << 20))
            Thread.sleep(forTimeInterval: 0.11)  // redraws come at most ten times a second
        }
        let rows = screen.rows
        #expect(rows.count == names.count, "\(rows)")
        for row in rows {
            #expect(TerminalCapabilities.displayWidth(row) < columns, "\(row)")
        }
        #expect(rows.contains { $0.contains("short.iso") })
        #expect(rows.filter { $0.contains("…") }.count >= 2, "\(rows)")
        reporter.clear()
        #expect(screen.rows.isEmpty)
    }

    /// After a window narrowed, bars drawn at the old width take two rows each: a redraw that
    /// moved up over one row each would leave a stale row on the screen.
    @Test func `bars drawn before the window narrowed leave no stale row`() {
        let screen = Screen()
        let columns = Mutex(80)
        let terminal = TerminalCapabilities(redraws: true, colour: false, columns: { columns.withLock { $0 } })
        let reporter = ProgressReporter(terminal: terminal, write: screen.write)
        reporter.message("pinfetch: earlier output\n")
        for index in 0..<3 {
            reporter.report(Self.progress("/tmp/release-file-number-\(index).tar.gz", 1 << 20, of: 8 << 20))
            Thread.sleep(forTimeInterval: 0.11)
        }
        #expect(screen.rows.count == 4 && screen.rows.allSatisfy { $0.count > 30 || $0.hasPrefix("pinfetch") })
        columns.withLock { $0 = 30 }
        screen.reflow(to: 30)
        reporter.resized()
        let rows = screen.rows
        #expect(rows.first == "pinfetch: earlier output", "\(rows)")
        #expect(rows.count == 4, "\(rows)")
        #expect(rows.dropFirst().allSatisfy { TerminalCapabilities.displayWidth($0) < 30 }, "\(rows)")
        // A terminal narrower than any bar: each line is cut to fit, never wrapped.
        columns.withLock { $0 = 8 }
        screen.reflow(to: 8)
        reporter.resized()
        let narrow = screen.rows
        #expect(narrow.prefix(3) == ["pinfetch", ": earlie", "r output"], "\(narrow)")  // wrapped by the terminal
        #expect(narrow.count == 6 && narrow.allSatisfy { TerminalCapabilities.displayWidth($0) <= 8 }, "\(narrow)")
        reporter.clear()
        #expect(screen.rows == ["pinfetch", ": earlie", "r output"])
    }

    @Test func `the transport emoji are two columns wide`() {
        #expect(TerminalCapabilities.displayWidth("\u{1F680}\u{1F6A2}") == 4)  // rocket, ship
        #expect(TerminalCapabilities.displayWidth("\u{1FA90}") == 2)  // ringed planet
    }

    @Test func `result lines printed while bars are up are never erased, even from many threads at once`() {
        let screen = Screen()
        let reporter = ProgressReporter(terminal: Self.terminal(80), write: screen.write)
        let paths = (0..<16).map { "/tmp/file-\($0).bin" }
        for round in 0..<20 {
            for path in paths { reporter.report(Self.progress(path, Int64(round) << 20, of: 64 << 20)) }
        }
        // Every download ends at once, as after Ctrl-C: each thread removes its bar and prints its line.
        let start = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        for path in paths {
            done.enter()
            Thread.detachNewThread {
                start.wait()
                reporter.finish(path)
                reporter.message("pinfetch: \(path): cancelled\n", isError: true)
                done.leave()
            }
        }
        for _ in paths { start.signal() }
        done.wait()
        reporter.clear()
        let rows = screen.rows
        #expect(Set(rows) == Set(paths.map { "pinfetch: \($0): cancelled" }), "\(rows)")
        #expect(rows.count == paths.count, "\(rows)")
    }

    @Test func `an error line is red only where colour is allowed`() {
        for colour in [true, false] {
            let screen = Screen()
            let reporter = ProgressReporter(terminal: Self.terminal(80, colour: colour), write: screen.write)
            reporter.report(Self.progress("/tmp/a", 1, of: 2))
            reporter.message("pinfetch: a: HTTP 404\n", isError: true)
            reporter.message("pinfetch: b: 2 bytes\n")
            let rows = screen.rows
            #expect(rows.first == (colour ? "\u{1B}[31mpinfetch: a: HTTP 404\u{1B}[0m" : "pinfetch: a: HTTP 404"))
            #expect(rows.dropFirst().first == "pinfetch: b: 2 bytes")
        }
    }

    @Test(arguments: [
        (["TERM": "xterm-256color"], true, true), (["TERM": "xterm", "NO_COLOR": "1"], true, false),
        (["TERM": "dumb"], false, false), ([:], false, false), (["TERM": ""], false, false),
    ])
    func `TERM and NO_COLOR decide redraws and colour`(environment: [String: String], redraws: Bool, colour: Bool) {
        let found = TerminalCapabilities.standardError(environment: environment, isTerminal: true)
        #expect((found != nil) == redraws)
        #expect((found?.colour ?? false) == colour)
        #expect(TerminalCapabilities.standardError(environment: environment, isTerminal: false) == nil)
    }

    @Test func `a terminal that does not redraw gets the sparse lines of a log, no escape codes`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: Fixtures.a)) { server in
            server.faults = TestFaults(bytesPerSecond: 2_000_000)
            try await withTemporaryDirectory { directory in
                let reporterSink = ProgressReporterTests.Sink()
                let reporter = ProgressReporter(
                    terminal: TerminalCapabilities(redraws: false, colour: false, columns: { 80 }),
                    lineInterval: 0,
                    write: reporterSink.write
                )
                var options = FetchOptions()
                options.progress = { reporter.report($0) }
                let result = await Fetcher(options: options).run(server.url(), to: "\(directory)/f")
                #expect(result.error == nil)
                #expect(reporterSink.value.contains("pinfetch: f: "))
                #expect(!reporterSink.value.contains("\u{1B}"))
            }
        }
    }
}
