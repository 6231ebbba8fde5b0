import Foundation
@preconcurrency import Glibc

/// Case 7 of the benchmark: how long the binary takes to start and exit
/// (`--version`: load, dynamic linking, Swift runtime and Foundation set-up, no network), against
/// `curl --version` in the same rounds, and how large the binary is.
extension Benchmark {
    func caseStartup() throws(BenchError) {
        let runs = 100
        let contenders = [
            ("pinfetch --version", Command(self.tools.pinfetch, ["--version"])),
            ("curl --version", Command(self.tools.curl, ["--version"])),
        ]
        var medians: [String: [Double]] = [:]
        for round in 0..<self.options.rounds {
            var times: [String: [Double]] = [:]
            for index in 0..<runs * contenders.count {  // interleaved, so both see the same machine
                let (name, command) = contenders[index % contenders.count]
                let measurement = try self.measurer.run(command)
                guard measurement.exitStatus == 0 else {
                    throw BenchError("\(name) exited with \(measurement.exitStatus)")
                }
                times[name, default: []].append(measurement.wallSeconds)
            }
            for (name, _) in contenders { medians[name, default: []].append(Samples(times[name] ?? []).median) }
            Self.progress("startup round \(round + 1)/\(self.options.rounds) done")
        }
        print("## 7. Startup (`--version`, median of \(runs) runs per round, in ms) and size\n")
        var table = MarkdownTable(["command", "median ms", "min ms", "max ms"])
        for (name, _) in contenders {
            let samples = Samples((medians[name] ?? []).map { $0 * 1000 })
            table.add([
                name, Format.fixed(samples.median, 2), Format.fixed(samples.minimum, 2),
                Format.fixed(samples.maximum, 2),
            ])
        }
        print(table.rendered() + "\n")
        let size = FileTools.size(of: self.tools.pinfetch) ?? 0
        print("`\(self.tools.pinfetch)`: \(size) bytes (\(Format.fixed(Double(size) / 1e6, 1)) MB)\n")
        let ratio = Samples(medians["pinfetch --version"] ?? [])
            .ratios(to: Samples(medians["curl --version"] ?? [])).median
        self.targets.append(
            TargetResult(
                name: "7 pinfetch --version ÷ curl --version wall time",
                detail: "\(Format.ratio(ratio)) (target ≤ 1.2x)",
                passed: ratio <= 1.2
            )
        )
    }
}
