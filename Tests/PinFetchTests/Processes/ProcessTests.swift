import Foundation
@preconcurrency import Glibc
import Testing

/// The real `pinfetch` executable as people run it: over HTTPS against nginx with a certificate
/// made for the test, killed (`SIGKILL`) at random moments, racing a second process for one
/// destination, and stopped with `SIGINT`. Every child runs with `--no-cache` (``EndToEndTests/quiet``).
///
/// Needs `/usr/sbin/nginx` (`nginx-light`) and `/usr/bin/openssl`; `.ci/run` installs both.
/// `PINFETCH_SKIP_E2E=1` skips the suite; `PINFETCH_KILL_SEED=N` replays the kill test's moments.
/// Serialized: the kill and lock tests measure time, and the machine has two cores.
@Suite(
    .enabled(if: ProcessInfo.processInfo.environment["PINFETCH_SKIP_E2E"] != "1", "PINFETCH_SKIP_E2E=1"),
    .serialized,
    .timeLimit(.minutes(3))
)
struct ProcessTests {
    // MARK: - HTTPS

    @Test(arguments: ["127.0.0.1", "localhost"])
    func `HTTPS with --cacert trusts the test CA and fetches the file`(host: String) async throws {
        try await Self.withHTTPSNginx { nginx, authority, work in
            let downloads = try EndToEndTests.makeDirectory(work + "/downloads")
            let destination = downloads + "/file"
            let run = try await self.pinfetch(
                ["--cacert", authority.certificate, "--sha256", Fixtures.sha256A, "-o", destination]
                    + [nginx.httpsURL("file", host: host)],
                logs: work + "/run"
            )
            let why = EndToEndTests.explain(run, nginx)
            #expect(run.status == 0, why)
            #expect(run.string("status") == "downloaded", why)
            #expect(run.string("sha256") == Fixtures.sha256A, why)
            #expect(run.int("bytes") == Fixtures.a.count, why)
            #expect(contents(destination) == Fixtures.a, why)
            #expect(EndToEndTests.leftovers(downloads) == ["file"], why)
            #expect(nginx.requests.map(\.method) == ["GET"], why)  // no partial: no HEAD
            #expect(nginx.requests.last?.bodyBytes == Fixtures.a.count, why)
        }
    }

    /// The system trust store does not know the test CA: libcurl refuses the handshake, so no
    /// HTTP request reaches nginx and nothing (not even the lock file) stays in the directory.
    @Test func `HTTPS without the test CA fails verification with exit 5 and creates nothing`() async throws {
        try await Self.withHTTPSNginx { nginx, _, work in
            let downloads = try EndToEndTests.makeDirectory(work + "/downloads")
            let run = try await self.pinfetch(
                ["--sha256", Fixtures.sha256A, "-o", downloads + "/file", nginx.httpsURL("file")],
                logs: work + "/run"
            )
            let why = EndToEndTests.explain(run, nginx)
            #expect(run.status == 5, why)
            #expect(run.standardError.lowercased().contains("certificate"), why)  // libcurl's own words
            #expect(run.standardError.contains("--cacert FILE (or set CURL_CA_BUNDLE)"), why)  // and the fix
            #expect(run.string("status") == "failed", why)
            let error = run.json["error"] as? [String: Any]
            #expect((error?["exit_code"] as? NSNumber)?.intValue == 5, why)
            #expect((error?["message"] as? String)?.lowercased().contains("certificate") == true, why)
            #expect(listing(downloads).isEmpty, why)
            #expect(nginx.requests.isEmpty, why)
        }
    }

    /// `https://…/to-http/file` answers 302 to `http://127.0.0.1:<port>/file`: refused (exit 7,
    /// before any plain-text request) unless `--allow-insecure-redirect` says otherwise.
    @Test func `a redirect from HTTPS to HTTP needs --allow-insecure-redirect`() async throws {
        try await Self.withHTTPSNginx { nginx, authority, work in
            let refusedDirectory = try EndToEndTests.makeDirectory(work + "/refused")
            let arguments = ["--cacert", authority.certificate, "--sha256", Fixtures.sha256A]
            let url = nginx.httpsURL("to-http/file")
            let refused = try await self.pinfetch(
                arguments + ["-o", refusedDirectory + "/file", url],
                logs: work + "/refused"
            )
            var why = EndToEndTests.explain(refused, nginx)
            #expect(refused.status == 7, why)
            #expect(refused.standardError.contains("--allow-insecure-redirect"), why)
            #expect(((refused.json["error"] as? [String: Any])?["exit_code"] as? NSNumber)?.intValue == 7, why)
            #expect(listing(refusedDirectory).isEmpty, why)
            #expect(!nginx.requests.isEmpty, why)
            #expect(nginx.requests.allSatisfy { $0.path == "/to-http/file" && $0.status == 302 }, why)

            let allowedDirectory = try EndToEndTests.makeDirectory(work + "/allowed")
            let allowed = try await self.pinfetch(
                arguments + ["--allow-insecure-redirect", "-o", allowedDirectory + "/file", url],
                logs: work + "/allowed"
            )
            why = EndToEndTests.explain(allowed, nginx)
            #expect(allowed.status == 0, why)
            #expect(allowed.string("sha256") == Fixtures.sha256A, why)
            #expect(contents(allowedDirectory + "/file") == Fixtures.a, why)
            #expect(EndToEndTests.leftovers(allowedDirectory) == ["file"], why)
            let plain = nginx.requests.filter { $0.path == "/file" }
            #expect(plain.contains { $0.method == "GET" && $0.status == 200 && $0.bodyBytes == Fixtures.a.count }, why)
        }
    }

    // MARK: - SIGKILL at random moments

    /// 20 runs on one destination, each killed after a random delay, then one that may finish.
    ///
    /// The server sends 16 MiB at 2 MB/s with a strong ETag. pinfetch takes a light checkpoint
    /// every half second and a durable one every 10 s, so every round of more than half a second
    /// leaves one; four rounds, at random places, wait 1.9-2.5 s (for a run that starts 12 MiB in,
    /// about the commit, which some finish). The others wait 0-0.8 s (start-up, `HEAD`, the bytes
    /// after a checkpoint, the first light checkpoint). About 16 s in all.
    ///
    /// While a run goes and after each kill: the destination is absent or exactly right, `.part` is
    /// a prefix of the file, and no checkpoint covers more than `.part` holds nor moves backwards.
    /// The last run, at full speed, resumes from the last checkpoint, hashing again only the light
    /// span (or finds the file complete). The seed is in every failure message;
    /// `PINFETCH_KILL_SEED=N` replays the delays.
    @Test func `SIGKILL at 20 random moments never leaves a wrong byte`() async throws {
        let seed =
            ProcessInfo.processInfo.environment["PINFETCH_KILL_SEED"].flatMap { UInt64($0) }
            ?? UInt64.random(in: 0...UInt64.max)
        var random = SeededGenerator(state: seed)
        let content = Self.pseudoRandomContent(16 << 20, seed: 0x6b69_6c6c)
        let digest = Fixtures.sha256(content)
        let clock = ContinuousClock()
        let started = clock.now
        try await withTestHTTPServer(serving: TestResource(body: content, etag: "\"kill-v1\"")) { server in
            server.faults = TestFaults(bytesPerSecond: 2_000_000)
            try await withTemporaryDirectory { work in
                let downloads = try EndToEndTests.makeDirectory(work + "/downloads")
                let destination = downloads + "/file.bin"
                let arguments = ["--sha256", digest, "-o", destination, server.url()]
                var history: [String] = []
                func why(_ more: String = "") -> Comment {
                    let lines = ["seed \(seed) (replay with PINFETCH_KILL_SEED=\(seed))"] + history + [more]
                    return Comment(rawValue: lines.joined(separator: "\n"))
                }
                var lastCheckpoint = 0
                var longRounds = Array(repeating: true, count: 4) + Array(repeating: false, count: 16)
                longRounds.shuffle(using: &random)
                for (index, long) in longRounds.enumerated() {
                    let round = index + 1
                    let delay = Double.random(in: long ? 1.9...2.5 : 0...0.8, using: &random)
                    let child = try self.startPinfetch(arguments, logs: work + "/run-\(round)")
                    defer { child.stop() }
                    let deadline = clock.now + .seconds(delay)
                    while clock.now < deadline, child.isRunning {
                        if let violation = Self.checkpointViolation(destination, content: nil) {
                            Issue.record(why("round \(round), while running: \(violation)"))
                        }
                        try await Task.sleep(for: .milliseconds(10))
                    }
                    child.signal(SIGKILL)
                    let ended = try await child.wait(timeout: .seconds(20))
                    let state = Self.Snapshot(destination)
                    history.append(
                        String(format: "round %2d: kill after %.3f s: ", round, delay) + "\(ended), \(state)"
                    )
                    let transcript = why(child.transcript)
                    #expect(ended == .signalled(SIGKILL) || ended == .exited(0), transcript)
                    if ended == .exited(0) { #expect(child.result.string("sha256") == digest, transcript) }
                    if let bytes = state.destination {
                        #expect(Self.equal(bytes, content), transcript)
                    }
                    if let violation = Self.checkpointViolation(destination, content: content) {
                        Issue.record(why("round \(round), after the kill: \(violation)"))
                    }
                    if state.destination == nil, let offset = state.checkpointOffset {
                        #expect(offset >= lastCheckpoint, transcript)  // a kill never loses a checkpoint
                        lastCheckpoint = offset
                    }
                }

                // The last run at full speed: it resumes from the last checkpoint, if any.
                server.faults = TestFaults()
                let before = Self.Snapshot(destination)
                let requestsBefore = server.requests.count
                let final = try await self.pinfetch(arguments, logs: work + "/final")
                let seconds = (clock.now - started).components.seconds
                let message = why("final run (\(seconds) s in all): status \(final.status)\n\(final.standardOutput)")
                #expect(final.status == 0, message)
                #expect(final.string("sha256") == digest, message)
                #expect(final.int("bytes") == content.count, message)
                #expect(contents(destination).map { Self.equal(Data($0), content) } == true, message)
                let leftovers = EndToEndTests.leftovers(downloads)
                #expect(leftovers == ["file.bin"], message)
                if before.destination != nil {
                    #expect(final.string("status") == "already-complete", message)
                } else if let offset = before.checkpointOffset {
                    #expect(offset > 0, message)
                    #expect(final.string("status") == "resumed", message)
                    #expect(final.int("resumed_from") == offset, message)
                    #expect(final.int("rehashed_bytes") == 0, message)  // the same boot: nothing hashed again
                    #expect(final.int("downloaded_bytes") == content.count - offset, message)
                    let resume = server.getRequests.last
                    #expect(resume?.header("Range") == "bytes=\(offset)-", message)
                    #expect(resume?.header("If-Range") == "\"kill-v1\"", message)
                } else {
                    #expect(final.string("status") == "downloaded", message)
                    #expect(final.int("resumed_from") == 0, message)
                }
                #expect(server.requests.count - requestsBefore <= 2, message)  // HEAD and one GET at most
            }
        }
    }

    /// A version before the checkpoint slots, killed between the creation of
    /// `<dest>.part.state.tmp` and its `rename`, left the temporary file behind; the next run
    /// removes it (after a success only `<dest>` remains). Planted here, as such a
    /// kill leaves it.
    @Test func `a success removes a checkpoint temporary that a killed run left`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: Fixtures.a, etag: Fixtures.etagA)) { server in
            try await withTemporaryDirectory { work in
                let downloads = try EndToEndTests.makeDirectory(work + "/downloads")
                let destination = downloads + "/file.bin"
                try Data("pinfetch-checkpoint 1\n{\"off".utf8).write(to: URL(filePath: destination + ".part.state.tmp"))
                let run = try await self.pinfetch(
                    ["--sha256", Fixtures.sha256A, "-o", destination, server.url()],
                    logs: work + "/run"
                )
                #expect(run.status == 0, "\(run.standardError)")
                #expect(contents(destination) == Fixtures.a)
                #expect(EndToEndTests.leftovers(downloads) == ["file.bin"])
            }
        }
    }

    // MARK: - Two processes, one destination

    /// A downloads at 2 MB/s; B, started once A's `.part` exists, waits for A's lock without a
    /// request. A is killed after its first checkpoint; B takes the lock and resumes there.
    @Test func `a second process waits for the lock, then resumes after the first is killed`() async throws {
        let content = Self.pseudoRandomContent(8 << 20, seed: 0x6c6f_636b)
        let digest = Fixtures.sha256(content)
        try await withTestHTTPServer(serving: TestResource(body: content, etag: "\"lock-v1\"")) { server in
            server.faults = TestFaults(bytesPerSecond: 2_000_000)  // 4.2 s for A alone
            try await withTemporaryDirectory { work in
                let downloads = try EndToEndTests.makeDirectory(work + "/downloads")
                let destination = downloads + "/file.bin"
                let partial = destination + ".part"
                let arguments = ["--sha256", digest, "-o", destination, server.url()]

                let first = try self.startPinfetch(arguments, logs: work + "/first")
                defer { first.stop() }
                try await Self.waitUntil("A writes \(partial)", first) {
                    FileManager.default.fileExists(atPath: partial)
                }
                let second = try self.startPinfetch(arguments, logs: work + "/second")
                defer { second.stop() }
                try await Task.sleep(for: .milliseconds(500))
                var why: Comment {
                    "A: \(first.transcript)\nB: \(second.transcript)\nrequests: \(Self.describe(server))"
                }
                #expect(second.isRunning, why)
                #expect(first.isRunning, why)
                #expect(server.requests.map(\.method) == ["GET"], why)  // A's (no partial yet: no HEAD)

                // A's first (light) checkpoint comes half a second into its body: kill A after it,
                // and let B go at full speed. B may be done a few milliseconds after the kill, so
                // A's checkpoint is read just before it: B resumes there or a little later.
                let deadline = ContinuousClock.now + .seconds(30)
                while !FileManager.default.fileExists(atPath: partial + ".state"), first.isRunning,
                    ContinuousClock.now < deadline
                {
                    try await Task.sleep(for: .milliseconds(10))
                }
                let left = Self.Snapshot(destination)
                let checkpoint = left.checkpointOffset ?? 0
                #expect(Self.checkpointViolation(destination, content: content) == nil, "\(left)")
                #expect(left.destination == nil, why)
                #expect(second.isRunning, why)
                #expect(server.requests.count == 1, why)  // B is still waiting, without a request
                server.faults = TestFaults()
                first.signal(SIGKILL)
                #expect(try await first.wait(timeout: .seconds(20)) == .signalled(SIGKILL), why)

                try await second.wait(timeout: .seconds(60))
                let run = second.result
                let message: Comment = "\(left)\n\(why)"
                #expect(run.status == 0, message)
                #expect(run.string("sha256") == digest, message)
                #expect(run.int("bytes") == content.count, message)
                let resumed = run.int("resumed_from") ?? -1
                #expect(checkpoint > 0, message)
                #expect(resumed >= checkpoint, message)
                #expect(run.string("status") == "resumed", message)
                #expect(run.int("downloaded_bytes") == content.count - resumed, message)
                #expect(EndToEndTests.size(of: destination) == content.count, message)  // never twice the size
                #expect(contents(destination).map { Self.equal(Data($0), content) } == true, message)
                #expect(EndToEndTests.leftovers(downloads) == ["file.bin"], message)
                let gets = server.getRequests
                #expect(gets.count == 2, message)
                #expect(gets.first?.header("Range") == nil, message)
                #expect(gets.last?.header("Range") == "bytes=\(resumed)-", message)
            }
        }
    }

    /// A process waiting for another one's lock is interrupted like any other: `SIGINT` ends it
    /// with 130 and no request. The lock is held here with `flock`, as a running pinfetch holds it.
    @Test(arguments: [[], ["--lock-timeout", "30"]])
    func `SIGINT ends a process that waits for the lock with 130`(lockTimeout: [String]) async throws {
        try await withTestHTTPServer(serving: TestResource(body: Fixtures.a, etag: Fixtures.etagA)) { server in
            try await withTemporaryDirectory { work in
                let destination = try EndToEndTests.makeDirectory(work + "/downloads") + "/file.bin"
                let holder = open(destination + ".part.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
                try #require(holder >= 0 && flock(holder, LOCK_EX) == 0)
                defer { close(holder) }
                // The holder's partial: not the waiting run's to name.
                try Data(Fixtures.a.prefix(1000)).write(to: URL(fileURLWithPath: destination + ".part"))
                try Data("state".utf8).write(to: URL(fileURLWithPath: destination + ".part.state"))
                let waiting = try self.startPinfetch(
                    lockTimeout + ["--sha256", Fixtures.sha256A, "-o", destination, server.url()],
                    logs: work + "/waiting"
                )
                defer { waiting.stop() }
                try await Task.sleep(for: .milliseconds(500))
                #expect(waiting.isRunning, "\(waiting.transcript)")
                waiting.signal(SIGINT)
                let ended = try await waiting.wait(timeout: .seconds(3))
                #expect(ended == .exited(130), "\(waiting.transcript)")
                #expect(server.requests.isEmpty)
                // It never started: `skipped`, naming no partial.
                let line = waiting.standardOutput
                #expect(line.contains(#""status":"skipped""#), "\(line)")
                #expect(line.contains("not started: the run was interrupted"), "\(line)")
                #expect(line.contains(#""partial":null"#), "\(line)")
                #expect(contents(destination + ".part") == Array(Fixtures.a.prefix(1000)))
            }
        }
    }

    // MARK: - SIGINT

    /// Like ``EndToEndTests``' `SIGTERM` case: `SIGINT` makes pinfetch flush a checkpoint at its
    /// offset and exit 130, keeping `.part` and `.part.state`; the next run resumes from there.
    @Test(arguments: [SIGINT, SIGHUP])
    func `SIGINT or SIGHUP keeps the partial and its checkpoint, and the next run resumes`(
        signal: Int32
    )
        async throws
    {
        let size = Fixtures.a.count
        try await withNginx { nginx in
            try nginx.serve(Fixtures.a, as: "file")
            try await withTemporaryDirectory { work in
                let downloads = try EndToEndTests.makeDirectory(work + "/downloads")
                let destination = downloads + "/file"
                let partial = destination + ".part"
                let arguments = ["--sha256", Fixtures.sha256A, "-o", destination, nginx.slowURL("file")]

                let first = try self.startPinfetch(["--retries", "0"] + arguments, logs: work + "/first")
                defer { first.stop() }
                try await Self.waitUntil("30% of \(partial)", first) {
                    EndToEndTests.size(of: partial) >= size * 3 / 10
                }
                first.signal(signal)
                let ended = try await first.wait(timeout: .seconds(20))
                let interrupted = first.result
                #expect(ended == .exited(128 + signal), "\(first.transcript)")
                #expect(interrupted.string("status") == "failed", "\(first.transcript)")
                let error = interrupted.json["error"] as? [String: Any]
                #expect((error?["exit_code"] as? NSNumber)?.intValue == Int(128 + signal), "\(first.transcript)")
                #expect(!FileManager.default.fileExists(atPath: destination))
                #expect(EndToEndTests.leftovers(downloads) == ["file.part", "file.part.state"])
                let kept = EndToEndTests.size(of: partial)
                let left = Self.Snapshot(destination)
                #expect(left.checkpointOffset == kept, "\(left)")  // flushed at the offset on the signal
                #expect(kept >= size * 3 / 10 && kept < size, "\(left)")

                let second = try await self.pinfetch(Nginx.unthrottled + arguments, logs: work + "/second")
                let why = EndToEndTests.explain(second, nginx)
                #expect(second.status == 0, why)
                #expect(second.string("status") == "resumed", why)
                #expect(second.int("resumed_from") == kept, why)
                #expect(second.int("rehashed_bytes") == 0, why)
                #expect(second.int("downloaded_bytes") == size - kept, why)
                #expect(second.string("sha256") == Fixtures.sha256A, why)
                #expect(contents(destination) == Fixtures.a, why)
                #expect(EndToEndTests.leftovers(downloads) == ["file"], why)
                let ranged = nginx.requests.filter { $0.range != nil }
                #expect(ranged.count == 1, why)
                #expect(ranged.first?.range == "bytes=\(kept)-", why)
                #expect(ranged.first?.status == 206, why)
                #expect(ranged.first.map { $0.ifRange != nil && $0.ifRange == $0.etag } == true, why)
                #expect(ranged.first?.bodyBytes == size - kept, why)
            }
        }
    }

    @Test func `a signal while a remote checksum file downloads removes its temporary directory`() async throws {
        // The checksum file stalls after a few bytes, so the process is caught fetching it.
        let sums = Array("\(Fixtures.sha256A)  file\n".utf8) + Array(repeating: 0x20, count: 1 << 20)
        try await withTestHTTPServer(serving: TestResource(body: sums)) { server in
            server.faults = TestFaults(stallAfterBodyBytes: 10)
            try await withTemporaryDirectory { work in
                let temporary = try EndToEndTests.makeDirectory(work + "/tmp")
                let child = try self.startPinfetch(
                    ["--checksum-file", server.url("/SUMS"), "-o", work + "/file", server.url("/file")],
                    logs: work + "/run",
                    environment: ["TMPDIR": temporary]
                )
                defer { child.stop() }
                try await Self.waitUntil("a temporary directory in \(temporary)", child) {
                    !listing(temporary).isEmpty && !server.requests.isEmpty
                }
                child.signal(SIGTERM)
                let ended = try await child.wait(timeout: .seconds(20))
                #expect(ended == .exited(143), "\(child.transcript)")
                #expect(listing(temporary).isEmpty, "\(child.transcript)")
                #expect(!FileManager.default.fileExists(atPath: work + "/file"))
            }
        }
    }
}
