import Foundation
@preconcurrency import Glibc
import Testing

/// A batch's files share their hosts' connections (real nginx): files queued for a dead host give
/// up together and go to their next mirror, files for a host with room never wait behind another
/// host's, `--limit-rate` holds for queued files and for HTTP/2 streams, a kept-alive connection
/// never cuts an answer, and a SIGINT stops the files still waiting.
extension ProcessTests {
    /// Busy server: forty files of 4 MiB over sixteen kept-alive connections.
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

    /// Dead host: a first mirror that completes TCP handshakes and never answers the TLS one.
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

    /// Dead host: a first mirror whose full backlog drops every connection attempt.
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

    /// Busy host: six slow files on localhost beside twenty small ones on 127.0.0.1, two connections each.
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

    /// User input: a --limit-rate of 1 MiB/s for four files queued for one connection.
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

    /// User input: --limit-rate 400K and --stall-timeout 2 for two HTTP/2 streams of one connection.
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

    /// Signal: a SIGINT while one file has the connection and nineteen wait for it.
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
                // The files that waited for the connection never started: `skipped`.
                let lines = child.standardOutput.split(separator: "\n")
                #expect(lines.count == 20)
                #expect(lines.filter { $0.contains(#""status":"skipped""#) }.count >= 18, "\(lines)")
            }
        }
    }
}
