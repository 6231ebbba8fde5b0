import PinFetch

/// `pinfetch gc [DIR ...] [--older-than DURATION]`: removes abandoned partials (a `.part` with
/// pinfetch's `.part.state` beside it, a `.part.cache` beside the `.part.lock` of a killed run)
/// not touched for DURATION (default 7 days), never one
/// whose download is running (``PartialCollector``). `pinfetch gc --cache-dir DIR --max-size SIZE`
/// bounds a cache: the least recently used entries go (``CacheCollector``).
enum GarbageCommand {
    static let usage = """
        usage: pinfetch gc [DIR ...] [--older-than DURATION]
               pinfetch gc --cache-dir DIR [--max-size SIZE] [--older-than DURATION]
                           [DIR ...]
          Removes partials pinfetch left under each DIR (default . when no cache is
          named), with their checkpoints, and the .part.cache files of killed runs,
          when untouched for DURATION: a number and s, m, h or d (default 7d), and the
          private directories of -o - runs that were killed, in $TMPDIR (those
          untouched for a minute). Never any other file, never one whose download is
          running. With --cache-dir (or PINFETCH_CACHE_DIR with --max-size), evicts
          the cache's least recently used entries until they take at most SIZE bytes
          (K, M, G: KiB, MiB, GiB; 0 empties it), and with --older-than those not used
          for DURATION.

        """

    /// `gc`'s options: the spelling, whether its value is a directory, and a line of help (for
    /// the shell completions).
    static let options: [(long: String, directory: Bool, help: String)] = [
        ("--older-than", false, "only what is untouched for DURATION (90s, 30m, 12h, 7d; default 7d)"),
        ("--cache-dir", true, "the cache whose least recently used entries go"),
        ("--max-size", false, "evict until the cache takes at most SIZE (K, M, G)"),
        ("--help", false, "the usage of gc"),
    ]

    /// What the command line asked of `gc`.
    private struct Request {
        var directories: [String] = []
        var age: Double?
        var cacheDirectory: String?
        var maximumCacheBytes: Int64?
    }

    /// Runs `gc` with `arguments` (after `gc`) and returns the exit status: 0, 2 for bad input,
    /// 3 when a file cannot be removed.
    static func run(_ arguments: [String], output: CommandLineTool.Output) -> Int32 {
        if arguments.contains(where: { $0 == "-h" || $0 == "--help" }) {
            output.standardOutput(Self.usage)
            return 0
        }
        do throws(PinFetchError) {
            var request = try Self.parse(arguments)
            if request.maximumCacheBytes != nil, request.cacheDirectory == nil {
                request.cacheDirectory = Arguments.environmentCacheDirectory
                guard request.cacheDirectory != nil else {
                    throw PinFetchError(.usage, "--max-size bounds a cache: name it with --cache-dir DIR")
                }
            }
            if request.cacheDirectory != nil, request.maximumCacheBytes == nil, request.age == nil {
                throw PinFetchError(.usage, "gc --cache-dir needs --max-size SIZE or --older-than DURATION")
            }
            if request.cacheDirectory == nil || !request.directories.isEmpty {
                try Self.collectPartials(request, output: output)
            }
            if let cache = request.cacheDirectory { try Self.collectCache(cache, request, output: output) }
            return 0
        } catch {
            output.standardError("pinfetch: \(Printable.text(error.message))\n")
            return error.code.exitStatus
        }
    }

    private static func parse(_ arguments: [String]) throws(PinFetchError) -> Request {
        var request = Request()
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument == "--" {
                request.directories += arguments[index...]
                break
            }
            let name = argument.split(separator: "=", maxSplits: 1).first.map(String.init) ?? argument
            guard Self.options.contains(where: { $0.long == name && $0.long != "--help" }) else {
                if argument.hasPrefix("-"), argument != "-" {
                    throw PinFetchError(.usage, "gc: unknown option \(argument)")
                }
                request.directories.append(argument)
                continue
            }
            let value: String
            if name == argument {
                guard index < arguments.count else { throw PinFetchError(.usage, "\(name) needs a value") }
                value = arguments[index]
                index += 1
            } else {
                value = String(argument.dropFirst(name.count + 1))
            }
            switch name {
            case "--older-than":
                guard let seconds = Self.duration(value) else {
                    throw PinFetchError(.usage, "--older-than: '\(value)' is not a duration (e.g. 90s, 30m, 12h, 7d)")
                }
                request.age = seconds
            case "--cache-dir":
                guard !value.isEmpty else { throw PinFetchError(.usage, "--cache-dir needs a directory") }
                request.cacheDirectory = value
            default:
                do throws(ArgumentError) {
                    request.maximumCacheBytes = value == "0" ? 0 : try Arguments.size(value, for: name)
                } catch {
                    throw error.failure
                }
            }
        }
        return request
    }

    private static func collectPartials(_ request: Request, output: CommandLineTool.Output) throws(PinFetchError) {
        let removed = try PartialCollector.collect(
            in: request.directories.isEmpty ? ["."] : request.directories,
            olderThan: request.age ?? 7 * 86_400
        )
        for partial in removed {
            output.standardOutput("removed \(Printable.text(partial.path)) (\(ProgressReporter.size(partial.bytes)))\n")
        }
        // Downloads to standard output that a SIGKILL left in their private directory.
        let directories = TemporaryDirectory.collectAbandoned(prefix: StandardOutputDelivery.prefix)
        for directory in directories {
            output.standardOutput(
                "removed \(Printable.text(directory.path)) (\(ProgressReporter.size(directory.bytes)))\n"
            )
        }
        let freed = (removed.map(\.bytes) + directories.map(\.bytes)).reduce(Int64(0), +)
        let placements = removed.filter { $0.path.hasSuffix(".part.cache") }.count
        let partials = removed.count - placements
        let also = placements == 0 ? "" : " and \(placements) cache placement\(placements == 1 ? "" : "s")"
        let stdoutDirectories =
            directories.isEmpty
            ? "" : ", \(directories.count) private director\(directories.count == 1 ? "y" : "ies") of -o - runs"
        output.standardError(
            "pinfetch gc: removed \(partials) partial\(partials == 1 ? "" : "s")\(also)\(stdoutDirectories), "
                + "freed \(ProgressReporter.size(freed))\n"
        )
    }

    private static func collectCache(
        _ directory: String,
        _ request: Request,
        output: CommandLineTool.Output
    ) throws(PinFetchError) {
        let collection = try CacheCollector.collect(
            cache: directory,
            maximumBytes: request.maximumCacheBytes,
            olderThan: request.age
        )
        for entry in collection.evicted {
            output.standardOutput("evicted \(Printable.text(entry.path)) (\(ProgressReporter.size(entry.bytes)))\n")
        }
        let freed = collection.evicted.reduce(Int64(0)) { $0 + $1.bytes }
        let count = collection.evicted.count
        output.standardError(
            "pinfetch gc: evicted \(count) cache entr\(count == 1 ? "y" : "ies"), freed \(ProgressReporter.size(freed)); "
                + "\(collection.remainingEntries) left, \(ProgressReporter.size(collection.remainingBytes))\n"
        )
    }

    /// Seconds in `text`: a non-negative number followed by its unit, `s`, `m`, `h` or `d`.
    static func duration(_ text: String) -> Double? {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3_600, "d": 86_400]
        guard let unit = text.last, let scale = units[unit] else { return nil }
        let number = text.dropLast()
        guard !number.isEmpty, number.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
            let value = Double(number), value.isFinite, value >= 0
        else { return nil }
        return value * scale
    }
}
