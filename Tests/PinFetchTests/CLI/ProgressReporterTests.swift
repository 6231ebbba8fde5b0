import Foundation
import PinFetch
import Synchronization
import Testing

@testable import PinFetchCLI

/// Progress on stderr: bars per active download on a terminal, sparse lines otherwise.
struct ProgressReporterTests {
    final class Sink: Sendable {
        let text = Mutex("")
        func write(_ more: String) { self.text.withLock { $0 += more } }
        var value: String { self.text.withLock { $0 } }
    }

    static func progress(_ path: String, _ done: Int64, of total: Int64) -> FetchProgress {
        FetchProgress(path: path, completedBytes: done, totalBytes: total, receivedBytes: done)
    }

    @Test func `a terminal gets one bar per active download, redrawn in place`() {
        let sink = Sink()
        let reporter = ProgressReporter(
            terminal: TerminalCapabilities(redraws: true, colour: false, columns: { 80 }),
            write: sink.write
        )
        reporter.report(Self.progress("/tmp/a.iso", 512 << 20, of: 1 << 30))
        Thread.sleep(forTimeInterval: 0.15)
        reporter.report(Self.progress("/tmp/b.tar", 1 << 20, of: 4 << 20))
        let drawn = sink.value
        // Columns that line up: name, bar, percentage, rate, ETA, size done and length.
        #expect(drawn.contains("a.iso  [############............]   50%"), "\(drawn)")
        #expect(drawn.contains("b.tar  [######..................]   25%"), "\(drawn)")
        #expect(drawn.contains("  512.0 MiB\n"), "\(drawn)")
        #expect(drawn.contains("\u{1B}[1A"))  // the second draw moved up over the first
        reporter.finish("/tmp/a.iso")
        reporter.finish("/tmp/b.tar")
        #expect(sink.value.hasSuffix("\r\u{1B}[J"))  // nothing left drawn
    }

    @Test func `a log gets no line in the first seconds and no terminal codes`() {
        let sink = Sink()
        let reporter = ProgressReporter(terminal: nil, write: sink.write)
        for step in 1...50 { reporter.report(Self.progress("/tmp/a.iso", Int64(step) << 20, of: 50 << 20)) }
        reporter.finish("/tmp/a.iso")
        #expect(sink.value.isEmpty)
    }

    @Test(arguments: [(Int64(0), "0 B"), (1023, "1023 B"), (1536, "1.5 KiB"), (5 << 30, "5.0 GiB")])
    func `sizes use binary units`(bytes: Int64, text: String) {
        #expect(ProgressReporter.size(bytes) == text)
    }

    /// The rate is recent: a download that stopped receiving says `stalled` (after 3 s), not
    /// an average since its start that slowly falls; one with no byte yet is waiting for the
    /// answer. (The waits are the mechanism's own thresholds, not bounds on the machine.)
    @Test func `a stall shows as stalled, a silent server as waiting for the answer`() {
        let sink = Sink()
        let reporter = ProgressReporter(terminal: nil, lineInterval: 0, write: sink.write)
        reporter.report(Self.progress("/tmp/a.iso", 8 << 20, of: 1 << 30))
        reporter.report(
            FetchProgress(
                path: "/tmp/b.iso",
                completedBytes: 0,
                totalBytes: nil,
                receivedBytes: 0,
                phase: .waitingForAnswer
            )
        )
        Thread.sleep(forTimeInterval: ProgressReporter.stallAfter + 0.3)
        reporter.report(Self.progress("/tmp/a.iso", 8 << 20, of: 1 << 30))
        let lines = sink.value.split(separator: "\n").suffix(2)
        #expect(lines.first?.hasPrefix("pinfetch: a.iso: 8.0 MiB / 1.0 GiB (0%), stalled 3s") == true, "\(lines)")
        #expect(lines.last?.hasSuffix("b.iso: waiting for the answer 3s") == true, "\(lines)")
    }

    static func row(
        _ name: String,
        _ activity: ProgressRow.Activity,
        done: Int64 = 1 << 20,
        of total: Int64? = 8 << 20
    )
        -> ProgressRow
    {
        ProgressRow(name: name, completed: done, total: total, received: done, activity: activity)
    }

    /// The columns a width allows: at 80 the name, bar, percentage, rate, ETA and size; at 50
    /// the bar and the rate still; never wider than the width; the rows of one layout line up.
    @Test(arguments: [(79, true, true), (59, true, false), (49, true, false), (30, false, false)])
    func `a layout keeps the bar and adds what fits`(columns: Int, rate: Bool, size: Bool) {
        let rows = [
            Self.row(String(repeating: "long-name-", count: 8) + ".tar.gz", .receiving(rate: 1_500_000)),
            Self.row("a.iso", .stalled(seconds: 12)),
            Self.row("b.bin", .waitingForLock(seconds: 4), done: 0, of: nil),
            Self.row("c.bin", .waitingForAnswer(seconds: 2), done: 0, of: nil),
            Self.row("d.bin", .connecting(seconds: 0), done: 0, of: nil),
            Self.row("e.bin", .receiving(rate: 100), done: 300_000, of: nil),
        ]
        let layout = ProgressRow.Layout.fitting(
            names: rows.map { TerminalCapabilities.displayWidth($0.name) },
            columns: columns
        )
        #expect(layout.rate == rate && layout.done == size, "\(layout)")
        let lines = rows.map { $0.line(layout) }
        for line in lines {
            #expect(TerminalCapabilities.displayWidth(line) <= columns, "\(line)")
        }
        #expect(Set(lines.map { TerminalDisplayTests.column(of: "[", in: $0) }).count == 1, "\(lines)")
        #expect(Set(lines.map { TerminalDisplayTests.column(of: "]", in: $0) }).count == 1, "\(lines)")
        if rate {
            #expect(lines[0].contains("1.4 MiB/s") && lines[1].contains("stalled 12s"), "\(lines)")
            #expect(lines[2].contains("pinfetch 4s") && lines[3].contains("answer"), "\(lines)")
            #expect(lines[4].hasSuffix("connecting") && lines[5].contains("<=>"), "\(lines)")
            // A body without a length shows its bytes even where no size column fits.
            #expect(lines[5].contains("293.0 KiB"), "\(lines)")
        }
        if size { #expect(lines[0].contains("ETA") && lines[0].contains("1.0 MiB"), "\(lines)") }
    }

    /// Files not started have no known length: the fraction counts files, each running one by
    /// the share it has, so the bar moves while bytes flow; the ETA is the batch's pace.
    @Test func `a batch's overall row counts files and the running files' shares`() {
        let running = [Self.row("a.iso", .receiving(rate: 1), done: 4 << 20, of: 8 << 20)]
        let row = ProgressRow(
            finished: 10,
            of: 40,
            running: running,
            bytes: 3 << 20,
            rate: Double(2 << 20),
            elapsed: 21
        )
        #expect(row.name == "10/40 files")
        #expect(row.fraction == 10.5 / 40)
        #expect(row.eta.map { abs($0 - 59) < 0.001 } == true, "\(String(describing: row.eta))")
        let layout = ProgressRow.Layout.fitting(names: [11], columns: 79)
        #expect(row.line(layout) == "10/40 files  [#####...............]   26%     2.0 MiB/s  ETA 59s        3.0 MiB")
        let started = ProgressRow(
            finished: 0,
            of: 40,
            running: running,
            bytes: 4 << 20,
            rate: Double(1 << 20),
            elapsed: 2
        )
        #expect(started.fraction == 0.5 / 40)
    }

    /// Once every file left is running with a length, the ETA is the bytes left at the batch's rate.
    @Test func `a batch's ETA is the bytes left once every length is known`() {
        let running = [
            Self.row("a.iso", .receiving(rate: 1), done: 1 << 20, of: 8 << 20),
            Self.row("b.iso", .receiving(rate: 1), done: 2 << 20, of: 8 << 20),
        ]
        let row = ProgressRow(finished: 2, of: 4, running: running, bytes: 20 << 20, rate: Double(1 << 20), elapsed: 30)
        #expect(row.fraction == (2 + 0.125 + 0.25) / 4)
        #expect(row.eta == 13)
        // Nothing arriving (the files left stalled): no time is told.
        let stalled = ProgressRow(finished: 2, of: 4, running: running, bytes: 20 << 20, rate: 0, elapsed: 30)
        #expect(stalled.eta == nil)
    }

    /// Between attempts the row counts down to the next one instead of showing a stall.
    @Test func `a row waiting to retry counts down, and a log says so too`() {
        let sink = Sink()
        let reporter = ProgressReporter(
            terminal: TerminalCapabilities(redraws: true, colour: false, columns: { 80 }),
            write: sink.write
        )
        reporter.report(Self.progress("/tmp/a.iso", 8 << 20, of: 16 << 20))
        reporter.retrying("/tmp/a.iso", in: 30)
        Thread.sleep(forTimeInterval: 0.15)
        var waiting = Self.progress("/tmp/a.iso", 8 << 20, of: 16 << 20)
        waiting.phase = .waitingToRetry
        reporter.report(waiting)
        #expect(sink.value.hasSuffix("retrying in 30s\n"), "\(sink.value)")
        let row = Self.row("a.iso", .waitingToRetry(seconds: 75))
        #expect(row.logLine == "a.iso: retrying in 1m15s")
        #expect(Self.row("a.iso", .waitingToRetry(seconds: nil)).logLine == "a.iso: retrying now")
    }

    /// Names that differ only past what a narrow row shows lose the start they share.
    @Test func `names alike but for their middle stay apart`() {
        var rows = [
            Self.row("release-1.2.3-linux-amd64.tar.gz", .receiving(rate: 1)),
            Self.row("release-1.2.4-linux-amd64.tar.gz", .receiving(rate: 1)),
        ]
        ProgressReporter.distinguish(&rows, columns: 49)
        let layout = ProgressRow.Layout.fitting(
            names: rows.map { TerminalCapabilities.displayWidth($0.name) },
            columns: 49
        )
        let lines = rows.map { $0.line(layout) }
        #expect(lines[0].hasPrefix("…3-") && lines[1].hasPrefix("…4-"), "\(lines)")
        // Only the rows that look alike change, beside one that does not.
        var three = rows + [Self.row("c.bin", .receiving(rate: 1))]
        three[0].name = "release-1.2.3-linux-amd64.tar.gz"
        three[1].name = "release-1.2.4-linux-amd64.tar.gz"
        ProgressReporter.distinguish(&three, columns: 49)
        #expect(
            three.map(\.name) == ["…3-linux-amd64.tar.gz", "…4-linux-amd64.tar.gz", "c.bin"],
            "\(three.map(\.name))"
        )
        var apart = [Self.row("a.iso", .receiving(rate: 1)), Self.row("b.iso", .receiving(rate: 1))]
        ProgressReporter.distinguish(&apart, columns: 49)
        #expect(apart.map(\.name) == ["a.iso", "b.iso"])
    }
}
