import FoundationEssentials
@preconcurrency import Glibc
import PinFetch
import Synchronization

/// Progress on stderr. On a terminal that redraws, a row per active download (its bar,
/// percentage, recent rate, ETA and sizes, as many as the width allows; ``ProgressRow``) and,
/// for a batch, an overall row, redrawn in place, with result, error and retry lines printed
/// above them so no redraw ever erases one; otherwise (CI logs, `TERM=dumb`) a line every
/// 5 seconds at most. Thread-safe: downloads report from their own threads, and each change of
/// the screen is computed and written under one lock, so two threads' redraws never interleave.
final class ProgressReporter: Sendable {
    /// Bytes received by each time of the last ``window`` seconds, oldest first: the rate shown
    /// is recent, so a stall shows at once instead of an average since the start.
    private struct RateWindow {
        var samples: [(time: Date, received: Int64)]

        init(_ received: Int64, at time: Date) { self.samples = [(time, received)] }

        mutating func add(_ received: Int64, at now: Date) {
            self.samples.append((now, received))
            // One sample older than the window stays, so the window is always covered.
            while self.samples.count > 2, now.timeIntervalSince(self.samples[1].time) >= ProgressReporter.window {
                self.samples.removeFirst()
            }
        }

        /// Bytes per second over the window, as of `now`.
        func rate(now: Date) -> Double {
            guard let oldest = self.samples.first, let newest = self.samples.last else { return 0 }
            return Double(newest.received - oldest.received) / max(0.001, now.timeIntervalSince(oldest.time))
        }
    }

    private struct Download {
        var progress: FetchProgress
        var rate: RateWindow
        /// When the last new byte came (the start until one does), and when the phase began.
        var lastByte: Date
        var phaseSince: Date
        /// When the next attempt starts, after a failed one (``ProgressReporter/retrying(_:in:)``).
        var retryAt: Date?

        init(progress: FetchProgress, started: Date) {
            self.progress = progress
            self.rate = RateWindow(progress.receivedBytes, at: started)
            self.lastByte = started
            self.phaseSince = started
        }

        /// Takes `progress` as of `now`.
        mutating func update(_ progress: FetchProgress, now: Date) {
            if progress.receivedBytes > self.progress.receivedBytes { self.lastByte = now }
            if progress.phase != self.progress.phase {
                self.phaseSince = now
                if progress.phase == .receiving { self.lastByte = now }
            }
            self.progress = progress
            self.rate.add(progress.receivedBytes, at: now)
        }

        /// The row it shows as of `now`.
        func row(now: Date) -> ProgressRow {
            let since = now.timeIntervalSince(self.phaseSince)
            let silent = now.timeIntervalSince(self.lastByte)
            let activity: ProgressRow.Activity =
                switch self.progress.phase {
                case .waitingForLock: .waitingForLock(seconds: since)
                case .connecting: .connecting(seconds: since)
                case .waitingForAnswer: .waitingForAnswer(seconds: since)
                case .waitingToRetry: .waitingToRetry(seconds: self.retryAt.map { $0.timeIntervalSince(now) })
                case .receiving:
                    silent >= ProgressReporter.stallAfter
                        ? .stalled(seconds: silent) : .receiving(rate: self.rate.rate(now: now))
                }
            return ProgressRow(
                name: Printable.text(Text.lastPathComponent(self.progress.path)),
                completed: self.progress.completedBytes,
                total: self.progress.totalBytes,
                received: self.progress.receivedBytes,
                activity: activity
            )
        }
    }

    /// Seconds over which the rate is measured.
    static let window = 5.0
    /// Seconds without a new byte after which a download shows `stalled`.
    static let stallAfter = 3.0

    private struct State {
        var downloads: [String: Download] = [:]
        var order: [String] = []
        /// The display width of each line drawn last time (columns).
        var drawnWidths: [Int] = []
        var lastDraw = Date.distantPast
        var lastLine = Date()  // the first line after a few seconds, not at once
        /// Files in the run, and how many have finished.
        var files = 1
        var finished = 0
        /// The batch: when it began, bytes its finished downloads received, and its rate.
        var started = Date()
        var finishedBytes: Int64 = 0
        var batchRate = RateWindow(0, at: Date())

        /// Bytes the batch received so far.
        var receivedBytes: Int64 {
            self.finishedBytes + self.downloads.values.reduce(0) { $0 + $1.progress.receivedBytes }
        }
    }

    private let write: @Sendable (String) -> Void
    private let terminal: TerminalCapabilities?
    private let lineInterval: Double
    private let state = Mutex(State())

    /// - Parameters:
    ///   - terminal: What standard error can show; `nil` (or one that does not redraw) for
    ///     sparse lines.
    ///   - lineInterval: Seconds between two sets of lines off a terminal (a CI log).
    init(
        terminal: TerminalCapabilities?,
        lineInterval: Double = 5,
        write: @escaping @Sendable (String) -> Void
    ) {
        self.terminal = terminal?.redraws == true ? terminal : nil
        self.lineInterval = lineInterval
        self.write = write
        if lineInterval <= 0 { self.state.withLock { $0.lastLine = .distantPast } }
    }

    func report(_ progress: FetchProgress) {
        let now = Date()
        self.state.withLock { state in
            if state.downloads[progress.path] == nil {
                state.order.append(progress.path)
                state.downloads[progress.path] = Download(progress: progress, started: now)
            }
            state.downloads[progress.path]?.update(progress, now: now)
            state.batchRate.add(state.receivedBytes, at: now)
            if self.terminal != nil {
                guard now.timeIntervalSince(state.lastDraw) >= 0.1 else { return }
                state.lastDraw = now
                self.write(self.redraw(&state, now: now))
                return
            }
            guard now.timeIntervalSince(state.lastLine) >= self.lineInterval else { return }
            state.lastLine = now
            // Every line starts with "pinfetch: ": a name at the start of a line could be read as a
            // command by a CI runner (`::stop-commands::` from a Content-Disposition).
            let lines = state.order.compactMap { state.downloads[$0] }
                .map { "pinfetch: " + $0.row(now: now).logLine + "\n" }
            // A CI log of a batch also gets where the batch stands.
            let total =
                state.files > 1
                ? "pinfetch: \(state.finished) of \(state.files) files done, \(state.order.count) running\n" : ""
            self.write(lines.joined() + total)
        }
    }

    /// The number of files in the run, for the totals of a batch.
    func expect(files: Int) {
        self.state.withLock { $0.files = files }
    }

    /// Notes that `path`'s next attempt starts in `seconds` (its row counts down to it).
    func retrying(_ path: String, in seconds: Double) {
        self.state.withLock { $0.downloads[path]?.retryAt = Date().addingTimeInterval(seconds) }
    }

    /// Removes `path`'s bar (its result line follows).
    func finish(_ path: String) {
        self.state.withLock { state in
            state.finished += 1
            guard let download = state.downloads.removeValue(forKey: path) else { return }
            state.finishedBytes += download.progress.receivedBytes
            state.order.removeAll { $0 == path }
            if self.terminal != nil { self.write(self.redraw(&state, now: Date())) }
        }
    }

    /// Writes `line` (ending in a newline) above the bars: on a terminal the bars are erased
    /// first and drawn again below it, so neither hides the other. An error line is red where
    /// colour is allowed.
    func message(_ line: String, isError: Bool = false) {
        self.state.withLock { state in
            guard self.terminal != nil else { return self.write(line) }
            var text = self.erase(&state)
            if isError, self.terminal?.colour == true, line.hasSuffix("\n") {
                text += "\u{1B}[31m" + line.dropLast() + "\u{1B}[0m\n"
            } else {
                text += line
            }
            self.write(text + self.redraw(&state, now: Date()))
        }
    }

    /// Erases the bars and draws no more until the next progress: at the end of the run, and
    /// after an interruption, the terminal is left with the cursor at the start of a clean line.
    func clear() {
        self.state.withLock { state in
            state.downloads.removeAll()
            state.order.removeAll()
            guard self.terminal != nil, !state.drawnWidths.isEmpty else { return }
            self.write(self.erase(&state))
        }
    }

    /// Draws the bars again at the terminal's new width (`SIGWINCH`).
    func resized() {
        self.state.withLock { state in
            guard self.terminal != nil, !state.drawnWidths.isEmpty else { return }
            self.write(self.redraw(&state, now: Date()))
        }
    }

    /// Moves up over the lines drawn last time and clears to the end of the screen. A terminal
    /// made narrower since re-wraps a line drawn at the old width onto several rows (tmux, VTE,
    /// iTerm2 do): each counts the rows it takes at the width now.
    private func erase(_ state: inout State) -> String {
        guard !state.drawnWidths.isEmpty else { return "" }
        defer { state.drawnWidths = [] }
        let columns = max(1, self.terminal?.columns() ?? 80)
        let rows = state.drawnWidths.reduce(0) { $0 + max(1, ($1 + columns - 1) / columns) }
        return String(repeating: "\u{1B}[1A", count: rows) + "\r\u{1B}[J"
    }

    /// Erases the lines drawn last time and draws a row per active download and, for a
    /// batch, the overall row, all in one ``ProgressRow/Layout`` so their columns line up,
    /// each within one column less than the width (so no terminal wraps it, and the count of
    /// lines to move up over stays right).
    private func redraw(_ state: inout State, now: Date) -> String {
        var text = self.erase(&state)
        if text.isEmpty { text = "\r\u{1B}[J" }
        let columns = max(1, (self.terminal?.columns() ?? 80) - 1)
        var rows = state.order.compactMap { state.downloads[$0]?.row(now: now) }
        Self.distinguish(&rows, columns: columns)
        if state.files > 1, !rows.isEmpty {
            rows.append(
                ProgressRow(
                    finished: state.finished,
                    of: state.files,
                    running: rows,
                    bytes: state.receivedBytes,
                    rate: state.batchRate.rate(now: now),
                    elapsed: now.timeIntervalSince(state.started)
                )
            )
        }
        let layout = ProgressRow.Layout.fitting(
            names: rows.map { TerminalCapabilities.displayWidth($0.name) },
            columns: columns
        )
        let lines = rows.map { TerminalCapabilities.cut($0.line(layout), to: columns) }
        text += lines.map { $0 + "\n" }.joined()
        state.drawnWidths = lines.map { TerminalCapabilities.displayWidth($0) }
        return text
    }

    /// Names drawn together that would look the same once shortened to a row's name column
    /// (`release-1.2.3-linux.tar.gz`, `release-1.2.4-linux.tar.gz`) lose the start they share
    /// instead, so the part that tells them apart shows: `…3-linux.tar.gz`.
    static func distinguish(_ rows: inout [ProgressRow], columns: Int) {
        guard rows.count > 1 else { return }
        let width = ProgressRow.Layout.fitting(
            names: rows.map { TerminalCapabilities.displayWidth($0.name) },
            columns: columns
        ).nameWidth
        // Each group of rows that look the same loses the start its own names share.
        let groups = Dictionary(grouping: rows.indices) { Self.shorten(rows[$0].name, to: width) }
        for indices in groups.values where indices.count > 1 {
            let names = indices.map { Array(rows[$0].name) }
            var shared = 0
            while names.allSatisfy({ shared < $0.count - 1 && $0[shared] == names[0][shared] }) { shared += 1 }
            guard shared > 1 else { continue }
            for (index, name) in zip(indices, names) { rows[index].name = "…" + String(name[shared...]) }
        }
    }

    /// `name` in at most `columns` columns, its middle replaced by `…` when it is longer.
    static func shorten(_ name: String, to columns: Int) -> String {
        guard TerminalCapabilities.displayWidth(name) > columns else { return name }
        let half = (columns - 1) / 2
        let head = TerminalCapabilities.cut(name, to: columns - 1 - half)
        let tail = String(
            TerminalCapabilities.cut(String(name.reversed()), to: half).reversed()
        )
        return head + "…" + tail
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
        return unit == 0 ? "\(bytes) B" : "\(Text.fixed(value, places: 1)) \(units[unit])"
    }

    /// `1h2m`, `3m4s`, `5s`.
    static func duration(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds >= 0 else { return "--" }
        let total = Int(seconds.rounded())
        if total >= 3600 { return "\(total / 3600)h\(total % 3600 / 60)m" }
        return total >= 60 ? "\(total / 60)m\(total % 60)s" : "\(total)s"
    }
}
