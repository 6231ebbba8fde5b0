import Foundation
import Synchronization
import Testing

@testable import PinFetch

/// Group commit of directory `fsync`s: each caller returns only after an
/// `fsync` that began after its request, and callers that come together share one.
struct DirectorySyncTests {
    /// The first caller's `fsync` is held until 31 more callers have asked: it covers only the
    /// first, and exactly one more `fsync` covers the 31 (they asked before it began).
    @Test func `callers that come during an fsync share the next one`() throws {
        let gate = DispatchSemaphore(value: 0)
        let performed = Mutex(0)
        let sync = DirectorySync { _ throws(PinFetchError) in
            let number = performed.withLock { count in
                count += 1
                return count
            }
            if number == 1 { gate.wait() }
        }
        let group = DispatchGroup()
        let callers = 32
        for _ in 0..<callers {
            group.enter()
            Thread.detachNewThread {
                try? sync.synchronize("/d")
                group.leave()
            }
            if sync.requests(for: "/d") == 0 { Thread.sleep(forTimeInterval: 0.01) }
        }
        let deadline = Date().addingTimeInterval(10)
        while sync.requests(for: "/d") < callers, Date() < deadline { Thread.sleep(forTimeInterval: 0.005) }
        #expect(sync.requests(for: "/d") == callers)
        #expect(performed.withLock { $0 } == 1)  // the first still runs; every other caller waits
        gate.signal()
        #expect(group.wait(timeout: .now() + 10) == .success)
        #expect(performed.withLock { $0 } == 2)
        #expect(sync.fsyncCount == 2)
        // One caller alone still gets an fsync of its own, begun after its call.
        try sync.synchronize("/d")
        #expect(sync.fsyncCount == 3)
    }

    @Test func `renames into a real directory are synced, and every caller returns`() async throws {
        try await withTemporaryDirectory { directory in
            let sync = DirectorySync()
            let group = DispatchGroup()
            let failures = Mutex(0)
            for index in 0..<16 {
                group.enter()
                Thread.detachNewThread {
                    _ = FileManager.default.createFile(atPath: "\(directory)/f\(index).part", contents: Data("x".utf8))
                    rename("\(directory)/f\(index).part", "\(directory)/f\(index)")
                    do { try sync.synchronize(directory) } catch { failures.withLock { $0 += 1 } }
                    group.leave()
                }
            }
            #expect(group.wait(timeout: .now() + 30) == .success)
            #expect(failures.withLock { $0 } == 0)
            #expect((1...16).contains(sync.fsyncCount))
        }
    }

    @Test func `a directory that cannot be synced is a file error for its caller`() {
        let error = #expect(throws: PinFetchError.self) { try DirectorySync().synchronize("/nonexistent/dir") }
        #expect(error?.code == .fileIO)
    }
}
