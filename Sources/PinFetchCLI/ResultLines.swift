import PinFetch

/// The lines a person reads on standard error about each file and about a batch: short, in
/// units people read (the whole digest is in `--json` and, with `-v`, here too).
enum ResultLines {
    /// `pinfetch: NAME  48.0 MiB  sha256:1a2b3c4d…  downloaded`, the whole digest when `verbose`.
    /// On a terminal `columns` wide the line does not wrap: a path too long becomes its name,
    /// which loses its middle (`…`), and where even that does not fit the digest goes, then the
    /// size. A log (`nil`) keeps the whole line.
    static func result(_ result: FetchResult, verbose: Bool, columns: Int? = nil) -> String {
        let hex = result.digest ?? ""
        let digest = "\(result.algorithm.rawValue):" + (verbose || hex.count <= 8 ? hex : hex.prefix(8) + "…")
        let size = ProgressReporter.size(result.bytes)
        let status = result.status.rawValue
        return Self.line(
            name: Printable.text(result.path),
            tails: ["  \(size)  \(digest)  \(status)", "  \(size)  \(status)", "  \(status)"],
            columns: columns
        )
    }

    /// The line for a file a stop signal ended: its name (shortened as in ``result(_:verbose:columns:)``)
    /// and how much of it the partial kept, e.g. `pinfetch: NAME: interrupted at 1.0 MiB of 4.0
    /// MiB, resumable`, with less where that does not fit. The URL and the exact bytes are in `--json`.
    static func interrupted(_ result: FetchResult, columns: Int? = nil) -> String {
        var tails = [": interrupted before its first byte", ": interrupted"]
        if let partial = result.partial, partial.bytes > 0 {
            let at = ": interrupted at \(ProgressReporter.size(partial.bytes))"
            tails = [at + ", resumable", ": resumable", ""]
            if result.bytes > partial.bytes {
                tails.insert(at + " of \(ProgressReporter.size(result.bytes)), resumable", at: 0)
            }
        }
        return Self.line(name: Printable.text(Text.lastPathComponent(result.path)), tails: tails, columns: columns)
    }

    /// `pinfetch: NAME` and the first of `tails` (most said first) that leaves the name at
    /// least 10 columns within one column less than `columns`, the name shortened to the room
    /// left (``fitted(_:besides:columns:)``); the first tail, and the whole name, without `columns`.
    private static func line(name: String, tails: [String], columns: Int?) -> String {
        let prefix = "pinfetch: "
        let tail =
            tails.first { tail in
                columns.map { prefix.count + 10 + TerminalCapabilities.displayWidth(tail) < $0 } ?? true
            } ?? tails[tails.count - 1]
        return prefix + Self.fitted(name, besides: prefix + tail, columns: columns) + tail + "\n"
    }

    /// `name` so that it and `besides` fit in one column less than `columns`: whole when it
    /// fits, else its last component, its middle replaced by `…` when that is still too long
    /// (at least 10 columns of it stay).
    private static func fitted(_ name: String, besides: String, columns: Int?) -> String {
        guard let columns else { return name }
        let room = max(10, columns - 1 - TerminalCapabilities.displayWidth(besides))
        guard TerminalCapabilities.displayWidth(name) > room else { return name }
        return ProgressReporter.shorten(Text.lastPathComponent(name), to: room)
    }

    /// The batch's last line, or `nil` when there is nothing to say: `-q` and every file ok.
    ///
    /// A failed file that kept its partial (with its checkpoint) is counted as resumable; after a
    /// stop signal the line says so, and that a rerun of the same command continues them.
    /// - Parameters:
    ///   - statuses: Each result's exit status, in the order of `results`.
    ///   - interrupted: Whether a stop signal ended the batch.
    ///   - columns: The terminal's width, when standard error is one.
    static func summary(
        _ results: [FetchResult],
        statuses: [Int32],
        quiet: Bool,
        interrupted: Bool,
        columns: Int? = nil
    ) -> String? {
        let skipped = results.filter { $0.status == .skipped }.count
        let failed = statuses.filter { $0 != 0 }.count - skipped
        guard !quiet || failed > 0 || interrupted else { return nil }
        let resumable = results.filter { $0.error != nil && $0.partial != nil }.count
        let bytes = results.reduce(Int64(0)) { $0 + $1.downloadedBytes }
        let ok = results.count - failed - skipped
        var line = "pinfetch: " + (interrupted ? "interrupted: " : "") + "\(ok) of \(results.count) files ok, "
        if interrupted {
            // A file the stop caught before its first byte kept nothing: it is not started.
            let caught = failed - resumable
            line += "\(resumable) resumable, " + (caught + skipped > 0 ? "\(caught + skipped) not started, " : "")
        } else {
            line += "\(failed) failed" + (resumable > 0 ? " (\(resumable) resumable)" : "") + ", "
            if skipped > 0 { line += "\(skipped) not started, " }
        }
        line += "\(ProgressReporter.size(bytes)) downloaded"
        if interrupted || resumable > 0 {
            let rerun = "a rerun of the same command continues"
            // On a terminal too narrow for one line, the advice gets its own.
            let fits = columns.map { TerminalCapabilities.displayWidth(line) + 2 + rerun.count < $0 } ?? true
            line += fits ? ": " + rerun : "\npinfetch: " + rerun
        }
        return line + "\n"
    }
}
