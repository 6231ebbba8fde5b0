import PinFetch

/// One download as the progress display shows it: on a terminal a row of columns that line up
/// with the other rows drawn with it (``Layout``), always with its bar; in a log, a sentence.
struct ProgressRow: Equatable {
    /// What the download is doing, with the seconds it has been doing it or its recent rate.
    enum Activity: Equatable {
        case waitingForLock(seconds: Double)
        case connecting(seconds: Double)
        case waitingForAnswer(seconds: Double)
        /// Bytes per second over the last ``ProgressReporter/window`` seconds.
        case receiving(rate: Double)
        /// No new byte for `seconds` (at least ``ProgressReporter/stallAfter``).
        case stalled(seconds: Double)
        /// An attempt failed; the next starts in `seconds` (`nil`: the delay is not known).
        case waitingToRetry(seconds: Double?)
    }

    /// The name shown (the destination's last component, printable; for a batch's overall
    /// row, how many files are done of how many).
    var name: String
    /// How far along, 0 to 1, when known.
    var fraction: Double?
    /// Bytes done (of the representation, or received by the batch), and the length when known.
    var size: Int64
    var length: Int64?
    /// Body bytes received in this run (moves a bar without a length).
    var received: Int64
    var activity: Activity
    /// Seconds left, when they can be told.
    var eta: Double?

    /// A file's row: `completed` bytes of `total` on disk, the ETA at the activity's rate.
    init(name: String, completed: Int64, total: Int64?, received: Int64, activity: Activity) {
        self.name = name
        self.size = completed
        self.length = total
        self.received = received
        self.activity = activity
        if let total, total > 0 {
            self.fraction = min(1, max(0, Double(completed) / Double(total)))
            if case .receiving(let rate) = activity, rate > 0 { self.eta = Double(max(0, total - completed)) / rate }
        }
    }

    /// A batch's overall row: `finished` of `files` files, with the rows of those running
    /// (`running`), `bytes` received by the batch at `rate` bytes per second after `elapsed`
    /// seconds.
    ///
    /// A file counts as done in the fraction by the share of its length it has (a finished
    /// one, or one without a length yet, as 1 or 0), so the bar moves while bytes flow. The ETA
    /// is the bytes left at the batch's rate when every file left is running with a length;
    /// otherwise the batch's pace so far (the lengths of files not started are not known); none
    /// while nothing arrives.
    init(finished: Int, of files: Int, running: [ProgressRow], bytes: Int64, rate: Double, elapsed: Double) {
        self.name = "\(finished)/\(files) files"
        let done = Double(finished) + running.reduce(0) { $0 + ($1.fraction ?? 0) }
        let fraction = files > 0 ? min(1, done / Double(files)) : 0
        self.fraction = files > 0 ? fraction : nil
        self.size = bytes
        self.received = bytes
        self.activity = .receiving(rate: rate)
        let lengths = running.compactMap { row in row.length.map { max(0, $0 - row.size) } }
        if rate <= 0 {
            // Nothing arrives (every running file stalled): no time can be told.
        } else if finished + running.count == files, lengths.count == running.count {
            self.eta = Double(lengths.reduce(0, +)) / rate
        } else if fraction > 0, elapsed > 0 {
            self.eta = elapsed / fraction * (1 - fraction)
        }
    }

    /// The words for a state without a rate, longest first (a narrow row takes the first that
    /// fits), or `nil`.
    var state: [String]? {
        switch self.activity {
        case .waitingForLock(let seconds):
            let time = ProgressReporter.duration(seconds)
            return ["waiting for another pinfetch \(time)", "other pinfetch \(time)", "locked \(time)"]
        case .waitingToRetry(let seconds):
            guard let seconds, seconds >= 0.5 else { return ["retrying now"] }
            return ["retrying in \(ProgressReporter.duration(seconds))"]
        case .connecting(let seconds):
            return seconds >= 1 ? ["connecting \(ProgressReporter.duration(seconds))", "connecting"] : ["connecting"]
        case .waitingForAnswer(let seconds):
            let time = ProgressReporter.duration(seconds)
            return ["waiting for the answer \(time)", "no answer yet \(time)", "no answer yet"]
        case .receiving, .stalled:
            return nil
        }
    }

    /// The rate field: `1.2 MiB/s`, or `stalled 12s`.
    var rateText: String {
        switch self.activity {
        case .receiving(let rate): "\(ProgressReporter.size(Int64(rate)))/s"
        case .stalled(let seconds): "stalled \(ProgressReporter.duration(seconds))"
        default: ""
        }
    }

    /// The line of a log (no bar): `NAME: 8.0 MiB / 1.0 GiB (1%), ETA 3m2s, 1.2 MiB/s`, or
    /// `NAME: waiting for another pinfetch 12s`.
    var logLine: String {
        if let state = self.state?.first { return "\(self.name): \(state)" }
        var line = "\(self.name): \(ProgressReporter.size(self.size))"
        if let length = self.length, let fraction = self.fraction {
            line += " / \(ProgressReporter.size(length)) (\(Int(fraction * 100))%)"
        }
        if let eta = self.eta { line += ", ETA \(ProgressReporter.duration(eta))" }
        return line + ", " + self.rateText
    }

    // MARK: Terminal rows

    /// What the rows drawn together show and how wide each column is, chosen for all of them
    /// at once so that they line up: the name and a bar always (each at least a minimum), then
    /// the percentage, the rate, the ETA, the size done and the length, as many as the width
    /// allows in that order; the columns left over widen the bar, then the names, then the bar.
    struct Layout: Equatable {
        var nameWidth: Int
        /// Columns inside the brackets.
        var barWidth: Int
        var rate = false
        var eta = false
        var done = false
        var length = false

        static let separator = "  "
        static let percentWidth = 4  // "100%"
        static let rateWidth = 12  // "1023.9 MiB/s", "stalled 1m2s"
        static let etaWidth = 10  // "ETA 59m59s"
        static let sizeWidth = 10  // "1023.9 MiB"
        static let lengthWidth = 13  // " / 1023.9 MiB"
        static let minimumBar = 8

        /// The columns besides the name and the bar's inside.
        var fixedWidth: Int {
            var width = 2 + 2 + 2 + Self.percentWidth  // separator, brackets, separator, percentage
            if self.rate { width += 2 + Self.rateWidth }
            if self.eta { width += 2 + Self.etaWidth }
            if self.done { width += 2 + Self.sizeWidth }
            if self.length { width += Self.lengthWidth }
            return width
        }

        /// The layout of `names` (display widths) in `columns`.
        static func fitting(names: [Int], columns: Int) -> Layout {
            let natural = names.max() ?? 0
            var layout = Layout(nameWidth: min(natural, 12), barWidth: Self.minimumBar)
            // Each column is added only while the names keep at least this much room, and the bar this much.
            let steps: [(WritableKeyPath<Layout, Bool>, names: Int, bar: Int)] = [
                (\.rate, 12, Self.minimumBar), (\.eta, 12, Self.minimumBar), (\.done, 20, Self.minimumBar),
                (\.length, 28, 16),
            ]
            for (field, names, bar) in steps {
                var next = layout
                next[keyPath: field] = true
                next.nameWidth = min(natural, names)
                guard next.nameWidth + bar + next.fixedWidth <= columns else { break }
                layout = next
            }
            var room = columns - layout.fixedWidth - layout.nameWidth - layout.barWidth
            func grow(_ field: WritableKeyPath<Layout, Int>, upTo bound: Int) {
                let more = max(0, min(room, bound - layout[keyPath: field]))
                layout[keyPath: field] += more
                room -= more
            }
            grow(\.barWidth, upTo: 16)
            grow(\.nameWidth, upTo: natural)
            grow(\.barWidth, upTo: 24)
            return layout
        }
    }

    /// The bar's inside, `width` columns: `#` for the part done; without a length, a `<=>` that
    /// moves as bytes arrive (and stops when they do not).
    func bar(_ width: Int) -> String {
        if let fraction = self.fraction {
            let filled = Int(fraction * Double(width))
            return String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        }
        guard width >= 3, self.state == nil else { return String(repeating: ".", count: width) }
        let at = Int((self.received >> 16) % Int64(width - 2))
        return String(repeating: ".", count: at) + "<=>" + String(repeating: ".", count: width - 3 - at)
    }

    /// The row in `layout`, no wider than its columns (trailing blanks dropped).
    func line(_ layout: Layout) -> String {
        let name = Self.padded(ProgressReporter.shorten(self.name, to: layout.nameWidth), to: layout.nameWidth)
        let head = name + Layout.separator + "[" + self.bar(layout.barWidth) + "]" + Layout.separator
        if let state = self.state {
            let room = layout.fixedWidth - 6
            let words = state.first { TerminalCapabilities.displayWidth($0) <= room } ?? state.last ?? ""
            return head + TerminalCapabilities.cut(words, to: room)
        }
        var line = head
        if self.fraction == nil, layout.rate, !layout.done {
            // No length, and no room for the size column: the bytes so far where the percentage
            // would be, so a body without a length still shows it moves.
            let room = Layout.percentWidth + Layout.separator.count + Layout.rateWidth
            let both = ProgressReporter.size(self.size) + " " + self.rateText
            line += Self.padded(both.count <= room ? both : ProgressReporter.size(self.size), to: room, right: true)
        } else {
            line += Self.padded(self.fraction.map { "\(Int($0 * 100))%" } ?? "", to: Layout.percentWidth, right: true)
            if layout.rate { line += Layout.separator + Self.padded(self.rateText, to: Layout.rateWidth, right: true) }
        }
        if layout.eta {
            let eta = self.eta.map { "ETA \(ProgressReporter.duration($0))" } ?? ""
            line += Layout.separator + Self.padded(eta, to: Layout.etaWidth)
        }
        if layout.done {
            line += Layout.separator + Self.padded(ProgressReporter.size(self.size), to: Layout.sizeWidth, right: true)
        }
        if layout.length, let length = self.length { line += " / " + ProgressReporter.size(length) }
        while line.hasSuffix(" ") { line.removeLast() }
        return line
    }

    /// `text` padded with blanks to `columns` (on the left with `right`).
    static func padded(_ text: String, to columns: Int, right: Bool = false) -> String {
        let blanks = String(repeating: " ", count: max(0, columns - TerminalCapabilities.displayWidth(text)))
        return right ? blanks + text : text + blanks
    }
}
