import Foundation
@preconcurrency import Glibc

/// Case 9 of the benchmark: case 1's file from nginx holding each connection to
/// 20 MiB/s (`X-Slow: 20`, `limit_rate` from the first byte), fetched over 8 connections and
/// over 1, against aria2c's 8 (which reads the file back to check its checksum) and curl's one;
/// then unthrottled, 8 connections against 1.
extension Benchmark {
    enum Case9 {
        static let segments8 = "pinfetch --segments 8"
        static let segments1 = "pinfetch --segments 1"
        static let aria2c = "aria2c -x 8 -s 8 -k 8M --checksum"
        static let curl = "curl -o FILE"
        static let open8 = "pinfetch --segments 8, unthrottled"
        static let open1 = "pinfetch --segments 1, unthrottled"
    }

    func caseSegments() throws(BenchError) {
        let url = self.url("/big.bin")
        let bytes = self.sizeBytes
        let slow = ["-H", "X-Slow: 20"]
        func pinfetch(_ name: String, _ segments: Int, throttled: Bool) -> Contender {
            let output = self.out + "/segments.bin"
            let command = self.pinfetch(
                "case9-\(segments)-\(throttled ? "slow" : "open")",
                (throttled ? slow : []) + ["--segments", "\(segments)", "--sha256", self.bigDigest, "-o", output, url]
            )
            return Contender(name: name, command: command, outputs: [output]) { _ throws(BenchError) in
                let line = try self.expectPinfetch(command, status: "downloaded").first ?? [:]
                try self.expectSize(output, bytes, name)
                if let reread = Self.integer(line["rehashed_bytes"]), reread > 0 {
                    Self.progress("\(name): rehashed_bytes \(reread)")
                }
            }
        }
        let ariaDirectory = self.out + "/aria2c"
        let curlOutput = self.out + "/curl.bin"
        let throttled = [
            pinfetch(Case9.segments8, 8, throttled: true),
            pinfetch(Case9.segments1, 1, throttled: true),
            Contender(
                name: Case9.aria2c,
                command: Command(
                    self.tools.aria2c,
                    [
                        "--no-conf", "-q", "-x8", "-s8", "-k8M", "--header=X-Slow: 20", "--allow-overwrite=true",
                        "--auto-file-renaming=false", "--checksum=sha-256=\(self.bigDigest)", "-d", ariaDirectory,
                        "-o", "aria2c.bin", url,
                    ],
                    standardError: self.errorPath("case9-aria2c")
                ),
                outputs: [ariaDirectory]
            ) { _ throws(BenchError) in try self.expectSize(ariaDirectory + "/aria2c.bin", bytes, Case9.aria2c) },
            Contender(
                name: Case9.curl,
                command: Command(
                    self.tools.curl,
                    ["-q", "-s", "-H", "X-Slow: 20", "-o", curlOutput, url],
                    standardError: self.errorPath("case9-curl")
                ),
                outputs: [curlOutput]
            ) { _ throws(BenchError) in try self.expectSize(curlOutput, bytes, Case9.curl) },
        ]
        let open = [pinfetch(Case9.open8, 8, throttled: false), pinfetch(Case9.open1, 1, throttled: false)]
        var results = try self.rounds("case 9", throttled)
        results.merge(try self.rounds("case 9", open)) { first, _ in first }

        print("## 9. \(self.options.sizeMiB) MiB over several connections (`--segments`)\n")
        print("nginx holds each connection to 20 MiB/s (`limit_rate`) in the first four rows.\n")
        var table = MarkdownTable([
            "command", "wall s (median)", "min", "max", "MiB/s", "CPU s", "peak RSS MiB", "pinfetch -s 8 wall ÷ this",
        ])
        let wall = { (name: String) in Samples((results[name] ?? []).map(\.wallSeconds)) }
        for contender in throttled + open {
            let runs = results[contender.name] ?? []
            let reference = contender.name.hasSuffix("unthrottled") ? Case9.open8 : Case9.segments8
            table.add(
                [contender.name] + Format.seconds(wall(contender.name)) + [
                    Format.fixed(Double(bytes) / 1_048_576 / wall(contender.name).median, 0),
                    Format.fixed(Samples(runs.map(\.cpuSeconds)).median),
                    Format.fixed(Samples(runs.map(\.maxRSSMiB)).median, 1),
                    Format.ratio(wall(reference).ratios(to: wall(contender.name)).median),
                ]
            )
        }
        print(table.rendered() + "\n")
        let speedup = 1 / wall(Case9.segments8).ratios(to: wall(Case9.segments1)).median
        let overAria = 1 / wall(Case9.segments8).ratios(to: wall(Case9.aria2c)).median
        let unthrottled = wall(Case9.open8).ratios(to: wall(Case9.open1)).median
        let rss = Samples(((results[Case9.segments8] ?? []) + (results[Case9.open8] ?? [])).map(\.maxRSSMiB)).maximum
        self.targets += [
            TargetResult(
                name: "9a --segments 8 speed-up over --segments 1 at 20 MiB/s per connection",
                detail: "\(Format.ratio(speedup)) (target ≥ 6.00x)",
                passed: speedup >= 6
            ),
            TargetResult(
                name: "9b --segments 8 speed-up over aria2c -x 8 -s 8 --checksum",
                detail: "\(Format.ratio(overAria)) (target ≥ 1.20x)",
                passed: overAria >= 1.2
            ),
            TargetResult(
                name: "9c --segments 8 wall ÷ --segments 1, unthrottled loopback",
                detail: "\(Format.ratio(unthrottled)) (target ≤ 1.00x)",
                passed: unthrottled <= 1.0
            ),
            TargetResult(
                name: "9d --segments 8 peak RSS",
                detail: "\(Format.fixed(rss, 1)) MiB (target ≤ 160 MiB)",
                passed: rss <= 160
            ),
        ]
    }
}
