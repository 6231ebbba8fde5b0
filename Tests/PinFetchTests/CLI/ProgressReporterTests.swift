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
        #expect(drawn.contains("a.iso: 512.0 MiB / 1.0 GiB (50%)"))
        #expect(drawn.contains("b.tar: 1.0 MiB / 4.0 MiB (25%)"))
        #expect(drawn.contains("[############............]"))
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
        reporter.report(FetchProgress(path: "/tmp/b.iso", completedBytes: 0, totalBytes: nil, receivedBytes: 0))
        Thread.sleep(forTimeInterval: ProgressReporter.stallAfter + 0.3)
        reporter.report(Self.progress("/tmp/a.iso", 8 << 20, of: 1 << 30))
        let lines = sink.value.split(separator: "\n").suffix(2)
        #expect(lines.first?.hasPrefix("pinfetch: a.iso: 8.0 MiB / 1.0 GiB (0%), stalled 3s") == true, "\(lines)")
        #expect(lines.last?.hasSuffix("b.iso: 0 B, waiting for the answer") == true, "\(lines)")
    }
}
