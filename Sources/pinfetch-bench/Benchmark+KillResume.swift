import Foundation
@preconcurrency import Glibc

/// Case 6 of the benchmark: what a SIGKILL costs.
extension Benchmark {
    /// A 64 MiB pinned download at 24 MiB/s (nginx `limit_rate`), killed with SIGKILL at a
    /// random moment 0-250 ms after `.part` reached 30 % (as a job timeout or a preemption
    /// would: nginx sends a throttled body in bursts, and a kill the instant a poll sees 30 %
    /// always lands right after one, before it is hashed), then run again at full speed.
    /// Reports the bytes the rerun keeps (`resumed_from`) as a fraction of the bytes in `.part`
    /// at the kill; the goal is ≥ 0.90. (`curl -C -` and `wget -c` keep every byte on disk by
    /// construction, unverified.)
    func caseKillResume() throws(BenchError) {
        let url = self.url("/kill.bin")
        let output = self.out + "/kill.bin"
        let outputs = [output, output + ".part", output + ".part.state", output + ".part.lock"]
        let threshold = self.killBytes * 3 / 10
        let arguments = ["--sha256", self.killDigest, "-o", output, url]
        let rerun = self.pinfetch("case6-rerun", arguments)
        var table = MarkdownTable(["round", ".part at the kill MiB", "resumed_from MiB", "kept", "rehashed MiB"])
        var fractions: [Double] = []
        var rehashed: [Int] = []
        for round in 0..<self.options.rounds {
            for path in outputs { FileTools.remove(path) }
            sync()
            let child = try ChildProcess.spawn(self.pinfetch("case6-killed", ["-H", "X-Slow: 24"] + arguments))
            let deadline = ContinuousClock.now + .seconds(60)
            while (FileTools.size(of: output + ".part") ?? 0) < threshold {
                if let ended = child.poll() {
                    throw BenchError(
                        "the throttled pinfetch ended (status \(ended.exitStatus)) before 30 %\n"
                            + NginxServer.tail(self.errorPath("case6-killed"))
                    )
                }
                guard ContinuousClock.now < deadline else {
                    child.send(SIGKILL)
                    _ = child.wait()
                    throw BenchError("the throttled pinfetch did not reach 30 % within 60 s")
                }
                usleep(2_000)
            }
            usleep(UInt32.random(in: 0...250_000))
            child.send(SIGKILL)
            _ = child.wait()
            let kept = FileTools.size(of: output + ".part") ?? 0
            let measurement = try self.measurer.run(rerun)
            guard measurement.exitStatus == 0 else {
                throw BenchError(
                    "pinfetch rerun exited with \(measurement.exitStatus)\n"
                        + NginxServer.tail(self.errorPath("case6-rerun"))
                )
            }
            let line = try self.expectPinfetch(rerun, status: kept > 0 ? "resumed" : "downloaded")[0]
            try self.expectSize(output, self.killBytes, "pinfetch rerun")
            let resumed = Self.integer(line["resumed_from"]) ?? 0
            let fraction = kept > 0 ? Double(resumed) / Double(kept) : 0
            fractions.append(fraction)
            rehashed.append(Self.integer(line["rehashed_bytes"]) ?? -1)
            table.add([
                "\(round + 1)", Format.mebibytes(Double(kept)), Format.mebibytes(Double(resumed)),
                Format.fixed(fraction, 3), Format.mebibytes(Double(Self.integer(line["rehashed_bytes"]) ?? -1)),
            ])
            Self.progress("case 6 round \(round + 1)/\(self.options.rounds): kept \(Format.fixed(fraction, 3))")
        }
        for path in outputs { FileTools.remove(path) }
        print("## 6. SIGKILL at about 30 % of 64 MiB at 24 MiB/s, then a rerun\n")
        print(table.rendered() + "\n")
        let median = Samples(fractions).median
        self.targets.append(
            TargetResult(
                name: "6 bytes kept after SIGKILL ÷ .part at the kill",
                detail:
                    "median \(Format.fixed(median, 3)), min \(Format.fixed(fractions.min() ?? 0, 3)) (target ≥ 0.90)",
                passed: median >= 0.90
            )
        )
        let most = rehashed.max() ?? -1
        self.targets.append(
            TargetResult(
                name: "6b bytes re-hashed by the rerun after a SIGKILL (same boot)",
                detail: "at most \(most) (target ≤ 65536)",
                passed: most >= 0 && most <= 65_536
            )
        )
    }
}
