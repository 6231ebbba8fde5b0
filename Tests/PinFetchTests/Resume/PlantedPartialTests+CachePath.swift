import Foundation
@preconcurrency import Glibc
import Testing

@testable import PinFetch

extension PlantedPartialTests {
    /// Options with a cache in `directory` that holds `Fixtures.a` (fetched to `output`, which is
    /// removed again), and the pin to ask for it by.
    static func cacheHoldingA(
        for output: String,
        in directory: String,
        from server: TestHTTPServer
    ) async throws -> (FetchOptions, Pin) {
        var options = Self.once
        options.cacheDirectory = "\(directory)/cache"
        let pin = try Pin(sha256Hex: Fixtures.sha256A)
        let filled = await Fetcher(options: options).run(server.url(), to: output, verifying: pin)
        #expect(filled.error == nil, "\(failure(filled))")
        try FileManager.default.removeItem(atPath: output)
        return (options, pin)
    }

    /// `-o x.part.cache` is a destination too: a cache copy for `x` that would be made there
    /// leaves a file with bytes and without pinfetch's mark alone (exit 3), and takes the place
    /// of one an earlier copy for `x` left (marked).
    @Test(arguments: [false, true])
    func `a file at the cache copy's path is replaced only when an earlier copy for this destination left it`(
        marked: Bool
    ) async throws {
        try await withTestHTTPServer(serving: Self.resource) { server in
            try await withTemporaryDirectory { directory in
                let output = "\(directory)/out.bin"
                let (options, pin) = try await Self.cacheHoldingA(for: output, in: directory, from: server)
                let planted = output + ".part.cache"
                let theirs = Array("someone's verified output".utf8)
                try Data(theirs).write(to: URL(filePath: planted))
                if marked { _ = try PartialFile(path: planted, partialOf: output) }  // opening it marks it
                let asked = server.getRequests.count
                let result = await Fetcher(options: options).run(server.url(), to: output, verifying: pin)
                if marked {
                    #expect(result.error == nil, "\(failure(result))")
                    #expect(result.fromCache)
                    #expect(contents(output) == Fixtures.a)
                    #expect(!FileManager.default.fileExists(atPath: planted))
                } else {
                    #expect(result.error?.code == .fileIO, "\(failure(result))")
                    #expect(result.error?.message.contains("left alone") == true, "\(failure(result))")
                    #expect(contents(planted) == theirs)
                    #expect(!FileManager.default.fileExists(atPath: output))
                }
                #expect(server.getRequests.count == asked)
            }
        }
    }
}

extension PlantedPartialTests {
    /// A partial keeps its mark until it is placed, and the placed file keeps none: a run killed
    /// in the fsync before the rename leaves a complete, marked partial without a checkpoint
    /// (a small file), which the next run takes as its own and fetches again.
    @Test
    func `a marked partial left by a kill just before placement is taken as its own, and placed files carry no mark`()
        async throws
    {
        try await withTestHTTPServer(serving: Self.resource) { server in
            try await withTemporaryDirectory { directory in
                let output = "\(directory)/out.bin"
                try Data(Fixtures.a).write(to: URL(filePath: output + ".part"))
                _ = try PartialFile(path: output + ".part", partialOf: output)  // opening it marks it
                let pin = try Pin(sha256Hex: Fixtures.sha256A)
                let result = await Fetcher(options: Self.once).run(server.url(), to: output, verifying: pin)
                #expect(result.error == nil, "\(failure(result))")
                #expect(contents(output) == Fixtures.a)
                #expect(PartialMark.read(output) == .none || PartialMark.read(output) == .unsupported)
                #expect(listing(directory) == ["out.bin"])
            }
        }
    }
}

extension PlantedPartialTests {
    /// A link (dangling or not), a FIFO or a directory at the cache copy's path is never
    /// pinfetch's: exit 3, left alone, and nothing asked of the server.
    @Test(arguments: ["fifo", "link", "dangling link", "directory"])
    func `something other than a file at the cache copy's path is left alone`(kind: String) async throws {
        try await withTestHTTPServer(serving: Self.resource) { server in
            try await withTemporaryDirectory { directory in
                let output = "\(directory)/out.bin"
                let (options, pin) = try await Self.cacheHoldingA(for: output, in: directory, from: server)
                let planted = output + ".part.cache"
                let target = "\(directory)/target"
                try Data("keep".utf8).write(to: URL(filePath: target))
                try Self.plant(kind, at: planted, linkingTo: target)
                let asked = server.getRequests.count
                let result = await Fetcher(options: options).run(server.url(), to: output, verifying: pin)
                #expect(result.error?.code == .fileIO, "\(failure(result))")
                #expect(
                    result.error?.message.contains("\(planted) is not a regular file") == true,
                    "\(failure(result))"
                )
                #expect(FileSystem.exists(planted) && !FileSystem.exists(output))
                #expect(contents(target) == Array("keep".utf8))
                #expect(server.getRequests.count == asked)
            }
        }
    }
}
