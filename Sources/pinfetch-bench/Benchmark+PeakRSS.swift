import Dispatch
import Foundation
@preconcurrency import Glibc

/// Case 3 of the benchmark.
extension Benchmark {
    func casePeakRSS() throws(BenchError) {
        var contenders: [Contender] = []
        var sizes: [(name: String, bytes: Int)] = []
        for (label, path, digest, bytes) in [
            ("\(self.options.sizeMiB) MiB", "/big.bin", self.bigDigest, self.sizeBytes),
            ("\(self.options.largeMiB) MiB", "/large.bin", self.largeDigest, self.largeBytes),
        ] {
            let output = self.out + "/rss.bin"
            let command = self.pinfetch("case3", ["--sha256", digest, "-o", output, self.url(path)])
            contenders.append(
                Contender(name: label, command: command, outputs: [output]) { _ throws(BenchError) in
                    _ = try self.expectPinfetch(command, status: "downloaded")
                    try self.expectSize(output, bytes, "pinfetch")
                }
            )
            sizes.append((label, bytes))
        }
        let results = try self.rounds("case 3", contenders)
        print("## 3. pinfetch peak RSS (ru_maxrss)\n")
        var table = MarkdownTable(["download", "wall s (median)", "MiB/s", "peak RSS MiB (median)", "min", "max"])
        var medians: [Double] = []
        for (name, bytes) in sizes {
            let runs = results[name] ?? []
            let wall = Samples(runs.map(\.wallSeconds))
            let rss = Samples(runs.map(\.maxRSSMiB))
            medians.append(rss.median)
            table.add([
                name, Format.fixed(wall.median, 3), Format.fixed(Double(bytes) / 1_048_576 / wall.median, 0),
                Format.fixed(rss.median, 1), Format.fixed(rss.minimum, 1), Format.fixed(rss.maximum, 1),
            ])
        }
        print(table.rendered() + "\n")
        let largest = medians.max() ?? .nan
        let spread = (largest - (medians.min() ?? .nan)) / (medians.min() ?? .nan)
        self.targets.append(
            TargetResult(
                name: "3a peak RSS",
                detail: medians.map { "\(Format.fixed($0, 1)) MiB" }.joined(separator: " and ") + " (target ≤ 32 MiB)",
                passed: largest <= 32
            )
        )
        self.targets.append(
            TargetResult(
                name: "3b peak RSS of the two sizes apart",
                detail: "\(Format.fixed(spread * 100, 1)) % (target ≤ 10 %)",
                passed: spread <= 0.10
            )
        )
    }
}
