import FoundationEssentials
@preconcurrency import Glibc

/// A private directory (mode 0700, `mkdtemp`) for files of one run: an input file fetched from
/// a URL, a download to standard output, the files `gpgv` reads.
package enum TemporaryDirectory {
    /// Where temporary directories go: `$TMPDIR` when it names an existing directory, else
    /// `/tmp`, as glibc's own temporary files do (a `TMPDIR` that is missing or a file is
    /// passed over, never created).
    package static var base: String {
        if let base = ProcessInfo.processInfo.environment["TMPDIR"], !base.isEmpty {
            var info = stat()
            if stat(base, &info) == 0, info.st_mode & S_IFMT == S_IFDIR { return base }
        }
        return "/tmp"
    }

    /// Makes a new directory `<base>/<prefix>XXXXXX` and returns its path.
    /// - Throws: ``PinFetchError/Code/fileIO`` when it cannot be created.
    package static func make(prefix: String) throws(PinFetchError) -> String {
        let base = Self.base
        var template = Array("\(base)/\(prefix)XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else {
            throw PinFetchError(
                .fileIO,
                "cannot create a temporary directory in \(base): \(String(cString: strerror(errno)))"
            )
        }
        return String(cString: made)
    }
}
