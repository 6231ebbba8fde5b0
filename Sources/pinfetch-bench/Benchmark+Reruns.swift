import Foundation
@preconcurrency import Glibc

/// Case 10 of the benchmark: what a rerun over files already in place costs.
extension Benchmark {
    /// Case 1's file is downloaded twice, pinned and unpinned; then, each round, a pinned rerun
    /// (the file carries its verified record: nothing to read) against `openssl dgst -sha256` over
    /// the same file (what proving it by hashing costs), and an unpinned rerun, whose body bytes
    /// are counted (`downloaded_bytes`; its condition is answered with `304`).
    func caseReruns() throws(BenchError) {
        let url = self.url("/big.bin")
        let pinnedOutput = self.out + "/rerun-pinned.bin"
        let unpinnedOutput = self.out + "/rerun-unpinned.bin"
        let outputs = [pinnedOutput, unpinnedOutput]
        for path in outputs { FileTools.remove(path) }
        defer { for path in outputs { FileTools.remove(path) } }
        let pinned = self.pinfetch("case10-pinned", ["--sha256", self.bigDigest, "-o", pinnedOutput, url])
        let unpinned = self.pinfetch("case10-unpinned", ["-o", unpinnedOutput, url])
        for command in [pinned, unpinned] {
            let first = try self.measurer.run(command)
            guard first.exitStatus == 0 else {
                throw BenchError(
                    "pinfetch exited with \(first.exitStatus)\n" + NginxServer.tail(command.standardError!)
                )
            }
        }
        sync()
        let openssl = Command(self.tools.openssl, ["dgst", "-sha256", pinnedOutput])
        var rerunRuns: [Measurement] = []
        var opensslRuns: [Measurement] = []
        var rehashed: [Int] = []
        var transferred: [Int] = []
        for round in 0..<self.options.rounds {
            let pair: [(Command, (Measurement) -> Void)] = [
                (pinned, { rerunRuns.append($0) }), (openssl, { opensslRuns.append($0) }),
            ]
            for (command, keep) in round % 2 == 0 ? pair : pair.reversed() {
                let measurement = try self.measurer.run(command)
                guard measurement.exitStatus == 0 else {
                    throw BenchError("\(command.executable) exited with \(measurement.exitStatus)")
                }
                keep(measurement)
            }
            let line = try self.expectPinfetch(pinned, status: "already-complete")[0]
            rehashed.append(Self.integer(line["rehashed_bytes"]) ?? -1)
            let unpinnedRun = try self.measurer.run(unpinned)
            guard unpinnedRun.exitStatus == 0 else {
                throw BenchError(
                    "pinfetch exited with \(unpinnedRun.exitStatus)\n" + NginxServer.tail(unpinned.standardError!)
                )
            }
            let unpinnedLine = try self.expectPinfetch(unpinned, status: "already-complete")[0]
            transferred.append(Self.integer(unpinnedLine["downloaded_bytes"]) ?? -1)
            Self.progress("case 10 round \(round + 1)/\(self.options.rounds)")
        }
        let rerunWall = Samples(rerunRuns.map(\.wallSeconds))
        let opensslWall = Samples(opensslRuns.map(\.wallSeconds))
        print("## 10. Reruns over \(self.options.sizeMiB) MiB already in place\n")
        var table = MarkdownTable(["run", "wall s (median)", "min", "max", "read or received"])
        table.add(["pinfetch --sha256, rerun"] + Format.seconds(rerunWall) + ["rehashed_bytes \(rehashed.max() ?? -1)"])
        table.add(["openssl dgst -sha256 FILE"] + Format.seconds(opensslWall) + ["\(self.sizeBytes) bytes"])
        table.add(["pinfetch (no pin), rerun", "-", "-", "-", "downloaded_bytes \(transferred.max() ?? -1)"])
        print(table.rendered() + "\n")
        let ratio = rerunWall.ratios(to: opensslWall).median
        self.targets.append(
            TargetResult(
                name: "10a pinned rerun ÷ openssl dgst -sha256 over the file",
                detail: "\(Format.ratio(ratio)) (target ≤ 0.10x)",
                passed: ratio <= 0.10
            )
        )
        let most = transferred.max() ?? -1
        self.targets.append(
            TargetResult(
                name: "10b unpinned rerun of an unchanged file: body bytes",
                detail: "\(most) (target 0)",
                passed: most == 0
            )
        )
    }
}
