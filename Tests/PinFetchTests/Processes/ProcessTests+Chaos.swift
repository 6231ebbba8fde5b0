import Foundation
@preconcurrency import Glibc
import Synchronization
import Testing

@testable import PinFetch

/// Kills and signals: a kill loses at most what came since the last light checkpoint; a power loss
/// that damages the end of `.part` never gets a wrong byte counted; a stop signal is never lost,
/// however early it comes, and ends a long re-hash at once.
extension ProcessTests {
    static let mebibyte = 1 << 20

    /// 20 runs, each on its own destination, killed at one moment of a download throttled to
    /// 6 MB/s (16 of them 0.1-1.9 s in, 4 of them 1-4 s into a stall after 6 MB), each followed
    /// by a rerun at full speed, pinned or not in turn. Every rerun ends with the right bytes and
    /// resumes exactly where the checkpoints said, at most 8 MiB before the end of `.part` at the
    /// kill; in a stall, at most 1 MiB before the bytes received before it.
    @Test func `SIGKILL at 20 moments, stalls included: every rerun keeps what was received`() async throws {
        let content = Self.pseudoRandomContent(16 << 20, seed: 0x6368_616f)
        let digest = Fixtures.sha256(content)
        let stallAt = 6_000_000
        let moments: [(seconds: Double, stall: Bool)] =
            (0..<16).map { (0.1 + Double($0) * 0.12, false) } + [1.0, 2.0, 3.0, 4.0].map { ($0, true) }
        try await withTestHTTPServer(serving: TestResource(body: content, etag: "\"chaos-v1\"")) { server in
            try await withTemporaryDirectory { work in
                var history: [String] = []
                for (index, moment) in moments.enumerated() {
                    let round = try EndToEndTests.makeDirectory(work + "/round-\(index)")
                    let destination = round + "/file.bin"
                    let pin = index.isMultiple(of: 2) ? ["--sha256", digest] : []
                    let arguments = pin + ["-o", destination, server.url()]
                    server.faults = TestFaults(
                        bytesPerSecond: 6_000_000,
                        stallAfterBodyBytes: moment.stall ? stallAt : nil
                    )
                    let sentBefore = server.bodyBytesSent
                    let child = try self.startPinfetch(arguments, logs: round + "/killed")
                    defer { child.stop() }
                    if moment.stall {
                        try await Self.waitUntil("the stall", child) { server.bodyBytesSent - sentBefore >= stallAt }
                    }
                    try await Task.sleep(for: .seconds(moment.seconds))
                    child.signal(SIGKILL)
                    let ended = try await child.wait(timeout: .seconds(20))
                    let left = Self.Snapshot(destination)
                    let kept = left.partial?.count ?? 0

                    server.faults = TestFaults()
                    let rerun = try await self.pinfetch(arguments, logs: round + "/rerun")
                    let resumed = rerun.int("resumed_from") ?? -1
                    history.append(
                        String(
                            format: "round %2d: %@ %.2f s, ",
                            index,
                            moment.stall ? "stall" : "kill at",
                            moment.seconds
                        )
                            + "\(ended), \(left); rerun resumed from \(resumed), rehashed \(rerun.int("rehashed_bytes") ?? -1)"
                    )
                    let why = Comment(rawValue: (history + [rerun.standardError]).joined(separator: "\n"))
                    #expect(ended == .signalled(SIGKILL), why)
                    #expect(rerun.status == 0, why)
                    #expect(rerun.string("sha256") == digest, why)
                    #expect(contents(destination).map { Self.equal(Data($0), content) } == true, why)
                    #expect(resumed == left.checkpointOffset ?? 0, why)
                    // The same boot: the light record is trusted after its tail check, nothing hashed again.
                    #expect(rerun.int("rehashed_bytes") == 0, why)
                    #expect(resumed >= kept - 8 * Self.mebibyte && resumed <= kept, why)
                    if moment.stall { #expect(resumed >= stallAt - Self.mebibyte, why) }
                    #expect(EndToEndTests.leftovers(round).filter { $0.hasPrefix("file.bin") } == ["file.bin"], why)
                }
            }
        }
    }

    /// A power loss can leave the end of `.part` zeroed although a light checkpoint covers it
    /// (the bytes were written, never made durable). Simulated: a run stopped with SIGTERM (a
    /// durable checkpoint), a second one killed 1.2 s later (light checkpoints past it), the last
    /// 2 MiB of `.part` overwritten with zeros, and the light record made another boot's (a
    /// power loss is one). The unpinned rerun finds that the light span does not hash to its
    /// record, cuts back to the durable checkpoint, and ends with exactly the file.
    @Test func `a power loss that zeroed the end of the partial never gets a wrong byte counted`() async throws {
        let content = Self.pseudoRandomContent(16 << 20, seed: 0x706f_7765)
        let digest = Fixtures.sha256(content)
        try await withTestHTTPServer(serving: TestResource(body: content, etag: "\"power-v1\"")) { server in
            try await withTemporaryDirectory { work in
                let downloads = try EndToEndTests.makeDirectory(work + "/downloads")
                let destination = downloads + "/file.bin"
                let partial = destination + ".part"
                let arguments = ["-o", destination, server.url()]
                server.faults = TestFaults(bytesPerSecond: 6_000_000)

                let first = try self.startPinfetch(arguments, logs: work + "/first")
                defer { first.stop() }
                try await Task.sleep(for: .seconds(1))
                first.signal(SIGTERM)
                #expect(try await first.wait(timeout: .seconds(20)) == .exited(143), "\(first.transcript)")
                let durable = try #require(Self.Snapshot(destination).durableOffset, "\(first.transcript)")

                let second = try self.startPinfetch(arguments, logs: work + "/second")
                defer { second.stop() }
                try await Task.sleep(for: .seconds(1.2))
                second.signal(SIGKILL)
                #expect(try await second.wait(timeout: .seconds(20)) == .signalled(SIGKILL), "\(second.transcript)")
                let left = Self.Snapshot(destination)
                let light = try #require(left.lightOffset, "\(left)")
                let size = try #require(Self.fileSize(partial))
                let zeroedFrom = size - 2 * Self.mebibyte
                #expect(zeroedFrom > durable, "\(left)")
                let handle = try #require(FileHandle(forUpdatingAtPath: partial))
                try handle.seek(toOffset: UInt64(zeroedFrom))
                handle.write(Data(count: 2 * Self.mebibyte))
                try handle.close()
                try simulateReboot(stateFile: destination + ".part.state")

                server.faults = TestFaults()
                let rerun = try await self.pinfetch(arguments, logs: work + "/rerun")
                let why: Comment = "durable \(durable), \(left), zeroed from \(zeroedFrom)\n\(rerun.standardOutput)"
                #expect(rerun.status == 0, why)
                #expect(rerun.string("sha256") == digest, why)
                #expect(contents(destination).map { Self.equal(Data($0), content) } == true, why)
                // The light span is hashed to find out; it holds zeros unless the last light
                // checkpoint was more than 2 MiB before the end (then nothing it covers was zeroed).
                let expected = light > zeroedFrom ? durable : light
                #expect(rerun.int("resumed_from") == expected, why)
                #expect(rerun.int("rehashed_bytes") == light - durable, why)
                #expect(server.getRequests.last?.header("Range") == "bytes=\(expected)-", why)
            }
        }
    }

    /// What a kill costs, measured end to end with nginx: 64 MiB at 24 MiB/s (`limit_rate`), killed
    /// at about 30 MiB; the rerun resumes at 22 MiB or more.
    @Test func `nginx at 24 MiB/s: killed at 30 MiB, the rerun resumes at 22 MiB or more`() async throws {
        let content = Self.pseudoRandomContent(64 << 20, seed: 0x6e67_696e)
        try await withNginx { nginx in
            try nginx.serve(content, as: "big")
            try await withTemporaryDirectory { work in
                let downloads = try EndToEndTests.makeDirectory(work + "/downloads")
                let destination = downloads + "/big"
                let partial = destination + ".part"
                let arguments = ["--sha256", Fixtures.sha256(content), "-o", destination, nginx.slowURL("big")]
                let first = try self.startPinfetch(Nginx.at24MiBPerSecond + arguments, logs: work + "/first")
                defer { first.stop() }
                try await Self.waitUntil("30 MiB in \(partial)", first) {
                    EndToEndTests.size(of: partial) >= 30 * Self.mebibyte
                }
                first.signal(SIGKILL)
                #expect(try await first.wait(timeout: .seconds(20)) == .signalled(SIGKILL), "\(first.transcript)")
                let kept = EndToEndTests.size(of: partial)

                let second = try await self.pinfetch(Nginx.unthrottled + arguments, logs: work + "/second")
                let why = "kept \(kept)\n\(EndToEndTests.explain(second, nginx))"
                #expect(second.status == 0, "\(why)")
                #expect(second.string("status") == "resumed", "\(why)")
                #expect((second.int("resumed_from") ?? 0) >= 22 * Self.mebibyte, "\(why)")
                #expect(contents(destination).map { Self.equal(Data($0), content) } == true, "\(why)")
                #expect(nginx.requests.last?.range == "bytes=\(second.int("resumed_from") ?? -1)-", "\(why)")
            }
        }
    }

    /// A signal while a partial of gigabytes is hashed again (a checkpoint from another OpenSSL)
    /// ends the run within a piece of 1 MiB, not once the hash is done, with the partial and its
    /// checkpoint as they were.
    @Test func `a signal during a long re-hash ends the run at once and keeps the partial`() async throws {
        try await withTemporaryDirectory { work in
            let downloads = try EndToEndTests.makeDirectory(work + "/downloads")
            let destination = downloads + "/file.bin"
            let size: Int64 = 8 << 30  // sparse: nothing on disk, hashed at a few GB/s
            let fd = open(destination + ".part", O_WRONLY | O_CREAT, 0o644)
            #expect(fd >= 0 && ftruncate(fd, off_t(size)) == 0)
            close(fd)
            let record = Checkpoint(
                url: "http://127.0.0.1:9/file.bin",
                validator: Validator(entityTag: "\"v1\"", lastModified: nil),
                totalLength: size * 2,
                offset: size,
                algorithm: .sha256,
                hashState: [UInt8](repeating: 0, count: RunningDigest.stateSize(of: .sha256)),
                hashStateSize: RunningDigest.stateSize(of: .sha256),
                libraryVersion: RunningDigest.libraryVersion &+ 1  // another OpenSSL: hashed again from 0
            )
            try Data(record.encoded()).write(to: URL(filePath: destination + ".part.state"))
            let state = try #require(contents(destination + ".part.state"))
            let child = try self.startPinfetch(["-o", destination, record.url], logs: work + "/run")
            defer { child.stop() }
            try await Task.sleep(for: .milliseconds(300))
            #expect(child.isRunning, "\(child.transcript)")  // still hashing 8 GiB
            let signalled = ContinuousClock.now
            child.signal(SIGTERM)
            let ended = try await child.wait(timeout: .seconds(30))
            let took = ContinuousClock.now - signalled
            #expect(ended == .exited(143), "\(child.transcript)")
            #expect(took < .seconds(1), "\(took)")
            #expect(Self.fileSize(destination + ".part") == Int(size))
            let unchanged = contents(destination + ".part.state") == state  // (a Bool: no byte dump on failure)
            #expect(unchanged)
        }
    }

    /// Signal: a SIGINT 0 to 25 ms after the start, before or while pinfetch sets up its watcher,
    /// with two busy processes beside it (a loaded machine stretches every window of the start).
    @Test func `a SIGINT in the first milliseconds is never lost`() async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let busy = try (0..<2).map { index in
                    try ChildProcess("/bin/sh", ["-c", "while :; do :; done"], logs: "\(directory)/busy\(index)")
                }
                defer { for process in busy { process.stop() } }
                for step in 0..<100 {
                    let child = try ChildProcess(
                        try EndToEndTests.pinfetchExecutable(),
                        EndToEndTests.quiet + ["--limit-rate", "50K", "-o", "\(directory)/o\(step)", server.url()],
                        logs: "\(directory)/log\(step)"
                    )
                    defer { child.stop() }
                    try await Task.sleep(for: .microseconds(step * 250))
                    child.signal(SIGINT)
                    let ended = try await child.wait(timeout: .seconds(10))  // 1 MiB at 50 KiB/s: 20 s
                    let early = "after \(Double(step) / 4) ms: \(ended)"
                    #expect(ended == .exited(130) || ended == .signalled(SIGINT), "\(early)")
                }
            }
        }
    }

    /// Signal: SIGTERM or SIGINT while the GET waits for its answer, which then comes at once,
    /// with three busy processes beside it: the thread that takes the signal may run after the
    /// body came and was verified, so the download asks for pending signals itself before the
    /// rename. Each run ends with 130/143 and nothing placed.
    @Test func `a stop signal while the answer is held is never lost under load`() async throws {
        let release = Mutex<Bool>(false)
        try await withTestHTTPServer(serving: TestResource(body: Fixtures.b)) { server in
            server.handler = { _, _ in
                let deadline = ContinuousClock.now + .seconds(10)
                while !release.withLock({ $0 }), ContinuousClock.now < deadline { usleep(1000) }
                return nil  // the resource, at once
            }
            try await withTemporaryDirectory { directory in
                let busy = try (0..<3).map { index in
                    try ChildProcess("/bin/sh", ["-c", "while :; do :; done"], logs: "\(directory)/busy\(index)")
                }
                defer { for process in busy { process.stop() } }
                for step in 0..<20 {
                    release.withLock { $0 = false }
                    let asked = server.getRequests.count
                    let output = "\(directory)/o\(step)"
                    let child = try ChildProcess(
                        try EndToEndTests.pinfetchExecutable(),
                        EndToEndTests.quiet + ["-o", output, server.url()],
                        logs: "\(directory)/log\(step)"
                    )
                    defer { child.stop() }
                    try await Self.waitUntil("the GET", child) { server.getRequests.count > asked }
                    let stop = step % 2 == 0 ? SIGTERM : SIGINT
                    child.signal(stop)
                    release.withLock { $0 = true }
                    let ended = try await child.wait(timeout: .seconds(30))
                    #expect(ended == .exited(128 + stop), "run \(step): \(child.transcript)")
                    #expect(!FileManager.default.fileExists(atPath: output), "run \(step)")
                }
            }
        }
    }
}
