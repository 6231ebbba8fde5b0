import Foundation
@preconcurrency import Glibc
import Testing

@testable import PinFetch

/// The slots of `<dest>.part.state`: durable records alternate between two slots, a torn write
/// loses at most the record being written, and a file of the first format still reads.
struct CheckpointFileTests {
    static func record(offset: Int64) -> Checkpoint { CheckpointTests.checkpoint(offset: offset) }

    /// The bytes of `slot` in the file at `path`.
    static func slot(_ slot: Int, of path: String) throws -> [UInt8] {
        let bytes = try #require(contents(path))
        let start = slot * CheckpointFile.slotSize
        return Array(bytes[start..<min(bytes.count, start + CheckpointFile.slotSize)])
    }

    /// Overwrites `count` bytes of `slot` at `offset` inside it, as a torn write leaves them.
    static func tear(_ slot: Int, of path: String, at offset: Int = 40, count: Int = 30) throws {
        let handle = try #require(FileHandle(forUpdatingAtPath: path))
        try handle.seek(toOffset: UInt64(slot * CheckpointFile.slotSize + offset))
        handle.write(Data(repeating: 0x5A, count: count))
        try handle.close()
    }

    @Test func `durable records alternate between two slots, newest first`() async throws {
        try await withTemporaryDirectory { directory in
            let path = "\(directory)/f.part.state"
            let file = CheckpointFile(path: path)
            #expect(!FileManager.default.fileExists(atPath: path))  // nothing before the first write
            for offset in [100_000, 200_000, 300_000] as [Int64] { try file.writeDurable(Self.record(offset: offset)) }
            let records = try #require(CheckpointFile.read(path))
            #expect(records.durable.map(\.offset) == [300_000, 200_000])
            #expect(records.durable.map(\.sequence) == [3, 2])
            #expect(records.light == nil)
            #expect(Checkpoint(decoding: try Self.slot(1, of: path).prefix { $0 != 0 }.map { $0 })?.offset == 300_000)
            #expect(Checkpoint(decoding: try Self.slot(0, of: path).prefix { $0 != 0 }.map { $0 })?.offset == 200_000)
        }
    }

    @Test func `a torn durable write leaves the record before it`() async throws {
        try await withTemporaryDirectory { directory in
            let path = "\(directory)/f.part.state"
            let file = CheckpointFile(path: path)
            try file.writeDurable(Self.record(offset: 100_000))  // sequence 1, slot 1
            try file.writeDurable(Self.record(offset: 200_000))  // sequence 2, slot 0
            try file.writeLight(Self.record(offset: 250_000))
            try Self.tear(0, of: path)
            let records = try #require(CheckpointFile.read(path))
            #expect(records.durable.map(\.offset) == [100_000])
            #expect(records.light?.offset == 250_000)
            // The next writer continues after the intact record, into the torn slot.
            let next = CheckpointFile(path: path)
            try next.writeDurable(Self.record(offset: 300_000))
            #expect(CheckpointFile.read(path)?.durable.map(\.offset) == [300_000, 100_000])
            #expect(CheckpointFile.read(path)?.durable.first?.sequence == 2)
        }
    }

    @Test func `a torn light slot is ignored and the durable records stay`() async throws {
        try await withTemporaryDirectory { directory in
            let path = "\(directory)/f.part.state"
            let file = CheckpointFile(path: path)
            try file.writeDurable(Self.record(offset: 100_000))
            try file.writeLight(Self.record(offset: 150_000))
            try Self.tear(CheckpointFile.lightSlot, of: path)
            let records = try #require(CheckpointFile.read(path))
            #expect(records.light == nil)
            #expect(records.durable.map(\.offset) == [100_000])
        }
    }

    @Test func `a shorter record leaves no trace of the longer one before it`() async throws {
        try await withTemporaryDirectory { directory in
            let path = "\(directory)/f.part.state"
            let file = CheckpointFile(path: path)
            var long = Self.record(offset: 100_000)
            long.url = "http://example.test/" + String(repeating: "x", count: 2000)
            try file.writeLight(long)
            try file.writeLight(Self.record(offset: 150_000))
            #expect(CheckpointFile.read(path)?.light?.offset == 150_000)
            try file.clearLight()
            #expect(CheckpointFile.read(path)?.light == nil)
            #expect(CheckpointSlots.looksLikeStateFile(try #require(contents(path))) == false)
        }
    }

    @Test func `a light-only file is a state file, and a file of the first format is its durable slot`() async throws {
        try await withTemporaryDirectory { directory in
            let light = "\(directory)/light.part.state"
            try CheckpointFile(path: light).writeLight(Self.record(offset: 50_000))
            #expect(CheckpointSlots.looksLikeStateFile(try #require(contents(light))))
            #expect(CheckpointFile.read(light)?.durable.isEmpty == true)

            let first = "\(directory)/first.part.state"
            try Data(Self.record(offset: 70_000).encoded()).write(to: URL(filePath: first))
            let records = try #require(CheckpointFile.read(first))
            #expect(records.durable.map(\.offset) == [70_000])
            #expect(records.light == nil)
            // Written on: the next durable record goes to slot 1 and is the newest.
            try CheckpointFile(path: first).writeDurable(Self.record(offset: 90_000))
            #expect(CheckpointFile.read(first)?.durable.map(\.offset) == [90_000, 70_000])
        }
    }

    @Test func `a record in a slot its sequence does not belong to is not ours`() {
        var record = Self.record(offset: 100_000)
        record.sequence = 2  // even: slot 0, but written to slot 1
        var bytes = [UInt8](repeating: 0, count: CheckpointFile.slotSize) + record.encoded() + [0]
        #expect(CheckpointSlots.records(in: bytes).durable.isEmpty)
        record.sequence = nil  // a light record in a durable slot, or the reverse
        bytes = [UInt8](repeating: 0, count: CheckpointFile.slotSize) + record.encoded() + [0]
        #expect(CheckpointSlots.records(in: bytes).durable.isEmpty)
        var durable = record
        durable.sequence = 5
        bytes = [UInt8](repeating: 0, count: 2 * CheckpointFile.slotSize) + durable.encoded() + [0]
        #expect(CheckpointSlots.records(in: bytes).light == nil)
    }

    @Test func `the state file is never opened through a symbolic link`() async throws {
        try await withTemporaryDirectory { directory in
            let target = "\(directory)/target"
            try Data("keep".utf8).write(to: URL(filePath: target))
            let path = "\(directory)/f.part.state"
            try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: target)
            #expect(throws: PinFetchError.self) { try CheckpointFile(path: path).writeLight(Self.record(offset: 1)) }
            #expect(CheckpointFile.read(path) == nil)
            #expect(contents(target) == Array("keep".utf8))
        }
    }

    @Test func `a FIFO or a directory at the state path is never waited on nor written`() async throws {
        try await withTemporaryDirectory { directory in
            let fifo = "\(directory)/fifo.part.state"
            #expect(mkfifo(fifo, 0o644) == 0)
            #expect(CheckpointFile.read(fifo) == nil)  // would block forever without O_NONBLOCK
            #expect(throws: PinFetchError.self) { try CheckpointFile(path: fifo).writeLight(Self.record(offset: 1)) }
            let folder = "\(directory)/dir.part.state"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
            #expect(CheckpointFile.read(folder) == nil)
            #expect(throws: PinFetchError.self) {
                try CheckpointFile(path: folder).writeDurable(Self.record(offset: 1))
            }
        }
    }
}
