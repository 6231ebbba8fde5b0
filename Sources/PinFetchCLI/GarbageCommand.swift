@_spi(CLI) import PinFetch

/// `pinfetch gc [DIR ...] [--older-than DURATION]`: removes abandoned partials (a `.part` with
/// pinfetch's `.part.state` beside it) not touched for DURATION (default 7 days), never one
/// whose download is running (``PartialCollector``).
enum GarbageCommand {
    static let usage = """
        usage: pinfetch gc [DIR ...] [--older-than DURATION]
          Removes partials pinfetch left under each DIR (default .), with their checkpoints, when
          untouched for DURATION: a number and s, m, h or d (default 7d). Never any other file,
          never one whose download is running.

        """

    /// Runs `gc` with `arguments` (after `gc`) and returns the exit status: 0, 2 for bad input,
    /// 3 when a file cannot be removed.
    static func run(_ arguments: [String], output: CommandLineTool.Output) -> Int32 {
        var directories: [String] = []
        var age: Double = 7 * 86_400
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument == "--" {
                directories += arguments[index...]
                break
            }
            if argument == "-h" || argument == "--help" {
                output.standardOutput(Self.usage)
                return 0
            }
            if argument == "--older-than" || argument.hasPrefix("--older-than=") {
                let value: String
                if argument == "--older-than" {
                    guard index < arguments.count else { return Self.fail("--older-than needs a duration", output) }
                    value = arguments[index]
                    index += 1
                } else {
                    value = String(argument.dropFirst("--older-than=".count))
                }
                guard let seconds = Self.duration(value) else {
                    return Self.fail("--older-than: '\(value)' is not a duration (e.g. 90s, 30m, 12h, 7d)", output)
                }
                age = seconds
            } else if argument.hasPrefix("-"), argument != "-" {
                return Self.fail("gc: unknown option \(argument)", output)
            } else {
                directories.append(argument)
            }
        }
        do throws(PinFetchError) {
            let removed = try PartialCollector.collect(in: directories.isEmpty ? ["."] : directories, olderThan: age)
            for partial in removed {
                output.standardOutput(
                    "removed \(Self.printable(partial.path)) (\(ProgressReporter.size(partial.bytes)))\n"
                )
            }
            let freed = removed.reduce(Int64(0)) { $0 + $1.bytes }
            output.standardError(
                "pinfetch gc: removed \(removed.count) partial\(removed.count == 1 ? "" : "s"), "
                    + "freed \(ProgressReporter.size(freed))\n"
            )
            return 0
        } catch {
            output.standardError("pinfetch: \(error.message)\n")
            return error.code.exitStatus
        }
    }

    /// `path` with control characters escaped (`\n` as `\u{A}`), so a file name cannot forge a line.
    static func printable(_ path: String) -> String {
        String(
            path.unicodeScalars.map { scalar in
                scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
                    ? "\\u{\(String(scalar.value, radix: 16, uppercase: true))}" : String(scalar)
            }
            .joined()
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

    private static func fail(_ message: String, _ output: CommandLineTool.Output) -> Int32 {
        output.standardError("pinfetch: \(message)\n")
        return PinFetchError.Code.usage.exitStatus
    }
}
