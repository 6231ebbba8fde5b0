@preconcurrency import Glibc
import PinFetch

extension JobPlan {
    /// The entries of `manifest` that `--include` and `--exclude` choose, by the name each is
    /// listed under (its output, else its URL's last segment), before any shard is taken, so
    /// that every shard of a batch splits the same list.
    /// - Throws: ``PinFetchError/Code/usage`` when they leave no entry (a pattern that matches
    ///   nothing is a mistake, not a success).
    static func filtered(
        _ manifest: Manifest,
        _ arguments: Arguments,
        input: String
    ) throws(PinFetchError)
        -> Manifest
    {
        guard !arguments.includes.isEmpty || !arguments.excludes.isEmpty else { return manifest }
        func matches(_ name: String, _ patterns: [String]) -> Bool { patterns.contains { fnmatch($0, name, 0) == 0 } }
        var kept = manifest
        kept.entries = manifest.entries.filter { entry in
            let name =
                entry.output ?? (try? HTTPURL(entry.mirrors[0])).flatMap { try? Arguments.fileName(of: $0) } ?? ""
            return (arguments.includes.isEmpty || matches(name, arguments.includes))
                && !matches(name, arguments.excludes)
        }
        guard !kept.entries.isEmpty else {
            throw PinFetchError(
                .usage,
                "\(input): --include and --exclude leave none of its \(manifest.entries.count) entries"
            )
        }
        return kept
    }
}
