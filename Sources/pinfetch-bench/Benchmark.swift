import Dispatch
import Foundation
@preconcurrency import Glibc

/// Runs the benchmark's cases and prints their tables (stdout) and progress (stderr).
///
/// Every pinfetch run is paired with its comparisons in the same round (their order rotates
/// from round to round), and the ratios are medians of those per-round pairs. Outputs are
/// deleted and `sync(2)` runs between two measurements, so no run pays for another's
/// write-back; the served files are read once beforehand, so every run is served from the
/// page cache.
final class Benchmark {
    struct Tools {
        var pinfetch: String
        var measureHelper: String
        var curl: String
        var aria2c: String
        var openssl: String
        var sha256sum: String
    }

    /// A command of a case: how to run it and how to check that it did its job.
    struct Contender {
        var name: String
        var command: Command
        /// Files or directories removed before and after the run.
        var outputs: [String]
        /// Directories made (empty) before the run.
        var directories: [String] = []
        var verify: (Measurement) throws(BenchError) -> Void
    }

    let options: BenchOptions
    let tools: Tools
    let root: String
    let createdRoot: Bool
    let sizeBytes: Int
    let largeBytes: Int
    let smallBytes: Int

    var www: String { self.root + "/www" }
    var out: String { self.root + "/out" }
    var lists: String { self.root + "/lists" }
    var logs: String { self.root + "/logs" }
    var bigFile: String { self.www + "/big.bin" }
    var largeFile: String { self.www + "/large.bin" }
    /// Case 6's file (``killBytes``).
    var killFile: String { self.www + "/kill.bin" }
    /// Case 6's file size: 64 MiB, the size of the first measurement of a kill's cost.
    let killBytes = 64 << 20
    var manyDirectory: String { self.www + "/many" }

    var server: NginxServer?
    var measurer: Measurer {
        Measurer(helper: self.tools.measureHelper, resultFile: self.logs + "/measure.txt")
    }
    /// `ru_maxrss` of `/bin/true` run through the helper: no child can report less (MiB).
    var rssFloorMiB = 0.0
    var signalSources: [any DispatchSourceSignal] = []
    var bigDigest = ""
    var largeDigest = ""
    var killDigest = ""
    var manyDigests: [String] = []
    var targets: [TargetResult] = []
    /// Case 1's pinfetch runs and the `openssl dgst` runs of the same rounds, for case 5.
    var cpuRuns: (pinfetch: [Measurement], openssl: [Measurement]) = ([], [])

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
            self.createdRoot
            ? [self.root]
            : [
                self.www, self.out, self.lists, self.logs, self.root + "/nginx", self.root + "/nginx-h2",
                self.root + "/tls",
            ]
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
        if cases.contains(6) { try self.caseKillResume() }
        if cases.contains(7) { try self.caseStartup() }
        if cases.contains(8) { try self.caseRoundTrip() }
        if cases.contains(9) { try self.caseSegments() }
        if cases.contains(10) { try self.caseReruns() }
        print("## Targets\n")
        print("Ratios are medians of per-round ratios (each pinfetch run against its comparison of the same round).\n")
        for target in self.targets.sorted(by: { $0.name < $1.name }) { print("    " + target.line) }
        let missed = self.targets.filter { !$0.passed }.count
        print("\n\(self.targets.count - missed) of \(self.targets.count) targets met.")
    }

    // MARK: - Preparation

    static func findTools(_ options: BenchOptions) throws(BenchError) -> Tools {
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
        let comparing = !cases.isDisjoint(with: [1, 4, 7, 8, 9])
        return Tools(
            pinfetch: pinfetch,
            measureHelper: measureHelper,
            curl: try tool("curl", package: "curl", needed: comparing),
            aria2c: try tool("aria2c", package: "aria2", needed: comparing),
            openssl: try tool("openssl", package: "openssl", needed: true),
            sha256sum: try tool("sha256sum", package: "coreutils", needed: cases.contains(1))
        )
    }

    var needsBig: Bool { !self.options.cases.isDisjoint(with: [1, 2, 3, 5, 9, 10]) }
    var needsLarge: Bool { self.options.cases.contains(3) }
    var needsMany: Bool { !self.options.cases.isDisjoint(with: [4, 8]) }
    var needsKill: Bool { self.options.cases.contains(6) }

    /// Checks the disk, makes the files, hashes and pre-warms them, starts nginx.
    func prepare() throws(BenchError) {
        for directory in [self.www, self.out, self.lists, self.logs, self.root + "/nginx", self.manyDirectory] {
            try FileTools.makeDirectory(directory)
        }
        let big = self.needsBig ? self.sizeBytes : 0
        let large = self.needsLarge ? self.largeBytes : 0
        let many = self.needsMany ? self.smallBytes * self.options.files : 0
        let kill = self.needsKill ? 2 * self.killBytes : 0
        let needed = big + large + many + max(big, large, many) + kill + (256 << 20)
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
        if self.needsKill { try FileTools.createRandomFile(at: self.killFile, bytes: self.killBytes) }
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
        if self.needsKill { self.killDigest = try self.sha256([self.killFile])[0] }
        if self.needsMany { self.manyDigests = try self.sha256((0..<self.options.files).map(self.manyPath)) }
        for path in [self.bigFile, self.largeFile, self.killFile] where FileManager.default.fileExists(atPath: path) {
            try FileTools.prewarm(path)
        }
        if self.needsMany {
            for index in 0..<self.options.files { try FileTools.prewarm(self.manyPath(index)) }
        }
        self.rssFloorMiB = try self.measurer.run(Command("/bin/true", [])).maxRSSMiB
        let slowAfter = Int((Double(self.sizeBytes) * 0.9).rounded(.up))
        self.server = try NginxServer(root: self.www, directory: self.root + "/nginx", slowAfter: slowAfter)
    }

    func manyName(_ index: Int) -> String { String(format: "f%05d.bin", index) }
    func manyPath(_ index: Int) -> String { self.manyDirectory + "/" + self.manyName(index) }

    func url(_ path: String) -> String { (self.server?.baseURL ?? "") + path }

    /// Lower-case SHA-256 hex digests of `paths`, from `openssl dgst -sha256 -r`.
    func sha256(_ paths: [String]) throws(BenchError) -> [String] {
        let result = try ChildProcess.output(of: Command(self.tools.openssl, ["dgst", "-sha256", "-r"] + paths))
        let digests = result.text.split(separator: "\n").map { String($0.prefix(64)).lowercased() }
        guard result.exitStatus == 0, digests.count == paths.count, digests.allSatisfy({ $0.count == 64 }) else {
            throw BenchError("openssl dgst -sha256 failed: \(result.text.prefix(500))")
        }
        return digests
    }

    /// The machine, the tools and the settings, as Markdown.
    func header() -> String {
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

    static func progress(_ message: String) {
        FileHandle.standardError.write(Data("pinfetch-bench: \(message)\n".utf8))
    }

    func errorPath(_ name: String) -> String {
        self.logs + "/" + name.filter { $0.isLetter || $0.isNumber || $0 == "-" } + ".stderr"
    }

    /// A pinfetch run with `-q --json --no-cache` (the cache would answer repeats without a
    /// request); its JSON lines go to `logs/<name>.json`.
    func pinfetch(_ name: String, _ arguments: [String]) -> Command {
        Command(
            self.tools.pinfetch,
            ["-q", "--json", "--no-cache"] + arguments,
            standardOutput: self.logs + "/\(name).json",
            standardError: self.errorPath(name)
        )
    }

    /// The `--json` lines of the last run of `command`.
    func jsonLines(_ command: Command) -> [[String: Any]] {
        FileTools.readText(command.standardOutput ?? "").split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
        }
    }

    static func integer(_ value: Any?) -> Int? { (value as? NSNumber)?.intValue }

    /// Runs `contender` between two clean-ups and checks its work.
    func measure(_ contender: Contender) throws(BenchError) -> Measurement {
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

    func expectSize(_ path: String, _ bytes: Int, _ name: String) throws(BenchError) {
        let size = FileTools.size(of: path)
        guard size == bytes else {
            throw BenchError("\(name) left \(size.map { "\($0) bytes" } ?? "nothing") at \(path), expected \(bytes)")
        }
    }

    func expectPinfetch(
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
    func rounds(_ title: String, _ contenders: [Contender]) throws(BenchError) -> [String: [Measurement]] {
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
}
