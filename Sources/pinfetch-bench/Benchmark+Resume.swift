import Dispatch
import Foundation
@preconcurrency import Glibc

/// Case 2 of the benchmark.
extension Benchmark {
    func caseResume() throws(BenchError) {
        let url = self.url("/big.bin")
        let output = self.out + "/resume.bin"
        let outputs = [output, output + ".part", output + ".part.state", output + ".part.lock"]
        let threshold = Int((Double(self.sizeBytes) * 0.9).rounded(.up))
        let pinned = ["--sha256", self.bigDigest, "-o", output, url]
        let full = self.pinfetch("case2-full", pinned)
        let resume = self.pinfetch("case2-resume", pinned)
        var fullRuns: [Measurement] = []
        var resumeRuns: [Measurement] = []
        var partials: [Double] = []
        var resumedFrom: [Double] = []
        var downloaded: [Double] = []
        var fullDownloaded: [Double] = []
        var rehashed: [Int] = []
        for round in 0..<self.options.rounds {
            let fullRun = {
                () throws(BenchError) in
                let measurement = try self.measure(
                    Contender(name: "pinfetch (full)", command: full, outputs: outputs) { _ throws(BenchError) in
                        let line = try self.expectPinfetch(full, status: "downloaded")[0]
                        fullDownloaded.append(Double(Self.integer(line["downloaded_bytes"]) ?? 0))
                    }
                )
                fullRuns.append(measurement)
                Self.progress(
                    "case 2 round \(round + 1)/\(self.options.rounds): full \(Format.fixed(measurement.wallSeconds, 3)) s"
                )
            }
            if round % 2 == 0 { try fullRun() }
            partials.append(
                Double(try self.makePartial(output: output, outputs: outputs, url: url, threshold: threshold))
            )
            sync()  // as before every measurement: nothing of the partial run is left to write back
            let measurement = try self.measurer.run(resume)
            guard measurement.exitStatus == 0 else {
                throw BenchError(
                    "pinfetch resume exited with \(measurement.exitStatus)\n"
                        + NginxServer.tail(self.errorPath("case2-resume"))
                )
            }
            let line = try self.expectPinfetch(resume, status: "resumed")[0]
            try self.expectSize(output, self.sizeBytes, "pinfetch resume")
            resumeRuns.append(measurement)
            resumedFrom.append(Double(Self.integer(line["resumed_from"]) ?? -1))
            downloaded.append(Double(Self.integer(line["downloaded_bytes"]) ?? -1))
            rehashed.append(Self.integer(line["rehashed_bytes"]) ?? -1)
            for path in outputs { FileTools.remove(path) }
            Self.progress(
                "case 2 round \(round + 1)/\(self.options.rounds): resume \(Format.fixed(measurement.wallSeconds, 3)) s"
            )
            if round % 2 == 1 { try fullRun() }
        }
        let fullWall = Samples(fullRuns.map(\.wallSeconds))
        let resumeWall = Samples(resumeRuns.map(\.wallSeconds))
        print("## 2. Resume of the \(self.options.sizeMiB) MiB file from 90 %\n")
        var table = MarkdownTable([
            "run", "wall s (median)", "min", "max", "downloaded MiB", "resumed_from MiB", "rehashed_bytes (max)",
        ])
        table.add(
            ["pinfetch, full download"] + Format.seconds(fullWall) + [
                Format.mebibytes(Samples(fullDownloaded).median), "0", "-",
            ]
        )
        table.add(
            ["pinfetch, resume"] + Format.seconds(resumeWall) + [
                Format.mebibytes(Samples(downloaded).median), Format.mebibytes(Samples(resumedFrom).median),
                "\(rehashed.max() ?? -1)",
            ]
        )
        print(table.rendered() + "\n")
        print(
            "The partial: pinfetch with `-H 'X-Slow: 1'` (nginx: 1 MiB/s after \(threshold) bytes) stopped by SIGTERM "
                + "once its checkpoint passed 90 %; checkpoint offset median \(Format.mebibytes(Samples(partials).median)) MiB.\n"
        )
        let ratio = resumeWall.ratios(to: fullWall).median
        self.targets.append(
            TargetResult(
                name: "2a resume from 90 % wall ÷ full download",
                detail: "\(Format.ratio(ratio)) (target ≤ 0.20x)",
                passed: ratio <= 0.20
            )
        )
        let worst = rehashed.max() ?? -1
        self.targets.append(
            TargetResult(name: "2b rehashed_bytes on resume", detail: "max \(worst) (target 0)", passed: worst == 0)
        )
    }

    /// Leaves a partial of at least 90 % with a checkpoint at that offset: a throttled run
    /// stopped with SIGTERM. Returns the checkpoint's offset (bytes).
    func makePartial(output: String, outputs: [String], url: String, threshold: Int) throws(BenchError) -> Int {
        for path in outputs { FileTools.remove(path) }
        sync()
        let command = self.pinfetch(
            "case2-partial",
            ["-H", "X-Slow: 1", "--sha256", self.bigDigest, "-o", output, url]
        )
        let child = try ChildProcess.spawn(command)
        let deadline = ContinuousClock.now + .seconds(300)
        while true {
            if let ended = child.poll() {
                throw BenchError(
                    "the throttled pinfetch ended (status \(ended.exitStatus)) before its checkpoint reached 90 %\n"
                        + NginxServer.tail(self.errorPath("case2-partial"))
                )
            }
            let partSize = FileTools.size(of: output + ".part") ?? 0
            if partSize >= threshold, Self.checkpointOffset(output + ".part.state") ?? 0 >= threshold { break }
            guard ContinuousClock.now < deadline else {
                child.send(SIGKILL)
                _ = child.wait()
                throw BenchError("the throttled pinfetch did not reach 90 % within 300 s (.part: \(partSize) bytes)")
            }
            usleep(20_000)
        }
        child.send(SIGTERM)
        let ended = child.wait()
        guard ended.exitStatus == 143 else {
            throw BenchError(
                "the throttled pinfetch exited with \(ended.exitStatus) after SIGTERM, expected 143\n"
                    + NginxServer.tail(self.errorPath("case2-partial"))
            )
        }
        guard let offset = Self.checkpointOffset(output + ".part.state"), offset >= threshold else {
            throw BenchError("no checkpoint at ≥ 90 % after SIGTERM in \(output).part.state")
        }
        return offset
    }

    /// The largest `"offset":N` among the records of a checkpoint file (its slots hold two durable
    /// records and a light one; after SIGTERM the newest durable one is the largest).
    static func checkpointOffset(_ path: String) -> Int? {
        let text = FileTools.readText(path)
        var offsets: [Int] = []
        var rest = text[...]
        while let key = rest.range(of: "\"offset\":") {
            rest = rest[key.upperBound...]
            if let offset = Int(rest.prefix { $0.isNumber }) { offsets.append(offset) }
        }
        return offsets.max()
    }
}
