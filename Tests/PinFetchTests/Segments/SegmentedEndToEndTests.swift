import Foundation
@preconcurrency import Glibc
import Testing

@testable import PinFetch

/// `--segments` against real nginx: a segmented download killed with SIGKILL resumes
/// with the pieces its checkpoint lists, fetching only what is missing.
extension ProcessTests {
    @Test func `a segmented download killed with SIGKILL resumes, keeping the pieces its checkpoint lists`()
        async throws
    {
        try await withNginx { nginx in
            try await withTemporaryDirectory { work in
                let body = Self.pseudoRandomContent(16 << 20, seed: 1414)
                try nginx.serve(body, as: "big.bin")
                let out = try EndToEndTests.makeDirectory(work + "/out")
                let output = out + "/big.bin"
                // 200 KiB/s per connection at /slow/: four connections, pieces of 1 MiB.
                let arguments = [
                    "--json", "--segments", "4", "--segment-size", "1M", "--sha256", Fixtures.sha256(body), "-o",
                    output, nginx.slowURL("big.bin"),
                ]
                let first = try self.startPinfetch(arguments, logs: work + "/first")
                // The first durable checkpoint comes after 10 s (its period); it lists the pieces.
                try await Self.waitUntil("a durable checkpoint that lists pieces", first) {
                    !(CheckpointFile.read(output + ".part.state")?.durable.first?.spans ?? []).isEmpty
                }
                first.signal(SIGKILL)
                try await first.wait(timeout: .seconds(10))
                let records = try #require(CheckpointFile.read(output + ".part.state"))
                let record = try #require(records.durable.first)
                // The resume starts at the durable record, or at a light one past it.
                let start = max(record.offset, records.light?.offset ?? 0)
                #expect(!(record.spans ?? []).isEmpty)
                #expect(!FileManager.default.fileExists(atPath: output))

                let logged = nginx.requests.count
                let second = try await self.pinfetch(Nginx.unthrottled + arguments, logs: work + "/second")
                #expect(second.status == 0, EndToEndTests.explain(second, nginx))
                #expect(contents(output) == body)
                let line = try #require(second.lines.first)
                #expect(line["status"] as? String == "resumed")
                let resumedFrom = (line["resumed_from"] as? NSNumber)?.int64Value ?? -1
                let downloaded = (line["downloaded_bytes"] as? NSNumber)?.int64Value ?? -1
                let rehashed = (line["rehashed_bytes"] as? NSNumber)?.int64Value ?? -1
                // What the record lists past the piece the resume streams was read back into the
                // hash, never fetched again (every segment went on from where it stopped), and
                // counts as earlier data kept: resumed + downloaded make the file.
                let leadEnd = (start / (1 << 20) + 1) * (1 << 20)
                let kept = (record.spans ?? []).reduce(Int64(0)) { $0 + max(0, $1[1] - max($1[0], leadEnd)) }
                #expect(kept > 0, "\(String(describing: record.spans)) past \(start)")
                #expect(resumedFrom == start + kept, "kept \(kept): \(line)")
                #expect(downloaded == Int64(body.count) - resumedFrom, "kept \(kept): \(line)")
                #expect(rehashed >= kept, "kept \(kept): \(line)")
                #expect(rehashed <= kept + (start - record.offset), "kept \(kept): \(line)")
                let rerun = nginx.requests.dropFirst(logged).filter { $0.method == "GET" }
                #expect(rerun.allSatisfy { $0.status == 206 }, "\(nginx.log)")
                #expect(rerun.count >= 2, "\(nginx.log)")
                #expect(listing(out) == ["big.bin"])
            }
        }
    }

    /// Segments ask over HTTP/1.1 on connections of their own, next to the HTTP/2 connection the
    /// first answer came on; `--max-connections-per-host` counts them all.
    @Test(arguments: [2, 8])
    func `segments from an HTTP/2 origin count toward --max-connections-per-host`(limit: Int) async throws {
        try await Self.withHTTPSNginx { nginx, authority, work in
            let body = Self.pseudoRandomContent(3 << 20, seed: 1415)
            try nginx.serve(body, as: "big.bin")
            let output = work + "/big.bin"
            // 200 KiB/s per connection at /slow/: every connection added pays.
            let run = try await self.pinfetch(
                [
                    "--cacert", authority.certificate, "--segments", "4", "--segment-size", "256K",
                    "--max-connections-per-host", "\(limit)", "--sha256", Fixtures.sha256(body), "-o", output,
                    nginx.httpsURL("slow/big.bin"),
                ],
                logs: work + "/run"
            )
            #expect(run.status == 0, EndToEndTests.explain(run, nginx))
            #expect(contents(output) == body)
            // Connections carrying an answer at once (an idle kept one is not in use).
            let atOnce = Nginx.connectionsAtOnce(nginx.requests.filter { $0.method == "GET" })
            if limit == 2 {
                #expect(atOnce == 2, "\(nginx.log)")
            } else {
                #expect(atOnce >= 3, "\(nginx.log)")  // so the bound above was the limit's doing
            }
        }
    }
}
