import Foundation
@preconcurrency import Glibc
import Testing

/// What a batch says at its end, read by a person: after a stop signal, how many files are
/// resumable and that a rerun continues them (not "0 of 3 files ok, 3 failed").
extension ProcessTests {
    @Test func `an interrupted batch counts its resumable files, and the rerun continues them`() async throws {
        try await withNginx { nginx in
            // Three files of their own bytes: one pin for all would make the others copies of the first.
            let bodies = ["a": Fixtures.a, "b": Fixtures.b, "c": Array(Fixtures.a.reversed())]
            for (name, body) in bodies { try nginx.serve(body, as: name) }
            try await withTemporaryDirectory { work in
                let downloads = try EndToEndTests.makeDirectory(work + "/downloads")
                let manifest = work + "/manifest"
                try ["a", "b", "c"].map { "\(nginx.slowURL($0)) sha256:\(Fixtures.sha256(bodies[$0]!)) \($0)" }
                    .joined(separator: "\n").write(toFile: manifest, atomically: true, encoding: .utf8)
                let arguments = ["-j", "2", "-P", downloads, "-i", manifest]
                let first = try self.startPinfetch(["--retries", "0"] + arguments, logs: work + "/first")
                defer { first.stop() }
                try await Self.waitUntil("bytes in two partials", first) {
                    EndToEndTests.size(of: downloads + "/a.part") > 0
                        && EndToEndTests.size(of: downloads + "/b.part") > 0
                }
                first.signal(SIGINT)
                let ended = try await first.wait(timeout: .seconds(20))
                #expect(ended == .exited(130), "\(first.transcript)")
                #expect(
                    first.transcript.contains(
                        "pinfetch: interrupted: 0 of 3 files ok, 2 resumable, 1 not started, "
                    ),
                    "\(first.transcript)"
                )
                #expect(first.transcript.contains("downloaded: a rerun of the same command continues"))
                // Each file the signal caught says how far it got, by name, not by URL and byte.
                for name in ["a", "b"] {
                    let line = try Regex("pinfetch: \(name): interrupted at [0-9.]+ [KM]iB.*, resumable")
                    #expect(first.transcript.contains(line), "\(first.transcript)")
                }
                let second = try await self.pinfetch(Nginx.unthrottled + arguments, logs: work + "/second")
                #expect(second.status == 0, "\(second.standardError)")
                #expect(second.standardError.isEmpty, "-q: nothing on success: \(second.standardError)")
                for name in ["a", "b", "c"] {
                    let same = contents(downloads + "/" + name) == bodies[name]
                    #expect(same, "\(name)")
                }
            }
        }
    }
}
