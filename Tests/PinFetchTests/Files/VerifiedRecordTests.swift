import Foundation
@preconcurrency import Glibc
import Testing

@testable import PinFetch

/// The verified record on a placed file (`user.pinfetch`): a rerun over a recorded file reads
/// nothing, anything that changed the file makes it hash again.
struct VerifiedRecordTests {
    static var resourceA: TestResource { TestResource(body: Fixtures.a, etag: Fixtures.etagA) }
    static var pinA: Pin { get throws { try Pin(sha256Hex: Fixtures.sha256A) } }

    /// The record on `path`, decoded as it is stored.
    static func record(_ path: String) -> VerifiedRecord? {
        guard case .bytes(let bytes) = ExtendedAttribute.read(VerifiedRecord.attribute, at: path) else { return nil }
        return try? JSONDecoder().decode(VerifiedRecord.self, from: Data(bytes))
    }

    /// Downloads A pinned into `directory/out.bin`, then runs again with `options`.
    static func rerun(
        _ server: TestHTTPServer,
        _ output: String,
        pin: Pin? = nil,
        configure: (inout FetchOptions) -> Void = { _ in },
        between: () throws -> Void = {}
    ) async throws -> (result: FetchResult, requests: [RecordedRequest]) {
        let first = await Fetcher.immediate().run(server.url(), to: output, verifying: try pin ?? Self.pinA)
        #expect(first.error == nil, "\(failure(first))")
        try between()
        let seen = server.requests.count
        let result = await Fetcher.immediate(configure).run(server.url(), to: output, verifying: try pin ?? Self.pinA)
        return (result, Array(server.requests.dropFirst(seen)))
    }

    @Test func `a placed file carries what was verified of it`() async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let output = "\(directory)/out.bin"
                let result = await Fetcher.immediate().run(server.url(), to: output, verifying: try Self.pinA)
                #expect(result.error == nil, "\(failure(result))")
                let record = try #require(Self.record(output))
                var info = stat()
                #expect(lstat(output, &info) == 0)
                #expect(record.digests == ["sha256": Fixtures.sha256A])
                #expect(record.size == Int64(Fixtures.a.count))
                #expect(record.inode == UInt64(info.st_ino))
                #expect(record.modified == VerifiedRecord.nanoseconds(info.st_mtim))
                #expect(record.validator?.entityTag == Fixtures.etagA)
                #expect(record.url == server.url())
                #expect(record.describes(info))
                // The partial's mark is gone: the record is the only attribute pinfetch leaves.
                #expect(PartialMark.read(output) == .none)
            }
        }
    }

    /// An outsider's case: under umask 000 the placed file was 0666, and another user rewrote
    /// it and its record (write access is all a `user.` attribute needs), so a pinned rerun took
    /// other bytes as complete. A mode the group or others may write is never trusted.
    @Test(arguments: [0o002, 0o020, 0o022] as [mode_t])
    func `a record on a file that others may write describes nothing`(bits: mode_t) async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let output = "\(directory)/out.bin"
                let result = await Fetcher.immediate().run(server.url(), to: output, verifying: try Self.pinA)
                #expect(result.error == nil, "\(failure(result))")
                let record = try #require(Self.record(output))
                var info = stat()
                #expect(lstat(output, &info) == 0)
                #expect(record.describes(info))
                info.st_mode |= bits  // as the file would be, placed under a umask that leaves them
                #expect(!record.describes(info))
            }
        }
    }

    @Test func `a rerun over a recorded file makes no request and reads nothing`() async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let (result, requests) = try await Self.rerun(server, "\(directory)/out.bin")
                #expect(result.error == nil, "\(failure(result))")
                #expect(result.status == .alreadyComplete)
                #expect(result.rehashedBytes == 0)
                #expect(result.digest == Fixtures.sha256A)
                #expect(result.bytes == Int64(Fixtures.a.count))
                #expect(requests.isEmpty)
            }
        }
    }

    @Test func `--reverify reads a recorded file anyway`() async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let (result, requests) = try await Self.rerun(
                    server,
                    "\(directory)/out.bin",
                    configure: { $0.reverify = true }
                )
                #expect(result.status == .alreadyComplete)
                #expect(result.rehashedBytes == Int64(Fixtures.a.count))
                #expect(requests.isEmpty)
            }
        }
    }

    /// Ways a recorded file changes: each must make the rerun read it again; the ones that
    /// changed its bytes must end with the pinned bytes placed.
    enum Change: String, CaseIterable {
        /// `touch`: the bytes are the same, the times are not.
        case touched
        /// Other bytes written in place, the modification time set back (as `touch -r` does).
        case editedWithTimeRestored
        /// Truncated and written again with the same bytes.
        case rewritten
        /// A copy with the same times and the record (`cp -a`), renamed over it.
        case replacedByCopy
        /// The record's change time moved to the file's present one (a forged record).
        case forgedRecord
    }

    @Test(arguments: Change.allCases)
    func `a recorded file that changed is read again`(change: Change) async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let output = "\(directory)/out.bin"
                let (result, _) = try await Self.rerun(
                    server,
                    output,
                    between: {
                        try Self.apply(change, to: output, directory: directory)
                    }
                )
                #expect(result.error == nil, "\(failure(result))")
                #expect(result.rehashedBytes == Int64(Fixtures.a.count), "\(change)")
                #expect(contents(output) == Fixtures.a)
                let edited = change == .editedWithTimeRestored || change == .forgedRecord
                #expect(result.status == (edited ? .downloaded : .alreadyComplete), "\(change)")
                // What was verified now is recorded again: the next run reads nothing.
                let third = await Fetcher.immediate().run(server.url(), to: output, verifying: try Self.pinA)
                #expect(third.status == .alreadyComplete)
                #expect(third.rehashedBytes == 0, "\(change)")
            }
        }
    }

    static func setRecord(_ value: [UInt8], on path: String) -> Bool {
        let fd = open(path, O_RDONLY)
        defer { close(fd) }
        return fd >= 0 && ExtendedAttribute.set(VerifiedRecord.attribute, to: value, on: fd)
    }

    /// Changes the file a while after its record was set (a change within
    /// ``VerifiedRecord/window`` of it is not told apart, as documented).
    static func apply(_ change: Change, to output: String, directory: String) throws {
        usleep(20_000)
        var info = stat()
        #expect(lstat(output, &info) == 0)
        let times = [info.st_atim, info.st_mtim]
        switch change {
        case .touched:
            #expect(utimensat(AT_FDCWD, output, nil, 0) == 0)
        case .editedWithTimeRestored:
            let handle = try FileHandle(forWritingTo: URL(filePath: output))
            try handle.write(contentsOf: Data(Fixtures.b.prefix(4096)))
            try handle.close()
            #expect(utimensat(AT_FDCWD, output, times, 0) == 0)
        case .rewritten:
            try Data(Fixtures.a).write(to: URL(filePath: output))
            #expect(utimensat(AT_FDCWD, output, times, 0) == 0)
        case .replacedByCopy:
            let copy = "\(directory)/copy.bin"
            try Data(Fixtures.a).write(to: URL(filePath: copy))
            #expect(utimensat(AT_FDCWD, copy, times, 0) == 0)
            guard case .bytes(let value) = ExtendedAttribute.read(VerifiedRecord.attribute, at: output) else {
                Issue.record("no record to copy")
                return
            }
            #expect(Self.setRecord(value, on: copy))
            #expect(rename(copy, output) == 0)
        case .forgedRecord:
            // Bytes written in place with the times set back, then the record told the change
            // time the edit left: setting it changes that time again.
            try Self.apply(.editedWithTimeRestored, to: output, directory: directory)
            var edited = stat()
            #expect(lstat(output, &edited) == 0)
            var record = try #require(Self.record(output))
            record.changed = VerifiedRecord.nanoseconds(edited.st_ctim)
            record.changedBy = record.changed + VerifiedRecord.window
            // A forger that takes longer than the window. File times come from the kernel's
            // coarse clock (a tick: 4 ms at HZ=250, 10 ms at HZ=100): 5 ms could stay within the
            // edit's tick on a loaded machine, and the forged record then matched.
            usleep(25_000)
            let bytes = try JSONEncoder().encode(record)
            #expect(Self.setRecord(Array(bytes), on: output))
        }
    }

    @Test func `a record of another algorithm makes one read, then both digests are recorded`() async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let output = "\(directory)/out.bin"
                let first = await Fetcher.immediate().run(server.url(), to: output, verifying: try Self.pinA)
                #expect(first.error == nil, "\(failure(first))")
                let sha512 = try Pin(parsing: "sha512:" + Fixtures.sha512(Fixtures.a))
                let second = await Fetcher.immediate().run(server.url(), to: output, verifying: sha512)
                #expect(second.status == .alreadyComplete)
                #expect(second.rehashedBytes == Int64(Fixtures.a.count))
                #expect(Set(Self.record(output)?.digests.keys.map { $0 } ?? []) == ["sha256", "sha512"])
                for pin in [sha512, try Self.pinA] {
                    let again = await Fetcher.immediate().run(server.url(), to: output, verifying: pin)
                    #expect(again.status == .alreadyComplete)
                    #expect(again.rehashedBytes == 0)
                }
                #expect(server.requests.count == 1)
            }
        }
    }

    @Test func `a recorded file that another pin names is replaced without reading it`() async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let output = "\(directory)/out.bin"
                let first = await Fetcher.immediate().run(server.url(), to: output, verifying: try Self.pinA)
                #expect(first.error == nil, "\(failure(first))")
                server.resource = TestResource(body: Fixtures.b, etag: Fixtures.etagB)
                let second = await Fetcher.immediate().run(
                    server.url(),
                    to: output,
                    verifying: try Pin(sha256Hex: Fixtures.sha256B)
                )
                #expect(second.status == .downloaded)
                #expect(second.rehashedBytes == 0)
                #expect(contents(output) == Fixtures.b)
                #expect(Self.record(output)?.digests == ["sha256": Fixtures.sha256B])
            }
        }
    }

    /// A resumed file's prefix was hashed by an earlier run; an edit of the partial in place
    /// since is not detected (documented), so the file gets no record: the next run reads it,
    /// finds other bytes than the pin, and fetches the file again.
    @Test func `a file resumed from an earlier run's partial gets no record: the next run reads it`() async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let output = "\(directory)/out.bin"
                try writePartial(
                    Fixtures.a[..<500_000],
                    of: Int64(Fixtures.a.count),
                    to: output,
                    url: server.url(),
                    etag: Fixtures.etagA
                )
                let handle = try #require(FileHandle(forUpdatingAtPath: output + ".part"))
                try handle.seek(toOffset: 1000)
                handle.write(Data(Fixtures.b[..<16]))  // edited in place after the checkpoint
                try handle.close()
                let resumed = await Fetcher.immediate().run(server.url(), to: output, verifying: try Self.pinA)
                #expect(resumed.status == .resumed, "\(failure(resumed))")
                #expect(Self.record(output) == nil)
                let rerun = await Fetcher.immediate().run(server.url(), to: output, verifying: try Self.pinA)
                #expect(rerun.error == nil, "\(failure(rerun))")
                #expect(rerun.rehashedBytes == Int64(Fixtures.a.count))
                #expect(rerun.status == .downloaded)
                #expect(contents(output) == Fixtures.a)
                #expect(Self.record(output) != nil)
            }
        }
    }
}
