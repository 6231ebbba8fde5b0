import Foundation
import PinFetchCLI
import Synchronization
import Testing

/// Runs `body` with a fresh temporary directory, removed afterwards even when `body` throws.
func withTemporaryDirectory<T>(_ body: (String) async throws -> T) async throws -> T {
    let path = FileManager.default.temporaryDirectory.appending(path: "pinfetch-test-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try await body(path)
}

/// The options of a run whose one try is what a test checks: quiet, a `--json` line, no retry
/// and no wait before one.
let quietOnce = ["-q", "--json", "--retry-delay", "0", "--retries", "0"]

/// What one in-process `pinfetch` run printed and returned.
struct CLIRun {
    var status: Int32
    var standardOutput: String
    var standardError: String

    /// The `--json` line as a dictionary (empty when there is none).
    var json: [String: Any] {
        guard let line = self.standardOutput.split(separator: "\n").last,
            let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        else { return [:] }
        return object
    }

    func int(_ key: String) -> Int? { (self.json[key] as? NSNumber)?.intValue }
    func string(_ key: String) -> String? { self.json[key] as? String }

    /// The `--json` line's `elapsed_s`: how long the file took by the tool's own clock, which a
    /// busy test pool does not stretch (`.infinity` without one, so a bound on it fails).
    var elapsed: Double { (self.json["elapsed_s"] as? NSNumber)?.doubleValue ?? .infinity }

    /// Every `--json` line, as dictionaries, in order.
    var lines: [[String: Any]] { jsonLines(self.standardOutput) }
}

/// The lines of `text` that are JSON objects, as dictionaries, in order.
func jsonLines(_ text: String) -> [[String: Any]] {
    text.split(separator: "\n").compactMap {
        (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
    }
}

private final class Capture: Sendable {
    let text = Mutex("")
    func append(_ more: String) { self.text.withLock { $0 += more } }
    var value: String { self.text.withLock { $0 } }
}

/// Runs the command line in-process with `arguments`, capturing stdout and stderr. Unless the
/// test names a cache (`--cache-dir`), the run gets `--no-cache`: the user's cache stays out.
/// With `terminal`, stderr is taken for a terminal (progress bars at once, not a line per 5 s).
func runCLI(_ arguments: [String], terminal: Bool = false) async -> CLIRun {
    let out = Capture()
    let err = Capture()
    let isolated =
        arguments.first == "gc" || arguments.first == "completion" || arguments.contains("--cache-dir")
        || arguments.contains("--help") || arguments.first == "help"
        || arguments.contains("--version")
    let status = await CommandLineTool.run(
        isolated ? arguments : ["--no-cache"] + arguments,
        output: .init(
            standardOutput: out.append,
            standardError: err.append,
            terminal: terminal ? TerminalCapabilities(redraws: true, colour: false, columns: { 80 }) : nil
        )
    )
    return CLIRun(status: status, standardOutput: out.value, standardError: err.value)
}

/// The names in `directory`, sorted.
func listing(_ directory: String) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
}

/// The bytes of the file at `path`, or `nil`.
func contents(_ path: String) -> [UInt8]? {
    FileManager.default.contents(atPath: path).map { [UInt8]($0) }
}
