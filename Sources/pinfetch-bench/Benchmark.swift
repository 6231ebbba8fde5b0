import Dispatch
import Foundation
@preconcurrency import Glibc

/// Runs the cases of issue 5 and prints their tables (stdout) and progress (stderr).
///
/// Every pinfetch run is paired with its comparisons in the same round (their order rotates
/// from round to round), and the ratios are medians of those per-round pairs. Outputs are
/// deleted and `sync(2)` runs between two measurements, so no run pays for another's
/// write-back; the served files are read once beforehand, so every run is served from the
/// page cache.
final class Benchmark {
    private struct Tools {
        var pinfetch: String
        var measureHelper: String
        var curl: String
        var aria2c: String
        var openssl: String
        var sha256sum: String
    }

    /// A command of a case: how to run it and how to check that it did its job.
    private struct Contender {
        var name: String
        var command: Command
        /// Files or directories removed before and after the run.
        var outputs: [String]
        /// Directories made (empty) before the run.
        var directories: [String] = []
        var verify: (Measurement) throws(BenchError) -> Void
    }

    private let options: BenchOptions
    private let tools: Tools
    private let root: String
    private let createdRoot: Bool
    private let sizeBytes: Int
    private let largeBytes: Int
    private let smallBytes: Int

    private var www: String { self.root + "/www" }
    private var out: String { self.root + "/out" }
    private var lists: String { self.root + "/lists" }
    private var logs: String { self.root + "/logs" }
    private var bigFile: String { self.www + "/big.bin" }
    private var largeFile: String { self.www + "/large.bin" }
    private var manyDirectory: String { self.www + "/many" }

    private var server: NginxServer?
    private var measurer: Measurer {
        Measurer(helper: self.tools.measureHelper, resultFile: self.logs + "/measure.txt")
    }
    /// `ru_maxrss` of `/bin/true` run through the helper: no child can report less (MiB).
    private var rssFloorMiB = 0.0
    private var signalSources: [any DispatchSourceSignal] = []
    private var bigDigest = ""
    private var largeDigest = ""
    private var manyDigests: [String] = []
    private var targets: [TargetResult] = []
    /// Case 1's pinfetch runs and the `openssl dgst` runs of the same rounds, for case 5.
    private var cpuRuns: (pinfetch: [Measurement], openssl: [Measurement]) = ([], [])

    init(options: BenchOptions) throws(BenchError) {
        self.options = options
        self.sizeBytes = options.sizeMiB << 20
        self.largeBytes = options.largeMiB << 20
        self.smallBytes = options.fileKiB << 10
        self.tools = try Self.findTools(options)
        if let work = options.work {
            self.root = (work as NSString).standardizingPath
            self.createdRoot = !FileManager.default.fileExists(atPath: self.root)
            try FileTools.makeDirectory(self.root)
        } else {
            var template = Array("/tmp/pinfetch-bench.XXXXXX".utf8CString)
            guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
                throw BenchError("cannot create a directory under /tmp: \(String(cString: strerror(errno)))")
            }
            self.root = String(cString: made)
            self.createdRoot = true
        }
    }

    /// Runs the selected cases; the work directory is cleaned up whatever happens.
    func run() throws(BenchError) {
        let madePaths =
            self.createdRoot ? [self.root] : [self.www, self.out, self.lists, self.logs, self.root + "/nginx"]
        if !self.options.keep { ChildRegistry.shared.setRemoveOnSignal(madePaths) }
        self.signalSources = ChildRegistry.shared.installSignalHandlers()
        defer {
            self.server?.stop()
            if self.options.keep {
                Self.progress("kept the work directory \(self.root)")
            } else {
                for path in madePaths { FileTools.remove(path) }
            }
        }
        try self.prepare()
        print(self.header())
        let cases = self.options.cases
        if cases.contains(1) || cases.contains(5) { try self.caseFullDownload() }
        if cases.contains(2) { try self.caseResume() }
        if cases.contains(3) { try self.casePeakRSS() }
        if cases.contains(4) { try self.caseManyFiles() }
        if cases.contains(5) { self.reportCPU() }
        print("## Targets\n")
        print("Ratios are medians of per-round ratios (each pinfetch run against its comparison of the same round).\n")
        for target in self.targets.sorted(by: { $0.name < $1.name }) { print("    " + target.line) }
        let missed = self.targets.filter { !$0.passed }.count
        print("\n\(self.targets.count - missed) of \(self.targets.count) targets met.")
    }

    // MARK: - Preparation

    private static func findTools(_ options: BenchOptions) throws(BenchError) -> Tools {
        let pinfetch = options.pinfetch ?? FileTools.executableDirectory() + "/pinfetch"
        guard access(pinfetch, X_OK) == 0 else {
            throw BenchError(
                "no pinfetch binary at \(pinfetch): run `swift build -c release` first "
                    + "(or `swift run -c release pinfetch-bench`, which builds it), or pass --pinfetch PATH"
            )
        }
        let measureHelper = FileTools.executableDirectory() + "/pinfetch-bench-measure"
        guard access(measureHelper, X_OK) == 0 else {
            throw BenchError("no \(measureHelper): run `swift build -c release` first")
        }
        guard access(NginxServer.executable, X_OK) == 0 else {
            throw BenchError("\(NginxServer.executable) is missing: apt-get install nginx-light")
        }
        let cases = options.cases
        func tool(_ name: String, package: String, needed: Bool) throws(BenchError) -> String {
            if let path = FileTools.findOnPath(name) { return path }
            guard !needed else { throw BenchError("\(name) is not on PATH: apt-get install \(package)") }
            return name
        }
        let comparing = !cases.isDisjoint(with: [1, 4])
        return Tools(
            pinfetch: pinfetch,
            measureHelper: measureHelper,
            curl: try tool("curl", package: "curl", needed: comparing),
            aria2c: try tool("aria2c", package: "aria2", needed: comparing),
            openssl: try tool("openssl", package: "openssl", needed: true),
            sha256sum: try tool("sha256sum", package: "coreutils", needed: cases.contains(1))
        )
    }

    private var needsBig: Bool { !self.options.cases.isDisjoint(with: [1, 2, 3, 5]) }
    private var needsLarge: Bool { self.options.cases.contains(3) }
    private var needsMany: Bool { self.options.cases.contains(4) }

    /// Checks the disk, makes the files, hashes and pre-warms them, starts nginx.
    private func prepare() throws(BenchError) {
        for directory in [self.www, self.out, self.lists, self.logs, self.root + "/nginx", self.manyDirectory] {
            try FileTools.makeDirectory(directory)
        }
        let big = self.needsBig ? self.sizeBytes : 0
        let large = self.needsLarge ? self.largeBytes : 0
        let many = self.needsMany ? self.smallBytes * self.options.files : 0
        let needed = big + large + many + max(big, large, many) + (256 << 20)
        if let available = FileTools.availableBytes(at: self.root), available < needed {
            throw BenchError(
                "\(self.root) has \(available >> 20) MiB free; these cases need about \(needed >> 20) MiB "
                    + "(use --work DIR elsewhere, or smaller --size-mib / --large-mib)"
            )
        }
        if self.needsBig {
            Self.progress("creating \(self.options.sizeMiB) MiB test file")
            try FileTools.createRandomFile(at: self.bigFile, bytes: self.sizeBytes)
        }
        if self.needsLarge {
            Self.progress("creating \(self.options.largeMiB) MiB test file")
            try FileTools.createRandomFile(at: self.largeFile, bytes: self.largeBytes)
        }
        if self.needsMany {
            Self.progress("creating \(self.options.files) files of \(self.options.fileKiB) KiB")
            for index in 0..<self.options.files {
                try FileTools.createRandomFile(at: self.manyPath(index), bytes: self.smallBytes)
            }
        }
        sync()  // the creation's write-back must not land in a measurement
        Self.progress("hashing and pre-warming the served files")
        if self.needsBig { self.bigDigest = try self.sha256([self.bigFile])[0] }
        if self.needsLarge { self.largeDigest = try self.sha256([self.largeFile])[0] }
        if self.needsMany { self.manyDigests = try self.sha256((0..<self.options.files).map(self.manyPath)) }
        for path in [self.bigFile, self.largeFile] where FileManager.default.fileExists(atPath: path) {
            try FileTools.prewarm(path)
        }
        if self.needsMany {
            for index in 0..<self.options.files { try FileTools.prewarm(self.manyPath(index)) }
        }
        self.rssFloorMiB = try self.measurer.run(Command("/bin/true", [])).maxRSSMiB
        let slowAfter = Int((Double(self.sizeBytes) * 0.9).rounded(.up))
        self.server = try NginxServer(root: self.www, directory: self.root + "/nginx", slowAfter: slowAfter)
    }

    private func manyName(_ index: Int) -> String { String(format: "f%05d.bin", index) }
    private func manyPath(_ index: Int) -> String { self.manyDirectory + "/" + self.manyName(index) }

    private func url(_ path: String) -> String { (self.server?.baseURL ?? "") + path }

    /// Lower-case SHA-256 hex digests of `paths`, from `openssl dgst -sha256 -r`.
    private func sha256(_ paths: [String]) throws(BenchError) -> [String] {
        let result = try ChildProcess.output(of: Command(self.tools.openssl, ["dgst", "-sha256", "-r"] + paths))
        let digests = result.text.split(separator: "\n").map { String($0.prefix(64)).lowercased() }
        guard result.exitStatus == 0, digests.count == paths.count, digests.allSatisfy({ $0.count == 64 }) else {
            throw BenchError("openssl dgst -sha256 failed: \(result.text.prefix(500))")
        }
        return digests
    }

    /// The machine, the tools and the settings, as Markdown.
    private func header() -> String {
        func firstLine(_ arguments: [String]) -> String {
            guard let executable = arguments.first,
                let text = try? ChildProcess.output(of: Command(executable, Array(arguments.dropFirst()))).text
            else { return "?" }
            return text.split(separator: "\n").first.map(String.init) ?? "?"
        }
        let cpuinfo = FileTools.readText("/proc/cpuinfo").split(separator: "\n")
        let model = cpuinfo.first { $0.hasPrefix("model name") }?.split(separator: ":", maxSplits: 1).last
        let memory = FileTools.readText("/proc/meminfo").split(separator: "\n").first { $0.hasPrefix("MemTotal") }
        let memoryKiB = memory.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? 0
        var machine = MarkdownTable(["machine", ""])
        machine.add(["nproc", "\(sysconf(Int32(_SC_NPROCESSORS_ONLN)))"])
        machine.add(["CPU", model.map { $0.trimmingCharacters(in: .whitespaces) } ?? "?"])
        machine.add(["memory", "\(memoryKiB >> 20) GiB"])
        machine.add([
            "kernel", FileTools.readText("/proc/sys/kernel/osrelease").trimmingCharacters(in: .whitespacesAndNewlines),
        ])
        machine.add([
            "load average at start",
            FileTools.readText("/proc/loadavg").split(separator: " ").prefix(3).joined(separator: " "),
        ])
        let versions = [
            firstLine([self.tools.pinfetch, "--version"]), firstLine([self.tools.curl, "-V"]),
            firstLine([self.tools.aria2c, "-v"]), firstLine([self.tools.openssl, "version"]),
            firstLine([self.tools.sha256sum, "--version"]), firstLine([NginxServer.executable, "-v"]),
        ]
        let options = self.options
        let settings =
            "rounds \(options.rounds) · file \(options.sizeMiB) MiB · large file \(options.largeMiB) MiB · "
            + "\(options.files) files of \(options.fileKiB) KiB · cases "
            + options.cases.sorted().map(String.init).joined(separator: ",")
        return """
            # pinfetch-bench

            \(machine.rendered())

            Tools:
            \(versions.map { "- `\($0)`" }.joined(separator: "\n"))

            Peak RSS is the child's `ru_maxrss` from `wait4`, spawned by `pinfetch-bench-measure`; the kernel \
            counts the spawner's own peak in it, so no value is below \(Format.fixed(self.rssFloorMiB, 1)) MiB \
            (`/bin/true` measured that way).

            Settings: \(settings). nginx on \(self.url("/")) (sendfile on), work directory \(self.root).

            """
    }

    // MARK: - Running and checking

    private static func progress(_ message: String) {
        FileHandle.standardError.write(Data("pinfetch-bench: \(message)\n".utf8))
    }

    private func errorPath(_ name: String) -> String {
        self.logs + "/" + name.filter { $0.isLetter || $0.isNumber || $0 == "-" } + ".stderr"
    }

    /// A pinfetch run with `-q --json --no-cache` (the cache would answer repeats without a
    /// request); its JSON lines go to `logs/<name>.json`.
    private func pinfetch(_ name: String, _ arguments: [String]) -> Command {
        Command(
            self.tools.pinfetch,
            ["-q", "--json", "--no-cache"] + arguments,
            standardOutput: self.logs + "/\(name).json",
            standardError: self.errorPath(name)
        )
    }

    /// The `--json` lines of the last run of `command`.
    private func jsonLines(_ command: Command) -> [[String: Any]] {
        FileTools.readText(command.standardOutput ?? "").split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
        }
    }

    private static func integer(_ value: Any?) -> Int? { (value as? NSNumber)?.intValue }

    /// Runs `contender` between two clean-ups and checks its work.
    private func measure(_ contender: Contender) throws(BenchError) -> Measurement {
        for path in contender.outputs { FileTools.remove(path) }
        for directory in contender.directories { try FileTools.makeDirectory(directory) }
        sync()
        let measurement = try self.measurer.run(contender.command)
        guard measurement.exitStatus == 0 else {
            throw BenchError(
                "\(contender.name) exited with \(measurement.exitStatus): \(contender.command.commandLine)\n"
                    + NginxServer.tail(contender.command.standardError ?? "")
            )
        }
        try contender.verify(measurement)
        for path in contender.outputs { FileTools.remove(path) }
        return measurement
    }

    private func expectSize(_ path: String, _ bytes: Int, _ name: String) throws(BenchError) {
        let size = FileTools.size(of: path)
        guard size == bytes else {
            throw BenchError("\(name) left \(size.map { "\($0) bytes" } ?? "nothing") at \(path), expected \(bytes)")
        }
    }

    private func expectPinfetch(
        _ command: Command,
        status: String,
        files: Int = 1
    ) throws(BenchError) -> [[String: Any]] {
        let lines = self.jsonLines(command)
        let statuses = lines.map { $0["status"] as? String ?? "?" }
        guard lines.count == files, statuses.allSatisfy({ $0 == status }) else {
            throw BenchError(
                "pinfetch: expected \(files) × \(status), got \(Set(statuses).sorted()) (\(lines.count) lines)"
                    + " from \(command.commandLine)"
            )
        }
        return lines
    }

    /// Runs `contenders` once per round, rotating their order, and returns each one's
    /// measurements in round order (keyed by name).
    private func rounds(_ title: String, _ contenders: [Contender]) throws(BenchError) -> [String: [Measurement]] {
        var results: [String: [Measurement]] = [:]
        for round in 0..<self.options.rounds {
            for offset in contenders.indices {
                let contender = contenders[(offset + round) % contenders.count]
                let measurement = try self.measure(contender)
                results[contender.name, default: []].append(measurement)
                Self.progress(
                    "\(title) round \(round + 1)/\(self.options.rounds): \(contender.name) "
                        + "\(Format.fixed(measurement.wallSeconds, 3)) s"
                )
            }
        }
        return results
    }

    // MARK: - Case 1 (and the runs of case 5)

    /// The row names of case 1 (and 5).
    private enum Case1 {
        static let pinfetch = "pinfetch --sha256"
        static let curlSync = "curl -o FILE && sync FILE"
        static let curl = "curl -o FILE"
        static let curlSHA256 = "curl -o FILE && sha256sum -c"
        static let aria2c = "aria2c --checksum=sha-256"
        static let openssl = "openssl dgst -sha256"
    }

    private func caseFullDownload() throws(BenchError) {
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
        }
    }

    // MARK: - Case 5

    private func reportCPU() {
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

    // MARK: - Case 2

    private func caseResume() throws(BenchError) {
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
    private func makePartial(output: String, outputs: [String], url: String, threshold: Int) throws(BenchError) -> Int {
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

    /// The `"offset":N` of a checkpoint file.
    private static func checkpointOffset(_ path: String) -> Int? {
        let text = FileTools.readText(path)
        guard let key = text.range(of: "\"offset\":") else { return nil }
        return Int(text[key.upperBound...].prefix { $0.isNumber })
    }

    // MARK: - Case 3

    private func casePeakRSS() throws(BenchError) {
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

    // MARK: - Case 4

    private func caseManyFiles() throws(BenchError) {
        let count = self.options.files
        let directory = self.out + "/many"
        var manifest = ""
        var ariaList = ""
        var curlConfig = ""
        for index in 0..<count {
            let name = self.manyName(index)
            let url = self.url("/many/" + name)
            let digest = self.manyDigests[index]
            manifest += "\(url) sha256:\(digest) \(name)\n"
            ariaList += "\(url)\n  out=\(name)\n  checksum=sha-256=\(digest)\n"
            curlConfig += "url = \"\(url)\"\noutput = \"\(directory)/\(name)\"\n"
        }
        let manifestPath = self.lists + "/manifest.txt"
        let ariaPath = self.lists + "/aria2c.txt"
        let curlPath = self.lists + "/curl.config"
        try FileTools.writeText(manifest, to: manifestPath)
        try FileTools.writeText(ariaList, to: ariaPath)
        try FileTools.writeText(curlConfig, to: curlPath)
        let bytes = self.smallBytes
        let verifyDirectory = { (name: String) throws(BenchError) in
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
            let complete = names.filter { FileTools.size(of: directory + "/" + $0) == bytes }.count
            guard complete == count else {
                throw BenchError("\(name) left \(complete) complete files of \(count) in \(directory)")
            }
        }
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
    }
}
