import Dispatch
import Foundation
@preconcurrency import Glibc

/// Case 4 of the benchmark.
extension Benchmark {
    static let curlParallelSync = "curl --parallel --parallel-max 8 && sync"

    func caseManyFiles() throws(BenchError) {
        let count = self.options.files
        let directory = self.out + "/many"
        let lists = try self.writeManyLists(base: self.server?.baseURL ?? "", directory: directory, prefix: "")
        let manifestPath = lists.manifest
        let ariaPath = lists.aria2c
        let curlPath = lists.curl
        let verifyDirectory = { (name: String) throws(BenchError) in try self.expectManyFiles(in: directory, by: name) }
        let pinfetch = self.pinfetch("case4-pinfetch", ["-j", "8", "-P", directory, "-i", manifestPath])
        var contenders = [
            Contender(name: "pinfetch -j 8 -i", command: pinfetch, outputs: [directory]) { _ throws(BenchError) in
                _ = try self.expectPinfetch(pinfetch, status: "downloaded", files: count)
                try verifyDirectory("pinfetch")
            },
            Contender(
                name: "aria2c -j 8 -i",
                command: Command(
                    self.tools.aria2c,
                    [
                        "--no-conf", "-q", "-j", "8", "-i", ariaPath, "-d", directory, "--allow-overwrite=true",
                        "--auto-file-renaming=false",
                    ],
                    standardError: self.errorPath("case4-aria2c")
                ),
                outputs: [directory]
            ) { _ throws(BenchError) in try verifyDirectory("aria2c") },
            Contender(
                name: Self.curlParallelSync,
                command: .shell(
                    #""$1" -q -s --parallel --parallel-max 8 -K "$2" && sync"#,
                    [self.tools.curl, curlPath],
                    standardError: self.errorPath("case4-curl-sync")
                ),
                outputs: [directory]
            ) { _ throws(BenchError) in try verifyDirectory("curl && sync") },
            Contender(
                name: "curl --parallel --parallel-max 8",
                command: Command(
                    self.tools.curl,
                    ["-q", "-s", "--parallel", "--parallel-max", "8", "-K", curlPath],
                    standardError: self.errorPath("case4-curl")
                ),
                outputs: [directory]
            ) { _ throws(BenchError) in try verifyDirectory("curl") },
        ]
        // curl does not make the directory; all three get it made beforehand.
        for index in contenders.indices { contenders[index].directories = [directory] }
        let results = try self.rounds("case 4", contenders)
        let rate = { (runs: [Measurement]) in Samples(runs.map { Double(count) / $0.wallSeconds }) }
        let pinfetchRate = rate(results["pinfetch -j 8 -i"] ?? [])
        print("## 4. \(count) files of \(self.options.fileKiB) KiB, 8 at a time\n")
        var table = MarkdownTable([
            "command", "wall s (median)", "min", "max", "files/s", "CPU s", "peak RSS MiB", "pinfetch files/s ÷ this",
        ])
        for contender in contenders {
            let runs = results[contender.name] ?? []
            table.add(
                [contender.name] + Format.seconds(Samples(runs.map(\.wallSeconds))) + [
                    Format.fixed(rate(runs).median, 0),
                    Format.fixed(Samples(runs.map(\.cpuSeconds)).median),
                    Format.fixed(Samples(runs.map(\.maxRSSMiB)).median, 1),
                    Format.ratio(pinfetchRate.ratios(to: rate(runs)).median),
                ]
            )
        }
        print(table.rendered() + "\n")
        let ratio = pinfetchRate.ratios(to: rate(results["aria2c -j 8 -i"] ?? [])).median
        self.targets.append(
            TargetResult(
                name: "4 pinfetch files/s ÷ aria2c files/s",
                detail: "\(Format.ratio(ratio)) (target ≥ 1.00x)",
                passed: ratio >= 1.0
            )
        )
        // As many files per second as curl followed by a sync, which gives its files the same
        // durability (not verified), and at least 0.8 of plain curl's, which neither hashes nor syncs.
        let syncRatio = pinfetchRate.ratios(to: rate(results[Self.curlParallelSync] ?? [])).median
        self.targets.append(
            TargetResult(
                name: "4b pinfetch files/s ÷ (curl --parallel && sync)'s",
                detail: "\(Format.ratio(syncRatio)) (target ≥ 1.00x)",
                passed: syncRatio >= 1.0
            )
        )
        let curlRatio = pinfetchRate.ratios(to: rate(results["curl --parallel --parallel-max 8"] ?? [])).median
        self.targets.append(
            TargetResult(
                name: "4c pinfetch files/s ÷ curl --parallel's",
                detail: "\(Format.ratio(curlRatio)) (target ≥ 0.80x)",
                passed: curlRatio >= 0.8
            )
        )
    }

    /// The three list files of the many-files cases (4 and 8), naming `count` files under
    /// `base` + `/many/` with their pins, saved into `directory`: pinfetch's manifest, aria2c's
    /// input file and curl's config, written under `lists` with `prefix` before their names.
    func writeManyLists(
        base: String,
        directory: String,
        prefix: String
    ) throws(BenchError) -> (
        manifest: String, aria2c: String, curl: String
    ) {
        var manifest = ""
        var ariaList = ""
        var curlConfig = ""
        for index in 0..<self.options.files {
            let name = self.manyName(index)
            let url = base + "/many/" + name
            let digest = self.manyDigests[index]
            manifest += "\(url) sha256:\(digest) \(name)\n"
            ariaList += "\(url)\n  out=\(name)\n  checksum=sha-256=\(digest)\n"
            curlConfig += "url = \"\(url)\"\noutput = \"\(directory)/\(name)\"\n"
        }
        let paths = (
            manifest: self.lists + "/\(prefix)manifest.txt", aria2c: self.lists + "/\(prefix)aria2c.txt",
            curl: self.lists + "/\(prefix)curl.config"
        )
        try FileTools.writeText(manifest, to: paths.manifest)
        try FileTools.writeText(ariaList, to: paths.aria2c)
        try FileTools.writeText(curlConfig, to: paths.curl)
        return paths
    }

    /// Fails unless `directory` holds every file of the many-files cases, complete.
    func expectManyFiles(in directory: String, by name: String) throws(BenchError) {
        let count = self.options.files
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        let complete = names.filter { FileTools.size(of: directory + "/" + $0) == self.smallBytes }.count
        guard complete == count else {
            throw BenchError("\(name) left \(complete) complete files of \(count) in \(directory)")
        }
    }
}
