import PinFetch

/// The outputs of one batch, checked before anything is created (the Architecture article, "Many files"): no
/// two lines write one file, no output is another's sidecar (`x.part`, `x.part.state`, …),
/// and no output or sidecar is a directory another output needs (`a` and `a/b`, `x` and
/// `x.part/y`). Paths are compared after ``JobPlan/canonical(_:)``, by their bytes: NFC and
/// NFD spellings of a name are two files to the file system.
struct OutputNames {
    /// What a path is to the batch.
    private enum Use {
        case output
        case sidecar(role: String, of: String)
        case directory(of: String)

        var shown: String {
            switch self {
            case .output: "an output"
            case .sidecar(let role, let of): "the \(role) of \(of)"
            case .directory(let of): "a directory of \(of)"
            }
        }
    }

    private var uses: [[UInt8]: (line: Int, use: Use)] = [:]
    /// ``JobPlan/canonical(_:)`` of a directory's path with a name in it, by that directory as
    /// written: every output, sidecar and directory of a batch resolves a directory once.
    private var directories: [Substring: String] = [:]

    /// ``JobPlan/canonical(_:)`` of `path`, its directory resolved once per batch. A name that
    /// is empty, `.` or `..` goes the long way.
    private mutating func canonical(_ path: String) -> String {
        let slash = path.lastIndex(of: "/")
        let name = slash.map { path[path.index(after: $0)...] } ?? path[...]
        guard !name.isEmpty, name != ".", name != ".." else { return JobPlan.canonical(path) }
        let directory = slash.map { path[...$0] } ?? ""
        if let known = self.directories[directory] { return known + "/" + name }
        let full = JobPlan.canonical(path)
        guard full.hasSuffix("/" + name) else { return full }
        self.directories[directory] = String(full.dropLast(name.count + 1))
        return full
    }

    /// Claims `destination` (written by line `line` of `input`), its sidecars and directories.
    /// - Throws: ``PinFetchError/Code/usage`` naming both lines when one of them is already
    ///   something else to the batch (two outputs may share a directory, nothing more).
    mutating func claim(_ destination: String, line: Int, input: String) throws(PinFetchError) {
        var claims: [(path: String, key: String, use: Use)] = [
            (destination, self.canonical(destination), .output)
        ]
        for (path, role) in SidecarPaths.beside(destination) {
            claims.append((path, self.canonical(path), .sidecar(role: role, of: destination)))
        }
        var prefix = destination.hasPrefix("/") ? "/" : ""
        for component in destination.split(separator: "/").dropLast() where component != "." {
            prefix += prefix.isEmpty || prefix.hasSuffix("/") ? component : "/" + component
            claims.append((prefix, self.canonical(prefix), .directory(of: destination)))
        }
        for claim in claims {
            let key = Array(claim.key.utf8)
            guard let earlier = self.uses[key] else {
                self.uses[key] = (line, claim.use)
                continue
            }
            switch (claim.use, earlier.use) {
            case (.directory, .directory):
                continue
            case (.output, .output):
                throw PinFetchError(.usage, "\(input):\(line): \(destination) is written by line \(earlier.line) too")
            default:
                throw PinFetchError(
                    .usage,
                    "\(input):\(line): \(claim.path) would be \(claim.use.shown) and \(earlier.use.shown) "
                        + "(line \(earlier.line)): choose another name"
                )
            }
        }
    }
}
