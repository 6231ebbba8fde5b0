import Synchronization

/// The destinations of one batch, so that a name a server chose (`Content-Disposition`) never
/// lands on another file of the same batch, nor on one of its sidecars
/// (<doc:Architecture#Many-files>). The names the user gave are claimed up front (the plan
/// already refused duplicates and sidecar names among them); a server-chosen name is claimed
/// when it is known, and the later claimant fails.
final class DestinationClaims: Sendable {
    private struct Claims {
        /// Destinations, as bytes: the file system tells NFC and NFD names apart.
        var paths: Set<[UInt8]>
        /// The sidecar paths of those destinations (`.part`, `.part.state`, …).
        var sidecars: Set<[UInt8]>
    }

    private let claims: Mutex<Claims>

    /// - Parameter paths: The destinations named by the user, claimed from the start.
    init(_ paths: [String]) {
        self.claims = Mutex(
            Claims(paths: Set(paths.map(Self.key)), sidecars: Set(paths.flatMap(Self.sidecarKeys)))
        )
    }

    /// Claims `path`; `false` when another file of the batch has it, when it is the sidecar of
    /// another file (a download of that file would take it for its partial, checkpoint or lock),
    /// or when one of its sidecars is another file.
    func claim(_ path: String) -> Bool {
        let key = Self.key(path)
        let sidecars = Self.sidecarKeys(path)
        return self.claims.withLock { claims in
            guard !claims.paths.contains(key), !claims.sidecars.contains(key),
                claims.paths.isDisjoint(with: sidecars)
            else { return false }
            claims.paths.insert(key)
            claims.sidecars.formUnion(sidecars)
            return true
        }
    }

    private static func sidecarKeys(_ path: String) -> [[UInt8]] {
        SidecarPaths.beside(path).map { Self.key($0.path) }
    }

    /// One spelling per path: `./a` and `a`, `d//a` and `d/a` are the same file.
    private static func key(_ path: String) -> [UInt8] {
        var parts = path.split(separator: "/", omittingEmptySubsequences: true).filter { $0 != "." }
        if parts.isEmpty { parts = ["."] }
        return Array(((path.hasPrefix("/") ? "/" : "") + parts.joined(separator: "/")).utf8)
    }
}
