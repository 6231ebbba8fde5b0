import Foundation
@preconcurrency import Glibc
import Testing

@testable import PinFetch

/// Damaged, foreign and outgrown checkpoints: never trusted, and the pin still decides.
extension FetchTests {
    @Test(arguments: DamagedCheckpoint.allCases)
    func `a damaged checkpoint never crashes and never yields wrong bytes`(damage: DamagedCheckpoint) async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let cut = await self.interruptedRun(server, into: directory, at: 400_000)
                #expect(cut.error?.code == .network, "\(failure(cut))")
                let state = "\(directory)/out.bin.part.state"
                let original = try #require(contents(state))
                try Data(damage.apply(toStateFile: original)).write(to: URL(filePath: state))
                let result = await self.fetch(server, into: directory, pin: try Pin(sha256Hex: Fixtures.sha256A))
                #expect(result.error == nil, "\(failure(result))")
                #expect(server.requests.allSatisfy { $0.method == "GET" })  // nothing to decide: no HEAD
                #expect(contents("\(directory)/out.bin") == Fixtures.a)
                #expect(listing(directory) == ["out.bin"])
            }
        }
    }

    @Test func `bytes past the checkpoint are cut before resuming`() async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let cut = await self.interruptedRun(server, into: directory, at: 400_000)
                #expect(cut.error?.code == .network, "\(failure(cut))")
                let handle = try #require(FileHandle(forWritingAtPath: "\(directory)/out.bin.part"))
                handle.seekToEndOfFile()
                handle.write(Data(repeating: 0xEE, count: 5000))  // written but never checkpointed
                try handle.close()
                let result = await self.fetch(server, into: directory, pin: try Pin(sha256Hex: Fixtures.sha256A))
                #expect(result.error == nil, "\(failure(result))")
                #expect(server.getRequests.last?.header("Range") == "bytes=400000-")
                #expect(contents("\(directory)/out.bin") == Fixtures.a)
            }
        }
    }

    @Test(arguments: [true, false])
    func `a partial edited since its checkpoint is hashed again, never trusted`(pinned: Bool) async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let cut = await self.interruptedRun(server, into: directory, at: 400_000)
                #expect(cut.error?.code == .network, "\(failure(cut))")
                usleep(20_000)  // a later modification time than the checkpoint's, at any clock granularity
                let handle = try #require(FileHandle(forUpdatingAtPath: "\(directory)/out.bin.part"))
                try handle.seek(toOffset: 100)
                handle.write(Data("XXXX".utf8))  // in place: same size
                try handle.close()
                let result = await self.fetch(
                    server,
                    into: directory,
                    pin: pinned ? try Pin(sha256Hex: Fixtures.sha256A) : nil
                )
                #expect(result.error == nil, "\(failure(result))")
                #expect(result.rehashedBytes == 400_000)
                let file = try #require(contents("\(directory)/out.bin"))
                // The digest is of the bytes on disk.
                #expect(result.algorithm == .sha256 && result.digest == Fixtures.sha256(file))
                if pinned {
                    #expect(file == Fixtures.a)  // the mismatch started it over from byte 0
                    #expect(result.restarts == 1)
                }
            }
        }
    }

    /// The 64 KiB before a checkpoint's offset are checked on resume, so a tail that
    /// changed after the stop (a disk that lost acknowledged bytes, an edit in place) is caught
    /// without a pin, and the download starts over instead of splicing.
    @Test(arguments: [399_999, 400_000 - 65_536])
    func `a partial whose last 64 KiB changed is not resumed, even without a pin`(edited: Int) async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let cut = await self.interruptedRun(server, into: directory, at: 400_000)
                #expect(cut.error?.code == .network, "\(failure(cut))")
                let handle = try #require(FileHandle(forUpdatingAtPath: "\(directory)/out.bin.part"))
                try handle.seek(toOffset: UInt64(edited))
                handle.write(Data([~Fixtures.a[edited]]))
                try handle.close()
                let result = await self.fetch(server, into: directory)
                #expect(result.error == nil, "\(failure(result))")
                #expect(result.status == .downloaded)
                #expect(result.resumedFrom == 0)
                #expect(contents("\(directory)/out.bin") == Fixtures.a)
                #expect(server.getRequests.last?.header("Range") == nil)
            }
        }
    }

    /// A resume that cuts the partial (bytes past the checkpoint, after a kill) records the new
    /// size and mtime at once: a checkpoint that still described the partial before the cut would
    /// make the run after a kill before the first byte take the partial for edited and hash it all.
    @Test func `a resume that cuts the partial records its new size and mtime at once`() async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let cut = await self.interruptedRun(server, into: directory, at: 400_000)
                #expect(cut.error?.code == .network, "\(failure(cut))")
                let partial = "\(directory)/out.bin.part"
                let handle = try #require(FileHandle(forWritingAtPath: partial))
                handle.seekToEndOfFile()
                handle.write(Data(repeating: 0xEE, count: 5000))  // written, never checkpointed, then a kill
                try handle.close()
                server.faults = TestFaults(stallAfterBodyBytes: 0)
                let fetch = Task { await Fetcher().run(server.url(), to: "\(directory)/out.bin") }
                let deadline = ContinuousClock.now + .seconds(30)
                while server.getRequests.count < 2, ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(20))
                }
                // The run has cut the partial and is waiting for its first byte: a kill now
                // must leave a checkpoint that describes the partial as it is.
                let recorded = CheckpointFile.read(partial + ".state")?.durable.first
                let current = try PartialFile(path: partial, readOnly: true).identity()
                fetch.cancel()
                _ = await fetch.value
                #expect(server.getRequests.last?.header("Range") == "bytes=400000-")
                #expect(recorded?.offset == 400_000)
                #expect(recorded?.partialIdentity == current)
                #expect(current.size == 400_000)
            }
        }
    }

    @Test func `a checkpoint from another OpenSSL build is rehashed from disk once`() async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let cut = await self.interruptedRun(server, into: directory, at: 400_000)
                #expect(cut.error?.code == .network, "\(failure(cut))")
                try rewriteRecords(in: "\(directory)/out.bin.part.state") { $0.libraryVersion &+= 1 }
                let result = await self.fetch(server, into: directory, pin: try Pin(sha256Hex: Fixtures.sha256A))
                #expect(result.error == nil, "\(failure(result))")
                #expect(result.resumedFrom == 400_000)
                #expect(result.rehashedBytes == 400_000)
                #expect(contents("\(directory)/out.bin") == Fixtures.a)
            }
        }
    }

    @Test func `a resumed download that mismatches is retried once from byte 0`() async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let cut = await self.interruptedRun(server, into: directory, at: 400_000)
                #expect(cut.error?.code == .network, "\(failure(cut))")
                // A broken server: new bytes under the old ETag.
                server.resource = TestResource(body: Fixtures.b, etag: Fixtures.etagA)
                let result = await self.fetch(server, into: directory, pin: try Pin(sha256Hex: Fixtures.sha256B))
                #expect(result.error == nil, "\(failure(result))")
                #expect(contents("\(directory)/out.bin") == Fixtures.b)
                #expect(result.restarts == 1)
                #expect(server.getRequests.suffix(2).map { $0.header("Range") } == ["bytes=400000-", nil])
            }
        }
    }

    @Test func `a stalled transfer still takes both kinds of checkpoint once their periods have passed`() async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            server.faults = TestFaults(stallAfterBodyBytes: 400_000)
            try await withTemporaryDirectory { directory in
                var options = FetchOptions()
                options.stallTimeout = 120
                options.retries = 0
                options.durableCheckpointPeriod = 3
                let output = "\(directory)/out.bin"
                let fetch = Task { await Fetcher(options: options).run(server.url(), to: output) }
                // The 400,000 bytes arrive well inside the first periods; then nothing more comes.
                // They reach the hashing thread at libcurl's next progress call (at least once a
                // second when idle); the light checkpoint's timer has fired by then, and the
                // durable one's comes later. (A durable checkpoint leaves the light slot as it was.)
                // Its fsyncs wait behind whatever else the machine is writing back (CI's 5 GiB test
                // beside it held them past 15 s), so the wait is long; it ends as soon as one lands.
                let deadline = ContinuousClock.now + .seconds(90)
                var records: CheckpointFile.Records?
                while records?.durable.isEmpty ?? true, ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(50))
                    records = CheckpointFile.read(output + ".part.state")
                }
                let stalled = server.bodyBytesSent
                fetch.cancel()
                let result = await fetch.value
                #expect(records?.light?.offset == 400_000)
                #expect(records?.durable.first?.offset == 400_000)
                #expect(stalled == 400_000)
                #expect(result.error?.code == .cancelled)
            }
        }
    }

    /// A partial of one URL, then a run of the same destination from another URL that never
    /// answers: without a pin the partial cannot move there, but it stays resumable for its own.
    @Test func `a partial of another URL stays until an answer replaces it`() async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let cut = await self.interruptedRun(server, into: directory, at: 400_000)
                #expect(cut.error?.code == .network, "\(failure(cut))")
                try await Nginx.withRefusingPort { port in
                    let elsewhere = await Fetcher.immediate(retries: 0).run(
                        "http://127.0.0.1:\(port)/out.bin",
                        to: "\(directory)/out.bin"
                    )
                    #expect(elsewhere.error?.code == .network, "\(failure(elsewhere))")
                }
                #expect(FileSystem.size(of: "\(directory)/out.bin.part") == 400_000)
                let result = await self.fetch(server, into: directory)
                #expect(result.error == nil, "\(failure(result))")
                #expect(result.resumedFrom == 400_000)
                #expect(contents("\(directory)/out.bin") == Fixtures.a)
            }
        }
    }

    /// The same, when the other URL answers: its body replaces the partial from byte 0, and the
    /// run says why by default (a changed query string would otherwise rehash silently).
    @Test func `an answer from another URL replaces the partial from byte 0`() async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTestHTTPServer(serving: TestResource(body: Fixtures.b, etag: Fixtures.etagB)) { other in
                try await withTemporaryDirectory { directory in
                    let cut = await self.interruptedRun(server, into: directory, at: 400_000)
                    #expect(cut.error?.code == .network, "\(failure(cut))")
                    let notes = EventNotes()
                    let result = await Fetcher.immediate { $0.events = notes.record }
                        .run(other.url() + "?v=2", to: "\(directory)/out.bin")
                    #expect(notes.said("the partial came from \(server.url()), not \(other.url())?v=2"), "\(notes.all)")
                    #expect(notes.said("a --sha256 pin would"), "\(notes.all)")
                    #expect(result.error == nil, "\(failure(result))")
                    #expect(result.resumedFrom == 0)
                    #expect(other.getRequests.map { $0.header("Range") } == [nil])
                    #expect(contents("\(directory)/out.bin") == Fixtures.b)
                    #expect(listing(directory) == ["out.bin"])
                }
            }
        }
    }

    /// A run killed right after the last byte of a body without `Content-Length` left a partial
    /// holding every byte, its checkpoint knowing no total. With a pin, a `HEAD` length equal to
    /// it is enough: the pin decides, and no ranged GET at the end of the file meets a `416`
    /// (which some servers break).
    @Test func `a pinned partial as long as HEAD says is finalized without a GET`() async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                try writePartial(
                    Fixtures.a[...],
                    of: nil,
                    to: "\(directory)/out.bin",
                    url: server.url(),
                    etag: Fixtures.etagA
                )
                let result = await self.fetch(server, into: directory, pin: try Pin(sha256Hex: Fixtures.sha256A))
                #expect(result.error == nil, "\(failure(result))")
                #expect(server.requests.map(\.method) == ["HEAD"])
                #expect(result.downloadedBytes == 0)
                #expect(contents("\(directory)/out.bin") == Fixtures.a)
                #expect(listing(directory) == ["out.bin"])
            }
        }
    }

    /// The `HEAD` comes before any byte of the partial is read again: a partial whose record
    /// would be hashed again from byte 0 (written by another OpenSSL) is dropped unread when the
    /// representation changed since.
    @Test func `a partial of a representation that changed is dropped before any of it is re-hashed`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: Fixtures.b, etag: Fixtures.etagB)) { server in
            try await withTemporaryDirectory { directory in
                try writePartial(
                    Fixtures.a[..<500_000],
                    of: Int64(Fixtures.a.count),
                    to: "\(directory)/out.bin",
                    url: server.url(),
                    etag: Fixtures.etagA
                )
                try rewriteRecords(in: "\(directory)/out.bin.part.state") { $0.libraryVersion &+= 1 }
                let result = await self.fetch(server, into: directory, pin: nil)
                #expect(result.error == nil, "\(failure(result))")
                #expect(result.rehashedBytes == 0)
                #expect(result.resumedFrom == 0)
                #expect(server.requests.map(\.method) == ["HEAD", "GET"])
                #expect(contents("\(directory)/out.bin") == Fixtures.b)
            }
        }
    }

    /// A chunked body that ended cleanly records its length: a run stopped before placing the
    /// file (here a file took its server-chosen name meanwhile) leaves a partial the next run
    /// finalizes on HEAD's length, unpinned, without a GET; so a server that breaks a range at the
    /// end of the file (it drops the connection, as a stream error over HTTP/2 does) is never
    /// met. A body that broke off records none (``HostileAnswerTests``).
    @Test func `a chunked body that ended records its length, and a rerun finalizes it without a GET`() async throws {
        var resource = Self.resourceA
        resource.extraHeaders = [("Content-Disposition", "attachment; filename=out.bin")]
        try await withTestHTTPServer(serving: resource) { server in
            server.handler = { request, _ in
                guard request.method == "GET", request.header("Range") == "bytes=\(Fixtures.a.count)-" else {
                    return nil
                }
                return TestResponse(status: 416, headers: [], body: [1], closeAfterBodyBytes: 0)
            }
            var faults = TestFaults(omitContentLength: true)
            faults.bytesPerSecond = 100_000  // 10 s: the file is created while the body comes
            server.faults = faults
            try await withTemporaryDirectory { directory in
                let job = FetchJob(
                    mirrors: [server.url()],
                    destination: "\(directory)/file",
                    namingDirectory: directory
                )
                let first = Task { await Fetcher.immediate(retries: 0).run([job])[0] }
                try await waitUntil { FileSystem.exists("\(directory)/out.bin.part") }
                try Data("mine".utf8).write(to: URL(filePath: "\(directory)/out.bin"))
                let refused = await first.value
                #expect(refused.error?.code == .fileIO, "\(failure(refused))")
                let record = try #require(CheckpointFile.read("\(directory)/out.bin.part.state")?.durable.first)
                #expect(record.offset == Int64(Fixtures.a.count))
                #expect(record.totalLength == Int64(Fixtures.a.count))

                try FileManager.default.removeItem(atPath: "\(directory)/out.bin")
                server.faults = TestFaults()
                let before = server.requests.count
                let result = await Fetcher.immediate(retries: 1).run([job])[0]
                #expect(result.error == nil, "\(failure(result))")
                #expect(result.digest == Fixtures.sha256A)
                #expect(result.downloadedBytes == 0)
                #expect(server.requests.dropFirst(before).map(\.method) == ["HEAD"])
                #expect(contents("\(directory)/out.bin") == Fixtures.a)
                #expect(listing(directory) == ["out.bin"])
            }
        }
    }

    /// The same partial with a pin it does not match (the HEAD's length was a lie, or the bytes
    /// another file's): the pin decides, and one download from byte 0 gets the pinned file.
    @Test func `a partial finalized on HEAD's length that misses the pin is downloaded again`() async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let other = Array(Fixtures.a.map { $0 ^ 0x5A })
                try writePartial(
                    other[...],
                    of: nil,
                    to: "\(directory)/out.bin",
                    url: server.url(),
                    etag: Fixtures.etagA
                )
                let result = await self.fetch(server, into: directory, pin: try Pin(sha256Hex: Fixtures.sha256A))
                #expect(result.error == nil, "\(failure(result))")
                #expect(server.getRequests.map { $0.header("Range") } == [nil])
                #expect(contents("\(directory)/out.bin") == Fixtures.a)
            }
        }
    }
}

extension FetchTests {
    /// A stop (a signal) that comes after the last byte, before the rename: the whole partial is
    /// kept with a checkpoint, reported, and placed by the next run without a body (an
    /// outsider's case: small files had none, so their partials went unreported and were
    /// downloaded again).
    @Test(arguments: [true, false])
    func `a stop just before the rename keeps the whole partial for the next run`(pinned: Bool) async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let pin = pinned ? try Pin(sha256Hex: Fixtures.sha256A) : nil
                let stopped = await self.fetch(server, into: directory, pin: pin) { $0.stopRequested = { true } }
                #expect(stopped.error?.code == .cancelled, "\(failure(stopped))")
                #expect(stopped.partial?.bytes == Int64(Fixtures.a.count), "the partial is reported")
                #expect(listing(directory) == ["out.bin.part", "out.bin.part.state"])
                var info = stat()
                #expect(stat("\(directory)/out.bin.part", &info) == 0 && info.st_mode & 0o777 == 0o600, "private")
                let seen = server.getRequests.count
                let again = await self.fetch(server, into: directory, pin: pin)
                #expect(again.error == nil, "\(failure(again))")
                #expect(again.downloadedBytes == 0)
                #expect(server.getRequests.count == seen, "placed without a GET")
                let placed = contents("\(directory)/out.bin") == Fixtures.a
                #expect(placed)
                #expect(listing(directory) == ["out.bin"])
            }
        }
    }
}
