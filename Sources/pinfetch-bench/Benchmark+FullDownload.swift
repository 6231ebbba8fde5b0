import Dispatch
import Foundation
@preconcurrency import Glibc

/// Case 1 (and the runs of case 5) of the benchmark.
extension Benchmark {
    /// The row names of case 1 (and 5).
    enum Case1 {
        static let pinfetch = "pinfetch --sha256"
        static let curlSync = "curl -o FILE && sync FILE"
        static let curl = "curl -o FILE"
        static let curlSHA256 = "curl -o FILE && sha256sum -c"
        static let aria2c = "aria2c --checksum=sha-256"
        static let openssl = "openssl dgst -sha256"
    }

    func caseFullDownload() throws(BenchError) {
        let url = self.url("/big.bin")
        let cases = self.options.cases
        let bytes = self.sizeBytes
        var contenders: [Contender] = []
        let pinfetchOut = self.out + "/pinfetch.bin"
        let pinfetch = self.pinfetch("case1-pinfetch", ["--sha256", self.bigDigest, "-o", pinfetchOut, url])
        contenders.append(
            Contender(name: Case1.pinfetch, command: pinfetch, outputs: [pinfetchOut]) { _ throws(BenchError) in
                _ = try self.expectPinfetch(pinfetch, status: "downloaded")
                try self.expectSize(pinfetchOut, bytes, "pinfetch")
            }
        )
        if cases.contains(1) {
            let curl = self.tools.curl
            for (name, script) in [
                (Case1.curlSync, #""$1" -q -s -o "$2" "$3" && sync "$2""#),
                (Case1.curl, #"exec "$1" -q -s -o "$2" "$3""#),
            ] {
                let output = self.out + "/curl.bin"
                contenders.append(
                    Contender(
                        name: name,
                        command: .shell(script, [curl, output, url], standardError: self.errorPath(name)),
                        outputs: [output]
                    ) { _ throws(BenchError) in try self.expectSize(output, bytes, name) }
                )
            }
            let shaOutput = self.out + "/curl-sha.bin"
            let sums = self.lists + "/SHA256SUMS"
            try FileTools.writeText("\(self.bigDigest)  \(shaOutput)\n", to: sums)
            let shaName = Case1.curlSHA256
            contenders.append(
                Contender(
                    name: shaName,
                    command: .shell(
                        #""$1" -q -s -o "$2" "$3" && "$4" -c --quiet "$5""#,
                        [curl, shaOutput, url, self.tools.sha256sum, sums],
                        standardError: self.errorPath(shaName)
                    ),
                    outputs: [shaOutput]
                ) { _ throws(BenchError) in try self.expectSize(shaOutput, bytes, shaName) }
            )
            let ariaName = Case1.aria2c
            let ariaDirectory = self.out + "/aria2c"
            contenders.append(
                Contender(
                    name: ariaName,
                    command: Command(
                        self.tools.aria2c,
                        [
                            "--no-conf", "-q", "-x1", "-s1", "--allow-overwrite=true", "--auto-file-renaming=false",
                            "--checksum=sha-256=\(self.bigDigest)", "-d", ariaDirectory, "-o", "aria2c.bin", url,
                        ],
                        standardError: self.errorPath(ariaName)
                    ),
                    outputs: [ariaDirectory]
                ) { _ throws(BenchError) in try self.expectSize(ariaDirectory + "/aria2c.bin", bytes, ariaName) }
            )
        }
        if cases.contains(5) {
            contenders.append(
                Contender(
                    name: Case1.openssl,
                    command: Command(self.tools.openssl, ["dgst", "-sha256", self.bigFile]),
                    outputs: []
                ) { _ throws(BenchError) in }
            )
        }
        let results = try self.rounds(cases.contains(1) ? "case 1" : "case 5", contenders)
        let pinfetchRuns = results[Case1.pinfetch] ?? []
        self.cpuRuns = (pinfetchRuns, results[Case1.openssl] ?? [])
        let pinfetchWall = Samples(pinfetchRuns.map(\.wallSeconds))
        if cases.contains(1) {
            print("## 1. \(self.options.sizeMiB) MiB, pinned\n")
            var table = MarkdownTable([
                "command", "wall s (median)", "min", "max", "MiB/s", "CPU s", "peak RSS MiB", "pinfetch wall ÷ this",
            ])
            for contender in contenders where contender.name != Case1.openssl {
                let runs = results[contender.name] ?? []
                let wall = Samples(runs.map(\.wallSeconds))
                table.add(
                    [contender.name] + Format.seconds(wall) + [
                        Format.fixed(Double(bytes) / 1_048_576 / wall.median, 0),
                        Format.fixed(Samples(runs.map(\.cpuSeconds)).median),
                        Format.fixed(Samples(runs.map(\.maxRSSMiB)).median, 1),
                        Format.ratio(pinfetchWall.ratios(to: wall).median),
                    ]
                )
            }
            print(table.rendered() + "\n")
            let durable = pinfetchWall.ratios(to: Samples((results[Case1.curlSync] ?? []).map(\.wallSeconds)))
            let hashed = Samples((results[Case1.curlSHA256] ?? []).map(\.wallSeconds)).ratios(to: pinfetchWall)
            self.targets.append(
                TargetResult(
                    name: "1a pinfetch wall ÷ (curl -o FILE && sync FILE)",
                    detail: "\(Format.ratio(durable.median)) (target ≤ 1.10x)",
                    passed: durable.median <= 1.10
                )
            )
            self.targets.append(
                TargetResult(
                    name: "1b (curl && sha256sum -c) wall ÷ pinfetch",
                    detail: "\(Format.ratio(hashed.median)) faster (target ≥ 3.00x)",
                    passed: hashed.median >= 3.0
                )
            )
            // The target: durable and verified at nearly the cost of a plain download.
            let plain = pinfetchWall.ratios(to: Samples((results[Case1.curl] ?? []).map(\.wallSeconds)))
            self.targets.append(
                TargetResult(
                    name: "1c pinfetch wall ÷ curl -o FILE",
                    detail: "\(Format.ratio(plain.median)) (target ≤ 1.15x)",
                    passed: plain.median <= 1.15
                )
            )
            // The target: no more CPU than the durable pipeline it replaces, per round (with case 5,
            // which runs openssl).
            if cases.contains(5) {
                let cpu = { (name: String) in (results[name] ?? []).map(\.cpuSeconds) }
                let floor = zip(cpu(Case1.curlSync), cpu(Case1.openssl)).map { $0 + $1 }
                let cpuRatio = Samples(pinfetchRuns.map(\.cpuSeconds)).ratios(to: Samples(floor)).median
                self.targets.append(
                    TargetResult(
                        name: "1d pinfetch CPU ÷ (curl -o FILE && sync FILE, + openssl dgst -sha256)",
                        detail: "\(Format.ratio(cpuRatio)) (target ≤ 1.00x)",
                        passed: cpuRatio <= 1.0
                    )
                )
            }
        }
    }
}
