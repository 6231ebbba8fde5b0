import Foundation
@_spi(CLI) import PinFetch
import Synchronization

/// Progress on stderr. On a terminal, a bar per active download (bytes, rate, ETA) redrawn in
/// place; otherwise (CI logs) a line every 5 seconds at most. Thread-safe: downloads report
/// from their own threads.
final class ProgressReporter: Sendable {
    private struct Download {
        var progress: FetchProgress
        let started: Date
    }

    private struct State {
        var downloads: [String: Download] = [:]
        var order: [String] = []
        var linesDrawn = 0
        var lastDraw = Date.distantPast
        var lastLine = Date()  // the first line after a few seconds, not at once
        /// Files in the run, and how many have finished.
        var files = 1
        var finished = 0
    }

    private let write: @Sendable (String) -> Void
    private let isTerminal: Bool
    private let lineInterval: Double
    private let state = Mutex(State())

    /// - Parameters:
    ///   - isTerminal: `true` to draw bars with ANSI cursor moves; `false` for sparse lines.
    ///   - lineInterval: Seconds between two sets of lines off a terminal (a CI log).
    init(isTerminal: Bool, lineInterval: Double = 5, write: @escaping @Sendable (String) -> Void) {
        self.isTerminal = isTerminal
        self.lineInterval = lineInterval
        self.write = write
        if lineInterval <= 0 { self.state.withLock { $0.lastLine = .distantPast } }
    }

    func report(_ progress: FetchProgress) {
        let now = Date()
        let text: String? = self.state.withLock { state in
            if state.downloads[progress.path] == nil {
                state.order.append(progress.path)
                state.downloads[progress.path] = Download(progress: progress, started: now)
            }
            state.downloads[progress.path]?.progress = progress
            if self.isTerminal {
                guard now.timeIntervalSince(state.lastDraw) >= 0.1 else { return nil }
                state.lastDraw = now
                return self.redraw(&state, now: now)
            }
            guard now.timeIntervalSince(state.lastLine) >= self.lineInterval else { return nil }
            state.lastLine = now
            // Every line starts with "pinfetch: ": a name at the start of a line could be read as a
            // command by a CI runner (`::stop-commands::` from a Content-Disposition).
            let lines = state.order.compactMap { state.downloads[$0] }
                .map { "pinfetch: " + Self.line(for: $0, now: now) + "\n" }
            // A CI log of a batch also gets where the batch stands.
            let total =
                state.files > 1
                ? "pinfetch: \(state.finished) of \(state.files) files done, \(state.order.count) running\n" : ""
            return lines.joined() + total
        }
        if let text { self.write(text) }
    }

    /// The number of files in the run, for the totals of a batch.
    func expect(files: Int) {
        self.state.withLock { $0.files = files }
    }

    /// Removes `path`'s bar (its result line follows).
    func finish(_ path: String) {
        let text: String? = self.state.withLock { state in
            state.finished += 1
            guard state.downloads.removeValue(forKey: path) != nil else { return nil }
            state.order.removeAll { $0 == path }
            return self.isTerminal ? self.redraw(&state, now: Date()) : nil
        }
        if let text { self.write(text) }
    }

    /// Writes `line` (ending in a newline) above the bars: on a terminal the bars are erased
    /// first and drawn again below it, so neither hides the other.
    func message(_ line: String) {
        let text: String = self.state.withLock { state in
            guard self.isTerminal, state.linesDrawn > 0 else { return line }
            let erase = String(repeating: "\u{1B}[1A", count: state.linesDrawn) + "\r\u{1B}[J"
            state.linesDrawn = 0
            return erase + line + self.redraw(&state, now: Date())
        }
        self.write(text)
    }

    /// Erases the lines drawn last time and draws one per active download.
    private func redraw(_ state: inout State, now: Date) -> String {
        var text = String(repeating: "\u{1B}[1A", count: state.linesDrawn) + "\r\u{1B}[J"
        let lines = state.order.compactMap { state.downloads[$0] }.map { Self.line(for: $0, now: now, bar: true) }
        text += lines.map { $0 + "\n" }.joined()
        state.linesDrawn = lines.count
        return text
    }

    private static func line(for download: Download, now: Date, bar: Bool = false) -> String {
        let progress = download.progress
        let elapsed = max(0.001, now.timeIntervalSince(download.started))
        let rate = Double(progress.receivedBytes) / elapsed
        var text =
            "\(Printable.text((progress.path as NSString).lastPathComponent)): \(Self.size(progress.completedBytes))"
        if let total = progress.totalBytes, total > 0 {
            let fraction = min(1, Double(progress.completedBytes) / Double(total))
            text += " / \(Self.size(total)) (\(Int(fraction * 100))%)"
            if bar {
                let width = 24
                let filled = Int(fraction * Double(width))
                text =
                    "[\(String(repeating: "#", count: filled))\(String(repeating: ".", count: width - filled))] " + text
            }
            if rate > 0 { text += ", ETA \(Self.duration(Double(total - progress.completedBytes) / rate))" }
        }
        return text + ", \(Self.size(Int64(rate)))/s"
    }

    /// `1.5 MiB`-style sizes (binary units).
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

    /// `1h2m`, `3m4s`, `5s`.
    static func duration(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds >= 0 else { return "--" }
        let total = Int(seconds.rounded())
        if total >= 3600 { return "\(total / 3600)h\(total % 3600 / 60)m" }
        return total >= 60 ? "\(total / 60)m\(total % 60)s" : "\(total)s"
    }
}
