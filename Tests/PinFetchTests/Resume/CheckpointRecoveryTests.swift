import Foundation
@preconcurrency import Glibc
import Testing

@testable import PinFetch

/// What a resume trusts of a partial: the light span as it is in the boot that wrote it (after
/// its tail check), after a reboot only when it hashes to the light state; a durable record
/// only while its 64 KiB tail is unchanged.
struct CheckpointRecoveryTests {
    static let content = pseudoRandomBytes(3 << 20, seed: 0x7265_636f)
    static let mebibyte: Int64 = 1 << 20

    /// A partial holding the first `size` bytes of ``content`` and its state file, written by
    /// the writer a download uses, with the given checkpoints (kind and offset) in order.
    struct Fixture {
        let directory: String
        var partialPath: String { self.directory + "/f.part" }
        var statePath: String { self.directory + "/f.part.state" }

        /// With `reboot`, the light record is made another boot's (``simulateReboot(stateFile:)``).
        init(
            in directory: String,
            size: Int64,
            checkpoints: [(CheckpointWriter.Kind, Int64)],
            reboot: Bool = false
        ) throws {
            self.directory = directory
            try Data(CheckpointRecoveryTests.content[..<Int(size)]).write(to: URL(filePath: self.partialPath))
            let partial = try PartialFile(path: self.partialPath)
            var state = PartialState(algorithm: .sha256)
            state.validator = Validator(entityTag: #""v1""#, lastModified: nil)
            state.totalLength = Int64(CheckpointRecoveryTests.content.count)
            let writer = try #require(
                CheckpointWriter(
                    path: self.statePath,
                    partial: partial,
                    state: state,
                    source: "http://h.test/f",
                    durableOffset: 0
                )
            )
            for (kind, offset) in checkpoints {
                try writer.write(kind, offset: offset, state: CheckpointRecoveryTests.state(after: offset))
            }
            if reboot { try simulateReboot(stateFile: self.statePath) }
        }

        /// Overwrites `count` bytes of the partial at `offset` with zeros, as a lost write leaves them.
        func zero(at offset: Int64, count: Int) throws {
            let handle = try #require(FileHandle(forUpdatingAtPath: self.partialPath))
            try handle.seek(toOffset: UInt64(offset))
            handle.write(Data(count: count))
            try handle.close()
        }

        func recover() throws -> CheckpointRecovery? {
            let records = try #require(CheckpointFile.read(self.statePath))
            var state = stat()
            #expect(lstat(self.statePath, &state) == 0)
            return try CheckpointRecovery.recover(
                records,
                partial: try PartialFile(path: self.partialPath, readOnly: true),
                algorithm: .sha256,
                stateWritten: VerifiedRecord.nanoseconds(state.st_mtim)
            )
        }
    }

    /// Durable checkpoints at 1 and 2 MiB, a light one at 2.5 MiB.
    static let twoDurablesAndLight: [(CheckpointWriter.Kind, Int64)] = [
        (.durable, mebibyte), (.durable, 2 * mebibyte), (.light, 5 * mebibyte / 2),
    ]

    /// The SHA-256 context after the first `offset` bytes of ``content``.
    static func state(after offset: Int64) -> [UInt8] {
        let digest = RunningDigest(algorithm: .sha256)
        content[..<Int(offset)].withUnsafeBytes { digest.update($0) }
        return digest.serializedState()
    }

    /// Whether `recovery` stands at `offset` with the digest of exactly that prefix.
    static func holds(_ recovery: CheckpointRecovery?, at offset: Int64) -> Bool {
        guard let recovery, recovery.checkpoint.offset == offset else { return false }
        return Pin.hex(recovery.digest.finalize()) == Fixtures.sha256(Array(content[..<Int(offset)]))
    }

    @Test func `in the boot that wrote it the light record is trusted after its tail check`() async throws {
        try await withTemporaryDirectory { directory in
            let fixture = try Fixture(
                in: directory,
                size: 3 * Self.mebibyte,
                checkpoints: [(.durable, Self.mebibyte), (.light, 5 * Self.mebibyte / 2)]
            )
            let recovery = try fixture.recover()
            #expect(Self.holds(recovery, at: 5 * Self.mebibyte / 2))
            #expect(recovery?.isLight == true)
            #expect(recovery?.rehashedBytes == 0)
        }
    }

    /// What the same boot does not take on trust: a light tail that changed, a partial that is
    /// another file now (a copy renamed over it), a durable record whose tail changed (something
    /// wrote the partial since), a light record of an older pinfetch that names no boot, and a
    /// partial changed well after its state file was last written (an edit of the light span
    /// outside its tail, made after the writer stopped).
    enum SameBootDoubt: String, CaseIterable {
        case lightTailChanged, anotherFile, durableTailChanged, noBootRecorded, changedAfterTheWriterStopped
    }

    @Test(arguments: SameBootDoubt.allCases)
    func `in the same boot a light record is hashed again when anything says the partial changed`(
        doubt: SameBootDoubt
    ) async throws {
        try await withTemporaryDirectory { directory in
            let fixture = try Fixture(in: directory, size: 3 * Self.mebibyte, checkpoints: Self.twoDurablesAndLight)
            switch doubt {
            case .lightTailChanged:
                try fixture.zero(at: 5 * Self.mebibyte / 2 - 10, count: 1)
            case .anotherFile:
                let copy = directory + "/copy"
                try FileManager.default.copyItem(atPath: fixture.partialPath, toPath: copy)
                #expect(rename(copy, fixture.partialPath) == 0)
            case .durableTailChanged:
                try fixture.zero(at: 2 * Self.mebibyte - 10, count: 1)
            case .noBootRecorded:
                try rewriteRecords(in: fixture.statePath) { $0.bootID = nil }
            case .changedAfterTheWriterStopped:
                try fixture.zero(at: 2 * Self.mebibyte + 4096, count: 1)
                // The state file last written 10 s before that edit (a kill, then the edit).
                var written = stat()
                #expect(lstat(fixture.statePath, &written) == 0)
                written.st_mtim.tv_sec -= 10
                #expect(utimensat(AT_FDCWD, fixture.statePath, [written.st_atim, written.st_mtim], 0) == 0)
            }
            let recovery = try fixture.recover()
            let hashedLightSpan = recovery.map { $0.rehashedBytes >= Self.mebibyte / 2 } ?? false
            #expect(hashedLightSpan, "\(doubt): \(String(describing: recovery?.rehashedBytes))")
            // Cut back to the newest durable record the partial still matches, when the light span
            // fails; kept whole when it was only doubted.
            let expected: Int64 =
                switch doubt {
                case .lightTailChanged, .changedAfterTheWriterStopped: 2 * Self.mebibyte
                case .durableTailChanged: Self.mebibyte
                case .anotherFile, .noBootRecorded: 5 * Self.mebibyte / 2
                }
            #expect(Self.holds(recovery, at: expected), "\(doubt)")
        }
    }

    @Test func `after a reboot the light span is checked by hashing it, and kept`() async throws {
        try await withTemporaryDirectory { directory in
            let fixture = try Fixture(
                in: directory,
                size: 3 * Self.mebibyte,
                checkpoints: [(.durable, Self.mebibyte), (.light, 5 * Self.mebibyte / 2)],
                reboot: true
            )
            let recovery = try fixture.recover()
            #expect(Self.holds(recovery, at: 5 * Self.mebibyte / 2))
            #expect(recovery?.isLight == true)
            #expect(recovery?.rehashedBytes == 3 * Self.mebibyte / 2)
        }
    }

    @Test func `a light span that lost its bytes in a power loss is cut back to the durable offset`() async throws {
        try await withTemporaryDirectory { directory in
            let fixture = try Fixture(
                in: directory,
                size: 3 * Self.mebibyte,
                checkpoints: [(.durable, Self.mebibyte), (.light, 5 * Self.mebibyte / 2)],
                reboot: true
            )
            try fixture.zero(at: 2 * Self.mebibyte, count: 4096)
            let recovery = try fixture.recover()
            #expect(Self.holds(recovery, at: Self.mebibyte))
            #expect(recovery?.isLight == false)
            // The span hashed to find out, and the durable prefix: the partial was modified since
            // the record at the size it has now (an edit in place), so its hash state is not trusted.
            #expect(recovery?.rehashedBytes == Self.mebibyte + 3 * Self.mebibyte / 2)
        }
    }

    @Test func `without a durable record the light span starts at byte 0`() async throws {
        try await withTemporaryDirectory { directory in
            let fixture = try Fixture(
                in: directory,
                size: 2 * Self.mebibyte,
                checkpoints: [(.light, 3 * Self.mebibyte / 2)],
                reboot: true
            )
            let recovery = try fixture.recover()
            #expect(Self.holds(recovery, at: 3 * Self.mebibyte / 2))
            #expect(recovery?.rehashedBytes == 3 * Self.mebibyte / 2)
            try fixture.zero(at: 100, count: 1)
            #expect(try fixture.recover() == nil)  // nothing of it can be trusted
        }
    }

    @Test func `a durable record whose tail changed gives way to the one before it`() async throws {
        try await withTemporaryDirectory { directory in
            let fixture = try Fixture(in: directory, size: 3 * Self.mebibyte, checkpoints: Self.twoDurablesAndLight)
            try fixture.zero(at: 2 * Self.mebibyte - 100, count: 1)  // inside the newest tail
            let recovery = try fixture.recover()
            #expect(Self.holds(recovery, at: Self.mebibyte))
            // The prefix (the partial was modified in place since) and the light span, which fails too.
            #expect(recovery?.rehashedBytes == Self.mebibyte + 3 * Self.mebibyte / 2)
        }
    }

    @Test func `when every durable tail changed nothing is trusted, light record or not`() async throws {
        try await withTemporaryDirectory { directory in
            let fixture = try Fixture(in: directory, size: 3 * Self.mebibyte, checkpoints: Self.twoDurablesAndLight)
            try fixture.zero(at: Self.mebibyte - 1, count: 1)
            try fixture.zero(at: 2 * Self.mebibyte - 1, count: 1)
            #expect(try fixture.recover() == nil)
        }
    }

    @Test func `a partial shorter than its newest durable record resumes from one it still holds`() async throws {
        try await withTemporaryDirectory { directory in
            let fixture = try Fixture(
                in: directory,
                size: 2 * Self.mebibyte,
                checkpoints: [(.durable, Self.mebibyte), (.durable, 2 * Self.mebibyte)]
            )
            try PartialFile(path: fixture.partialPath).truncate(to: 3 * Self.mebibyte / 2)  // a disk that lost its end
            let recovery = try fixture.recover()
            #expect(Self.holds(recovery, at: Self.mebibyte))
            #expect(recovery?.rehashedBytes == 0)
        }
    }

    @Test func `a record from another OpenSSL is hashed again from byte 0, and its light span is not used`()
        async throws
    {
        try await withTemporaryDirectory { directory in
            let fixture = try Fixture(
                in: directory,
                size: 3 * Self.mebibyte,
                checkpoints: [(.durable, Self.mebibyte), (.light, 2 * Self.mebibyte)]
            )
            try rewriteRecords(in: fixture.statePath) { $0.libraryVersion &+= 1 }
            let recovery = try fixture.recover()
            #expect(Self.holds(recovery, at: Self.mebibyte))
            #expect(recovery?.rehashedBytes == Self.mebibyte)
        }
    }
}
