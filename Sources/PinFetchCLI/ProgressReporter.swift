import Foundation
import PinFetch
import Synchronization

/// Progress on stderr: a bar redrawn in place on a terminal, a line every few seconds
/// otherwise (CI logs). Thread-safe: called from the transfer thread.
final class ProgressReporter: Sendable {
    private struct State {
        var lastLine = Date()  // the first line after a few seconds, not at once
        var drewBar = false
    }

    private let write: @Sendable (String) -> Void
    private let isTerminal: Bool
    private let name: String
    private let started = Date()
    private let state = Mutex(State())

    /// - Parameters:
    ///   - name: The file name shown.
    ///   - isTerminal: `true` to draw a bar with `\r`; `false` for a line at most every 5 seconds.
    init(name: String, isTerminal: Bool, write: @escaping @Sendable (String) -> Void) {
        self.name = name
        self.isTerminal = isTerminal
        self.write = write
    }

    func report(_ progress: FetchProgress) {
        let now = Date()
        let elapsed = max(0.001, now.timeIntervalSince(self.started))
        let rate = Double(progress.receivedBytes) / elapsed
        var text = "\(self.name): \(Self.size(progress.completedBytes))"
        if let total = progress.totalBytes, total > 0 {
            let fraction = min(1, Double(progress.completedBytes) / Double(total))
            text += " / \(Self.size(total)) (\(Int(fraction * 100))%)"
            if self.isTerminal {
                let width = 24
                let filled = Int(fraction * Double(width))
                text =
                    "[\(String(repeating: "#", count: filled))\(String(repeating: ".", count: width - filled))] " + text
            }
            if rate > 0 {
                text += ", ETA \(Self.duration(Double(total - progress.completedBytes) / rate))"
            }
        }
        text += ", \(Self.size(Int64(rate)))/s"
        let line: String? = self.state.withLock { state in
            if self.isTerminal {
                state.drewBar = true
                return "\r\u{1B}[K" + text
            }
            guard now.timeIntervalSince(state.lastLine) >= 5 else { return nil }
            state.lastLine = now
            return text + "\n"
        }
        if let line { self.write(line) }
    }

    /// Ends a bar's line so later messages start on their own.
    func finish() {
        let drew = self.state.withLock { $0.drewBar }
        if drew { self.write("\r\u{1B}[K") }
    }

    static func size(_ bytes: Int64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(bytes)
        var unit = 0
        while value >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(bytes) B" : "\(String(format: "%.1f", value)) \(units[unit])"
    }

    static func duration(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds >= 0 else { return "--" }
        let total = Int(seconds.rounded())
        return total >= 3600
            ? "\(total / 3600)h\(total % 3600 / 60)m" : total >= 60 ? "\(total / 60)m\(total % 60)s" : "\(total)s"
    }
}
