import Foundation

/// Runs a command under `pinfetch-bench-measure`, which spawns it, waits with `wait4(2)` and
/// reports the child's own wall time, CPU time and peak RSS.
///
/// The helper exists because at `execve` the kernel folds the spawner's peak RSS into the
/// child's `ru_maxrss`: spawned straight from this Foundation process (peak ~28 MiB), every
/// child would report at least that. The helper's floor is measured (`/bin/true`) and printed.
struct Measurer {
    /// The `pinfetch-bench-measure` binary.
    var helper: String
    /// Where the helper writes its one-line result (overwritten by every run).
    var resultFile: String

    /// Runs `command` and returns what it cost.
    /// - Throws: ``BenchError`` when the helper cannot start the command or report on it.
    func run(_ command: Command) throws(BenchError) -> Measurement {
        FileTools.remove(self.resultFile)
        var wrapped = command
        wrapped.executable = self.helper
        wrapped.arguments = [self.resultFile, command.executable] + command.arguments
        let helperRun = try ChildProcess.run(wrapped)
        let fields = FileTools.readText(self.resultFile).split(separator: " ").compactMap {
            Int($0.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        guard helperRun.exitStatus == 0, fields.count == 5 else {
            throw BenchError(
                "pinfetch-bench-measure exited with \(helperRun.exitStatus) for \(command.commandLine)\n"
                    + NginxServer.tail(command.standardError ?? "")
            )
        }
        return Measurement(
            wallSeconds: Double(fields[1]) / 1e9,
            userSeconds: Double(fields[2]) / 1e6,
            systemSeconds: Double(fields[3]) / 1e6,
            maxRSSKiB: fields[4],
            exitStatus: Int32(fields[0])
        )
    }
}
