import PinFetch

/// The lines a person reads on standard error about each file and about a batch: short, in
/// units people read (the whole digest is in `--json` and, with `-v`, here too).
enum ResultLines {
    /// `pinfetch: NAME  48.0 MiB  sha256:1a2b3c4d…  downloaded`, the whole digest when `verbose`.
    static func result(_ result: FetchResult, verbose: Bool) -> String {
        let hex = result.digest ?? ""
        let digest = "\(result.algorithm.rawValue):" + (verbose || hex.count <= 8 ? hex : hex.prefix(8) + "…")
        let size = ProgressReporter.size(result.bytes)
        return "pinfetch: \(Printable.text(result.path))  \(size)  \(digest)  \(result.status.rawValue)\n"
    }

    /// The batch's last line, or `nil` when there is nothing to say: `-q` and every file ok.
    ///
    /// A failed file that kept its partial (with its checkpoint) is counted as resumable; after a
    /// stop signal the line says so, and that a rerun of the same command continues them.
    /// - Parameters:
    ///   - statuses: Each result's exit status, in the order of `results`.
    ///   - interrupted: Whether a stop signal ended the batch.
    static func summary(
        _ results: [FetchResult],
        statuses: [Int32],
        quiet: Bool,
        interrupted: Bool
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
        if interrupted || resumable > 0 { line += ": a rerun of the same command continues" }
        return line + "\n"
    }
}
