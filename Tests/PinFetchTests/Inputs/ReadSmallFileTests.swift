import Foundation
import Testing

@testable import PinFetch

/// ``FileSystem/readSmallFile(_:limit:)``: whole files up to the limit, sized by the file.
struct ReadSmallFileTests {
    @Test func `a file is read whole up to the limit, and a larger one not at all`() async throws {
        try await withTemporaryDirectory { directory in
            let bytes = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
            try Data(bytes).write(to: URL(filePath: directory + "/f"))
            #expect(FileSystem.readSmallFile(directory + "/f", limit: 100_000) == bytes)
            #expect(FileSystem.readSmallFile(directory + "/f", limit: 1 << 26) == bytes)
            #expect(FileSystem.readSmallFile(directory + "/f", limit: 99_999) == nil)
            try Data().write(to: URL(filePath: directory + "/empty"))
            #expect(FileSystem.readSmallFile(directory + "/empty", limit: 10) == [])
        }
    }

    @Test func `a file whose size says 0 (procfs) is read to its end`() {
        let status = FileSystem.readSmallFile("/proc/self/status", limit: 1 << 16)
        #expect(status.map { String(decoding: $0, as: UTF8.self).contains("\nUmask:") } == true)
        let maps = FileSystem.readSmallFile("/proc/self/maps", limit: 1 << 24)  // usually past 4 KiB
        #expect((maps?.count ?? 0) > 4096 && maps?.last == 0x0A)
    }

    /// Planted file: a FIFO where gc reads a checkpoint.
    @Test func `a FIFO swapped in where gc reads a checkpoint is not waited on`() async throws {
        try await withTemporaryDirectory { directory in
            #expect(mkfifo("\(directory)/x.part.state", 0o644) == 0)
            #expect(FileSystem.readSmallFile("\(directory)/x.part.state", limit: 1024) == nil)  // at once
        }
    }
}
