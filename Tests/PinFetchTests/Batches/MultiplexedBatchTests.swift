import Foundation
@preconcurrency import Glibc
import Testing

/// Batches on one event loop: real nginx over HTTPS with HTTP/2, where a batch's files
/// are streams of one connection; a batch killed with SIGKILL and run again; the order of the
/// syscalls that make each file durable; and the bound on HTTP/1.1 connections.
extension ProcessTests {
    /// `count` files of 1 to 40 KiB (and their manifest lines `URL sha256:HEX NAME`) in nginx's root.
    private static func serveBatch(
        _ nginx: Nginx,
        count: Int,
        url: (String) -> String
    ) throws -> (
        lines: [String], files: [String: [UInt8]]
    ) {
        var lines: [String] = []
        var files: [String: [UInt8]] = [:]
        for index in 0..<count {
            let name = "f\(index).bin"
            let bytes = Self.pseudoRandomContent(1024 + (index * 7919) % (39 * 1024), seed: UInt64(index + 1))
            try nginx.serve(bytes, as: name)
            files[name] = bytes
            lines.append("\(url(name)) sha256:\(Fixtures.sha256(bytes)) \(name)")
        }
        return (lines, files)
    }

    @Test(arguments: [8, 32])
    func `100 files over HTTP/2 come as streams of one connection, each verified`(jobs: Int) async throws {
        try await Self.withHTTPSNginx { nginx, authority, work in
            let (lines, files) = try Self.serveBatch(nginx, count: 100) { nginx.httpsURL($0) }
            try (lines.joined(separator: "\n") + "\n").write(toFile: work + "/list", atomically: true, encoding: .utf8)
            let out = try EndToEndTests.makeDirectory(work + "/out")
            let run = try await self.pinfetch(
                ["--cacert", authority.certificate, "-j", "\(jobs)", "-i", work + "/list", "-P", out],
                logs: work + "/run"
            )
            #expect(run.status == 0, EndToEndTests.explain(run, nginx))
            #expect(
                run.lines.count == 100 && run.lines.allSatisfy { $0["status"] as? String == "downloaded" },
                "\(run.standardOutput)"
            )
            for (name, bytes) in files { #expect(contents(out + "/" + name) == bytes, "\(name)") }
            let gets = nginx.requests.filter { $0.method == "GET" }
            #expect(gets.count == 100, "one GET per file: \(nginx.log)")
            #expect(Set(gets.map(\.connection)).count == 1, "every file on one connection: \(nginx.log)")
        }
    }

    @Test func `a SIGKILL in a batch leaves only verified files, and the rerun resumes the cut one`() async throws {
        try await Self.withHTTPSNginx { nginx, authority, work in
            var (lines, files) = try Self.serveBatch(nginx, count: 40) { nginx.httpsURL($0) }
            let big = Self.pseudoRandomContent(3 << 20, seed: 99)  // 15 s at /slow/'s 200 KiB/s
            try nginx.serve(big, as: "big.bin")
            files["big.bin"] = big
            lines.insert("\(nginx.httpsURL("slow/big.bin")) sha256:\(Fixtures.sha256(big)) big.bin", at: 0)
            try (lines.joined(separator: "\n") + "\n").write(toFile: work + "/list", atomically: true, encoding: .utf8)
            let out = try EndToEndTests.makeDirectory(work + "/out")
            let arguments = ["--cacert", authority.certificate, "-j", "8", "-i", work + "/list", "-P", out]
            let first = try self.startPinfetch(arguments, logs: work + "/first")
            try await Self.waitUntil("a checkpointed partial of big.bin", first) {
                FileManager.default.fileExists(atPath: out + "/big.bin.part.state")
                    && EndToEndTests.size(of: out + "/big.bin.part") >= 256 << 10
            }
            first.signal(SIGKILL)
            try await first.wait(timeout: .seconds(10))
            // Every name at a destination holds its verified bytes; the cut file is only a partial.
            var placed = 0
            for (name, bytes) in files where FileManager.default.fileExists(atPath: out + "/" + name) {
                #expect(contents(out + "/" + name) == bytes, "\(name) holds other bytes after the kill")
                placed += 1
            }
            #expect(!FileManager.default.fileExists(atPath: out + "/big.bin"))
            let logged = nginx.requests.count
            let second = try await self.pinfetch(Nginx.unthrottled + arguments, logs: work + "/second")
            #expect(second.status == 0, EndToEndTests.explain(second, nginx))
            for (name, bytes) in files { #expect(contents(out + "/" + name) == bytes, "\(name)") }
            let rerun = nginx.requests.dropFirst(logged)
            let resumed = rerun.first { $0.path == "/slow/big.bin" && $0.method == "GET" }
            #expect(resumed?.status == 206, "\(second.standardOutput)\n\(nginx.log)")
            #expect(resumed?.range?.hasPrefix("bytes=") == true && resumed?.range != "bytes=0-", "\(nginx.log)")
            // Files the first run placed are verified from disk: the rerun asks only for the cut
            // one (its HEAD probe and the ranged GET).
            #expect(placed > 0 && rerun.allSatisfy { $0.path == "/slow/big.bin" }, "\(placed) placed: \(nginx.log)")
        }
    }

    @Test func `each file's data is synced before its rename, and its directory after it`() async throws {
        let strace = "/usr/bin/strace"
        try #require(FileManager.default.isExecutableFile(atPath: strace), "apt-get install strace (.ci/run does)")
        try await withNginx { nginx in
            try await withTemporaryDirectory { work in
                let (lines, files) = try Self.serveBatch(nginx, count: 12) { nginx.url($0) }
                try (lines.joined(separator: "\n") + "\n").write(
                    toFile: work + "/list",
                    atomically: true,
                    encoding: .utf8
                )
                let out = try EndToEndTests.makeDirectory(work + "/out")
                let trace = work + "/trace"
                let traced = try ChildProcess(
                    strace,
                    ["-f", "-y", "-o", trace, "-e", "trace=fsync,fdatasync,rename,renameat,renameat2,link,linkat"]
                        + [try EndToEndTests.pinfetchExecutable()] + EndToEndTests.quiet
                        + ["-j", "4", "-i", work + "/list", "-P", out],
                    logs: work + "/run"
                )
                try await traced.wait(timeout: .seconds(60))
                #expect(traced.result.status == 0, "\(traced.transcript)")
                let calls = Self.completedCalls(try String(contentsOfFile: trace, encoding: .utf8))
                for name in files.keys.sorted() {
                    let part = out + "/" + name + ".part"
                    let dataSync = calls.firstIndex {
                        $0.contains("sync(") && $0.contains("<\(part)>") && $0.hasSuffix("= 0")
                    }
                    let rename = calls.firstIndex {
                        ($0.contains("rename") || $0.contains("link")) && $0.contains("\"\(part)\"")
                            && $0.contains("\"\(out)/\(name)\"") && $0.hasSuffix("= 0")
                    }
                    try #require(dataSync != nil && rename != nil, "\(name):\n\(calls.joined(separator: "\n"))")
                    #expect(dataSync! < rename!, "\(name): renamed before its data was synced")
                    let directorySync = calls[rename!...].contains {
                        $0.hasPrefix("fsync(") && $0.contains("<\(out)>") && $0.hasSuffix("= 0")
                    }
                    #expect(directorySync, "\(name): no fsync of \(out) after its rename")
                    #expect(contents(out + "/" + name) == files[name])
                }
            }
        }
    }

    @Test func `--max-connections-per-host bounds the HTTP/1.1 connections of a batch`() async throws {
        try await withNginx { nginx in
            try await withTemporaryDirectory { work in
                let (lines, files) = try Self.serveBatch(nginx, count: 30) { nginx.url($0) }
                try (lines.joined(separator: "\n") + "\n").write(
                    toFile: work + "/list",
                    atomically: true,
                    encoding: .utf8
                )
                let out = try EndToEndTests.makeDirectory(work + "/out")
                let run = try await self.pinfetch(
                    ["-j", "8", "--max-connections-per-host", "2", "-i", work + "/list", "-P", out],
                    logs: work + "/run"
                )
                #expect(run.status == 0, EndToEndTests.explain(run, nginx))
                for (name, bytes) in files { #expect(contents(out + "/" + name) == bytes, "\(name)") }
                let connections = Set(nginx.requests.map(\.connection))
                #expect((1...2).contains(connections.count), "\(connections.count) connections: \(nginx.log)")
            }
        }
    }

    /// The calls of an `strace -f` log in the order they completed, each as one line without its
    /// process id: a call another thread interrupted (`<unfinished ...>`) is joined with its
    /// `<... resumed>` rest, and placed where it completed.
    static func completedCalls(_ log: String) -> [String] {
        var pending: [Substring: String] = [:]
        var calls: [String] = []
        for line in log.split(separator: "\n") {
            let pid = line.prefix { $0 != " " }
            let call = line.dropFirst(pid.count).drop { $0 == " " }
            if call.hasSuffix("<unfinished ...>") {
                pending[pid] = String(call.dropLast("<unfinished ...>".count))
            } else if call.hasPrefix("<... "), let start = pending.removeValue(forKey: pid),
                let end = call.range(of: "resumed>")
            {
                calls.append(start + call[end.upperBound...])
            } else {
                calls.append(String(call))
            }
        }
        return calls
    }
}
