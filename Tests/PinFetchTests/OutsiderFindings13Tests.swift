import Foundation
@preconcurrency import Glibc
import Testing

/// What an outsider found in the batch engine of issue 13, each kept as the input that broke it.
extension ProcessTests {
    @Test func `healthy keep-alive answers are never cut by the check for bytes left on a connection`() async throws {
        // The check shut down a connection when the previous transfer ended, by which time libcurl
        // had handed it to the next request: that answer was cut (exit 4, or a cut unpinned file).
        try await withNginx { nginx in
            try await withTemporaryDirectory { work in
                let files = try Self.serveFiles(nginx, count: 40, size: 4 << 20, in: work) { nginx.url($0) }
                let out = try EndToEndTests.makeDirectory(work + "/out")
                let run = try await self.pinfetch(
                    Nginx.unthrottled + ["-j", "16", "--retries", "0", "-i", work + "/list", "-P", out],
                    logs: work + "/run"
                )
                #expect(run.status == 0, EndToEndTests.explain(run, nginx))
                for (name, bytes) in files { #expect(HostileAnswerTests.holds(out + "/" + name, bytes), "\(name)") }
            }
        }
    }

    @Test func `HTTPS files waiting on a silent host give up together, then use the next mirror`() async throws {
        try await Self.withHTTPSNginx { nginx, authority, work in
            let tarpit = try Tarpit()  // completes TCP handshakes, never answers the TLS one
            defer { tarpit.close() }
            let files = try Self.serveFiles(nginx, count: 8, size: 4096, in: work, url: { nginx.httpsURL($0) }) {
                ["https://127.0.0.1:\(tarpit.port)/\($0)"]
            }
            let out = try EndToEndTests.makeDirectory(work + "/out")
            let run = try await self.pinfetch(
                ["--cacert", authority.certificate, "-j", "8", "--connect-timeout", "2", "--retries", "0"]
                    + ["-i", work + "/list", "-P", out],
                logs: work + "/run"
            )
            #expect(run.status == 0, EndToEndTests.explain(run, nginx))
            for (name, bytes) in files { #expect(contents(out + "/" + name) == bytes, "\(name)") }
            // One connect timeout for all of them, not one after another (2, 4, … 16 s).
            let elapsed = run.lines.compactMap { $0["elapsed_s"] as? Double }
            #expect(elapsed.count == 8 && elapsed.allSatisfy { $0 < 3.8 }, "\(elapsed)")
        }
    }

    @Test func `files for a host with room never wait behind another host's transfers`() async throws {
        // libcurl 7.88's own per-host queue woke only its head when a transfer ended: files for an
        // idle host waited 5–15 s behind a slow one (and failed under --max-time).
        try await withNginx { nginx in
            try await withTemporaryDirectory { work in
                var lines: [String] = []
                for index in 0..<26 {  // s0…s5: 2 s each at localhost's /slow/; f0…f19: small, at 127.0.0.1
                    let slow = index < 6
                    let name = slow ? "s\(index)" : "fast-f\(index)"
                    let bytes = Self.pseudoRandomContent(slow ? 600 << 10 : 2048, seed: UInt64(200 + index))
                    try nginx.serve(bytes, as: name)
                    let url = slow ? "http://localhost:\(nginx.port)/slow/\(name)" : nginx.url(name)
                    lines.append("\(url) sha256:\(Fixtures.sha256(bytes)) \(name)")
                }
                try (lines.joined(separator: "\n") + "\n").write(
                    toFile: work + "/list",
                    atomically: true,
                    encoding: .utf8
                )
                let out = try EndToEndTests.makeDirectory(work + "/out")
                let run = try await self.pinfetch(
                    ["-j", "26", "--max-connections-per-host", "2", "-i", work + "/list", "-P", out],
                    logs: work + "/run"
                )
                #expect(run.status == 0, EndToEndTests.explain(run, nginx))
                let fastLines = run.lines.filter { ($0["path"] as? String)?.contains("fast-") == true }
                let elapsed = fastLines.compactMap { $0["elapsed_s"] as? Double }
                #expect(elapsed.count == 20 && elapsed.allSatisfy { $0 < 1.5 }, "\(elapsed)")
            }
        }
    }

    @Test func `plain HTTP files waiting on a host that drops connects give up together`() async throws {
        try await withNginx { nginx in
            try await withTemporaryDirectory { work in
                let tarpit = try Tarpit(full: true)  // its one-place backlog taken: SYNs are dropped
                defer { tarpit.close() }
                let files = try Self.serveFiles(nginx, count: 16, size: 4096, in: work, url: { nginx.url($0) }) {
                    ["http://127.0.0.1:\(tarpit.port)/\($0)"]
                }
                let out = try EndToEndTests.makeDirectory(work + "/out")
                let run = try await self.pinfetch(
                    ["-j", "16", "--connect-timeout", "2", "--retries", "0", "-i", work + "/list", "-P", out],
                    logs: work + "/run"
                )
                #expect(run.status == 0, EndToEndTests.explain(run, nginx))
                for (name, bytes) in files { #expect(contents(out + "/" + name) == bytes, "\(name)") }
                // One connect timeout, not one per wave of 8 (2 s, then 4 s).
                let elapsed = run.lines.compactMap { $0["elapsed_s"] as? Double }
                #expect(elapsed.count == 16 && elapsed.allSatisfy { $0 < 3.8 }, "\(elapsed)")
            }
        }
    }

    @Test func `HTTP/2 streams kept to --limit-rate are not taken for stalled`() async throws {
        // libcurl takes a stream's window ahead of a slow reader, then nothing arrives while the
        // queue drains: counting only libcurl's bytes, --stall-timeout fired on healthy streams.
        try await Self.withHTTPSNginx { nginx, authority, work in
            let files = try Self.serveFiles(nginx, count: 2, size: 1_500_000, in: work) { nginx.httpsURL($0) }
            let out = try EndToEndTests.makeDirectory(work + "/out")
            let run = try await self.pinfetch(
                ["--cacert", authority.certificate, "-j", "2", "--limit-rate", "400K", "--stall-timeout", "2"]
                    + ["--retries", "0", "-i", work + "/list", "-P", out],
                logs: work + "/run"
            )
            #expect(run.status == 0, EndToEndTests.explain(run, nginx))
            for (name, bytes) in files { #expect(HostileAnswerTests.holds(out + "/" + name, bytes), "\(name)") }
        }
    }

    @Test func `--limit-rate holds the network to the rate, for files that wait for a connection too`() async throws {
        // 4 × 512 KiB at 1 MiB/s over one connection. The limit once counted the wait for a
        // connection as credit, and a file smaller than the queue came at full speed (0.1 s).
        try await withNginx { nginx in
            try await withTemporaryDirectory { work in
                let files = try Self.serveFiles(nginx, count: 4, size: 512 << 10, in: work) { nginx.url($0) }
                let out = try EndToEndTests.makeDirectory(work + "/out")
                let start = ContinuousClock.now
                let run = try await self.pinfetch(
                    ["-j", "4", "--max-connections-per-host", "1", "--limit-rate", "1M"]
                        + ["-i", work + "/list", "-P", out],
                    logs: work + "/run"
                )
                let seconds = Double((ContinuousClock.now - start).components.seconds)
                #expect(run.status == 0, EndToEndTests.explain(run, nginx))
                for (name, bytes) in files { #expect(HostileAnswerTests.holds(out + "/" + name, bytes), "\(name)") }
                #expect(seconds >= 1, "2 MiB at 1 MiB/s over one connection took \(seconds) s")
            }
        }
    }

    @Test func `a SIGINT stops files waiting for a connection before they connect`() async throws {
        try await withNginx { nginx in
            try await withTemporaryDirectory { work in
                _ = try Self.serveFiles(nginx, count: 20, size: 600 << 10, in: work) { nginx.slowURL($0) }
                let out = try EndToEndTests.makeDirectory(work + "/out")
                let child = try self.startPinfetch(
                    ["--json", "-j", "16", "--max-connections-per-host", "1", "-i", work + "/list", "-P", out],
                    logs: work + "/run"
                )
                try await Self.waitUntil("a file on its way", child) {  // whichever took the connection
                    ((try? FileManager.default.contentsOfDirectory(atPath: out)) ?? []).contains {
                        $0.hasSuffix(".part")
                    }
                }
                try await Task.sleep(for: .milliseconds(300))
                child.signal(SIGINT)
                try await child.wait(timeout: .seconds(10))
                #expect(child.result.status == 130, "\(child.transcript)")
                try await Task.sleep(for: .milliseconds(300))  // nginx logs a cut request once it notices
                // One file at a time was on the wire: the one cut, and perhaps one just done.
                #expect(nginx.requests.count <= 2, "requests after the SIGINT: \(nginx.log)")
                let partials = ((try? FileManager.default.contentsOfDirectory(atPath: out)) ?? [])
                    .filter { $0.hasSuffix(".part") }
                #expect(partials.count <= 1, "\(partials)")
                // The files that waited for the connection never started: `skipped`, as DESIGN.md says.
                let lines = child.standardOutput.split(separator: "\n")
                #expect(lines.count == 20)
                #expect(lines.filter { $0.contains(#""status":"skipped""#) }.count >= 18, "\(lines)")
            }
        }
    }
}

/// A loopback listener that never accepts: the kernel completes TCP handshakes into its backlog,
/// and nothing ever answers (a host whose TLS never starts).
struct Tarpit {
    let fd: Int32
    let port: Int

    /// A client connection that fills the backlog of a ``init(full:)`` tarpit.
    private var filler: Int32 = -1

    /// - Parameter full: Listen with a backlog of one and take that place: the kernel then
    ///   drops further SYNs, and connects time out (a host that drops connection attempts).
    init(full: Bool = false) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard fd >= 0, bound == 0, named == 0, listen(fd, full ? 0 : 64) == 0 else {
            throw ChildProcessError("tarpit: \(String(cString: strerror(errno)))")
        }
        self.fd = fd
        self.port = Int(UInt16(bigEndian: address.sin_port))
        if full {
            self.filler = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(self.filler, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard connected == 0 else { throw ChildProcessError("tarpit: \(String(cString: strerror(errno)))") }
        }
    }

    func close() {
        if self.filler >= 0 { _ = Glibc.close(self.filler) }
        _ = Glibc.close(self.fd)
    }
}
