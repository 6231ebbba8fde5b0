import Dispatch
import Foundation
@preconcurrency import Glibc

/// Case 5 of the benchmark.
extension Benchmark {
    func reportCPU() {
        let (pinfetch, openssl) = self.cpuRuns
        let gib = Double(self.sizeBytes) / Double(1 << 30)
        print("## 5. CPU seconds (user+sys) per GiB\n")
        var table = MarkdownTable(["command", "user s/GiB", "sys s/GiB", "user+sys s/GiB (median)", "min", "max"])
        for (name, runs) in [("pinfetch --sha256 (case 1 runs)", pinfetch), ("openssl dgst -sha256 FILE", openssl)] {
            let total = Samples(runs.map { $0.cpuSeconds / gib })
            table.add([
                name,
                Format.fixed(Samples(runs.map { $0.userSeconds / gib }).median, 3),
                Format.fixed(Samples(runs.map { $0.systemSeconds / gib }).median, 3),
                Format.fixed(total.median, 3), Format.fixed(total.minimum, 3), Format.fixed(total.maximum, 3),
            ])
        }
        print(table.rendered() + "\n")
        let ratio = Samples(pinfetch.map(\.cpuSeconds)).ratios(to: Samples(openssl.map(\.cpuSeconds))).median
        self.targets.append(
            TargetResult(
                name: "5 pinfetch CPU ÷ openssl dgst -sha256 CPU",
                detail: "\(Format.ratio(ratio)) (target ≤ 1.25x)",
                passed: ratio <= 1.25
            )
        )
    }
}
