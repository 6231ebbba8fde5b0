import Synchronization

/// The destinations of one batch, so that a name a server chose (`Content-Disposition`) never
/// lands on another file of the same batch (DESIGN.md, "Many files"; issue 10, point 4). The
/// names the user gave are claimed up front (the plan already refused duplicates among them);
/// a server-chosen name is claimed when it is known, and the later claimant fails.
final class DestinationClaims: Sendable {
    private let claimed: Mutex<Set<String>>

    /// - Parameter paths: The destinations named by the user, claimed from the start.
    init(_ paths: [String]) {
        self.claimed = Mutex(Set(paths.map(Self.key)))
    }

    /// Claims `path`; `false` when another file of the batch has it.
    func claim(_ path: String) -> Bool {
        self.claimed.withLock { $0.insert(Self.key(path)).inserted }
    }

    /// One spelling per path: `./a` and `a`, `d//a` and `d/a` are the same file.
    private static func key(_ path: String) -> String {
        var parts = path.split(separator: "/", omittingEmptySubsequences: true).filter { $0 != "." }
        if parts.isEmpty { parts = ["."] }
        return (path.hasPrefix("/") ? "/" : "") + parts.joined(separator: "/")
    }
}
