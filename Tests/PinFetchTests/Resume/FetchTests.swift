import Foundation
import Testing

@testable import PinFetch

/// The single-file fetch against the in-process server: bytes on disk, digests, exit statuses
/// and the requests the server saw.
struct FetchTests {
    static let quiet = ["-q", "--json", "--retry-delay", "0"]

    /// Fixture A under a strong ETag.
    static var resourceA: TestResource { TestResource(body: Fixtures.a, etag: Fixtures.etagA) }

    /// Runs pinfetch for `server`'s file into `directory/out.bin`.
    func fetch(_ server: TestHTTPServer, into directory: String, _ extra: [String] = []) async -> CLIRun {
        await runCLI(Self.quiet + extra + ["-o", "\(directory)/out.bin", server.url()])
    }

    /// An earlier run that lost its connection after `bytes` body bytes, with no retries.
    func interruptedRun(
        _ server: TestHTTPServer,
        into directory: String,
        at bytes: Int,
        _ extra: [String] = []
    ) async -> CLIRun {
        server.enqueueFaults(TestFaults(closeAfterBodyBytes: bytes))
        return await self.fetch(server, into: directory, ["--retries", "0"] + extra)
    }

    @Test func `downloads, verifies and leaves only the file`() async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let run = await self.fetch(server, into: directory, ["--sha256", Fixtures.sha256A.uppercased()])
                #expect(run.status == 0)
                #expect(contents("\(directory)/out.bin") == Fixtures.a)
                #expect(listing(directory) == ["out.bin"])
                #expect(run.string("status") == "downloaded")
                #expect(run.string("sha256") == Fixtures.sha256A)
                #expect(run.int("bytes") == 1_048_576)
                #expect(run.int("downloaded_bytes") == 1_048_576)
                #expect(run.int("resumed_from") == 0)
                #expect(server.requests.map(\.method) == ["GET"])  // no partial: no HEAD
                for request in server.requests {
                    #expect(request.header("Accept-Encoding") == "identity")
                    #expect(request.header("Range") == nil)
                }
            }
        }
    }

    @Test func `an interrupted run keeps its checkpoint and the next run rereads nothing`() async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let first = await self.interruptedRun(server, into: directory, at: 400_000)
                #expect(first.status == 4)
                #expect(first.string("status") == "failed")
                #expect((first.json["error"] as? [String: Any])?["exit_code"] as? Int == 4)
                #expect(listing(directory) == ["out.bin.part", "out.bin.part.state"])
                #expect(contents("\(directory)/out.bin.part") == Array(Fixtures.a[..<400_000]))

                let sentBefore = server.bodyBytesSent
                let second = await self.fetch(server, into: directory, ["--sha256", Fixtures.sha256A])
                #expect(second.status == 0)
                #expect(contents("\(directory)/out.bin") == Fixtures.a)
                #expect(second.string("status") == "resumed")
                #expect(second.int("resumed_from") == 400_000)
                #expect(second.int("rehashed_bytes") == 0)
                #expect(second.int("downloaded_bytes") == 648_576)
                #expect(server.bodyBytesSent - sentBefore == 648_576)
                let resumeRequest = try #require(server.getRequests.last)
                #expect(resumeRequest.header("Range") == "bytes=400000-")
                #expect(resumeRequest.header("If-Range") == Fixtures.etagA)
                #expect(listing(directory) == ["out.bin"])
            }
        }
    }

    @Test func `a 200 answer to the ranged GET replaces the partial instead of appending`() async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                #expect(await self.interruptedRun(server, into: directory, at: 400_000).status == 4)
                server.faults = TestFaults(ignoreRange: true)
                let run = await self.fetch(server, into: directory, ["--sha256", Fixtures.sha256A])
                #expect(run.status == 0)
                #expect(contents("\(directory)/out.bin") == Fixtures.a)  // 1,048,576 bytes, not 1,448,576
                #expect(run.int("resumed_from") == 0)
                #expect(run.string("status") == "downloaded")
                #expect(run.int("restarts") == 1)
            }
        }
    }

    @Test(arguments: [(Fixtures.sha256A, Int32(9)), (Fixtures.sha256B, Int32(0))])
    func `a changed representation is never spliced onto the partial`(pin: String, expected: Int32) async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                #expect(await self.interruptedRun(server, into: directory, at: 400_000).status == 4)
                server.resource = TestResource(body: Fixtures.b, etag: Fixtures.etagB)
                let run = await self.fetch(server, into: directory, ["--sha256", pin])
                #expect(run.status == expected)
                if expected == 0 {
                    #expect(contents("\(directory)/out.bin") == Fixtures.b)
                    #expect(listing(directory) == ["out.bin"])
                } else {
                    #expect(listing(directory).isEmpty)
                    #expect(run.standardError.contains(Fixtures.sha256A))
                    #expect(run.standardError.contains(Fixtures.sha256B))
                }
                #expect(server.getRequests.last?.header("Range") == nil)
            }
        }
    }

    @Test func `a 206 that starts before the offset has its overlap skipped`() async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                #expect(await self.interruptedRun(server, into: directory, at: 400_000).status == 4)
                server.faults = TestFaults(contentRangeShift: 2688)  // bytes 397312-1048575/1048576
                let run = await self.fetch(server, into: directory, ["--sha256", Fixtures.sha256A])
                #expect(run.status == 0)
                #expect(contents("\(directory)/out.bin") == Fixtures.a)
                #expect(run.int("resumed_from") == 400_000)
            }
        }
    }

    @Test(arguments: [
        TestFaults(omitContentRange: true), TestFaults(multipartRanges: true),
        TestFaults(gzipEvenIfNotAllowed: true), TestFaults(contentRangeShift: -1000),
    ])
    func `an unusable 206 is never appended`(faults: TestFaults) async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                #expect(await self.interruptedRun(server, into: directory, at: 400_000).status == 4)
                server.enqueueFaults(faults)
                let run = await self.fetch(server, into: directory, ["--sha256", Fixtures.sha256A])
                #expect(run.status == 0)
                #expect(contents("\(directory)/out.bin") == Fixtures.a)
                #expect(run.int("resumed_from") == 0)
                #expect(server.getRequests.last?.header("Range") == nil)
            }
        }
    }

    @Test(arguments: [nil, 405])
    func `a partial holding the whole file is finalized without a body`(headStatus: Int?) async throws {
        let html = Array("<html><body>416 Range Not Satisfiable</body></html>".utf8)
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                try writePartial(
                    Fixtures.a[...],
                    of: 1_048_576,
                    to: "\(directory)/out.bin",
                    url: server.url(),
                    etag: Fixtures.etagA
                )
                server.faults = TestFaults(headStatus: headStatus, rangeNotSatisfiableBody: html)
                let run = await self.fetch(server, into: directory, ["--sha256", Fixtures.sha256A])
                #expect(run.status == 0)
                #expect(contents("\(directory)/out.bin") == Fixtures.a)
                #expect(run.int("downloaded_bytes") == 0)
                #expect(run.int("rehashed_bytes") == 0)
                if headStatus == nil {
                    #expect(server.getRequests.isEmpty)  // HEAD said equal: no GET at all
                } else {
                    #expect(server.getRequests.map { $0.header("Range") } == ["bytes=1048576-"])
                }
            }
        }
    }

    @Test func `a partial larger than the new version is discarded for one full GET`() async throws {
        let older = (0..<2_000_000).map { UInt8(($0 * 13 + 1) % 251) }
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                try writePartial(
                    older[..<1_200_000],
                    of: 2_000_000,
                    to: "\(directory)/out.bin",
                    url: server.url(),
                    etag: "\"old\""
                )
                let run = await self.fetch(server, into: directory, ["--sha256", Fixtures.sha256A])
                #expect(run.status == 0)
                #expect(contents("\(directory)/out.bin") == Fixtures.a)
                #expect(server.getRequests.count == 1)
                #expect(server.getRequests.first?.header("Range") == nil)
            }
        }
    }

    @Test func `a weak ETag never goes into If-Range`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: Fixtures.a, etag: "W/\"weak\"")) { server in
            try await withTemporaryDirectory { directory in
                #expect(await self.interruptedRun(server, into: directory, at: 400_000).status == 4)
                let run = await self.fetch(server, into: directory, ["--retries", "2"])
                server.enqueueFaults(TestFaults(closeAfterBodyBytes: 300_000))
                let again = await runCLI(Self.quiet + ["--retries", "2", "-o", "\(directory)/again.bin", server.url()])
                #expect(run.status == 0)
                #expect(again.status == 0)
                #expect(contents("\(directory)/out.bin") == Fixtures.a)
                #expect(contents("\(directory)/again.bin") == Fixtures.a)
                #expect(server.requests.allSatisfy { $0.header("If-Range") == nil })
                #expect(server.requests.allSatisfy { $0.header("Range") == nil })
            }
        }
    }

    @Test func `a strong Last-Modified is the validator when there is no ETag`() async throws {
        let date = "Sat, 01 Jan 2000 00:00:00 GMT"
        try await withTestHTTPServer(serving: TestResource(body: Fixtures.a, lastModified: date)) { server in
            try await withTemporaryDirectory { directory in
                #expect(await self.interruptedRun(server, into: directory, at: 400_000).status == 4)
                let run = await self.fetch(server, into: directory, ["--sha256", Fixtures.sha256A])
                #expect(run.status == 0)
                #expect(run.int("resumed_from") == 400_000)
                #expect(server.getRequests.last?.header("If-Range") == date)
                #expect(contents("\(directory)/out.bin") == Fixtures.a)
            }
        }
    }

    @Test func `retries within one run resume from the last byte received`() async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                server.enqueueFaults(TestFaults(closeAfterBodyBytes: 400_000))
                server.enqueueFaults(TestFaults(resetAfterBodyBytes: 300_000))
                let run = await self.fetch(server, into: directory, ["--retries", "2", "--sha256", Fixtures.sha256A])
                #expect(run.status == 0)
                #expect(contents("\(directory)/out.bin") == Fixtures.a)
                let ranges = server.getRequests.map { $0.header("Range") }
                #expect(ranges.prefix(2) == [nil, "bytes=400000-"])
                // A reset can discard bytes still in the socket buffers: the third asks for what was not received.
                let third = ranges.count == 3 ? ranges[2] ?? "" : ""
                let offset = Int(third.dropFirst("bytes=".count).dropLast()) ?? 0
                #expect((400_001...700_000).contains(offset))
                #expect(run.int("attempts") == 3)
                #expect(run.int("downloaded_bytes") == 1_048_576)
            }
        }
    }

    @Test func `a stalled body is abandoned and resumed`() async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                server.enqueueFaults(TestFaults(stallAfterBodyBytes: 300_000))
                let run = await self.fetch(
                    server,
                    into: directory,
                    ["--stall-timeout", "1", "--sha256", Fixtures.sha256A]
                )
                #expect(run.status == 0)
                #expect(contents("\(directory)/out.bin") == Fixtures.a)
                #expect(server.getRequests.map { $0.header("Range") } == [nil, "bytes=300000-"])
            }
        }
    }

    @Test func `Retry-After on a 503 is honoured`() async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                server.enqueueFaults(TestFaults(status: 503, retryAfter: "1"))
                let started = Date()
                let run = await self.fetch(server, into: directory, ["--sha256", Fixtures.sha256A])
                #expect(run.status == 0)
                #expect(Date().timeIntervalSince(started) >= 1)
                #expect(server.getRequests.count == 2)
                #expect(contents("\(directory)/out.bin") == Fixtures.a)
            }
        }
    }

    @Test(arguments: [
        (404, Int32(8), 1), (401, Int32(6), 1), (407, Int32(6), 1), (500, Int32(8), 3), (429, Int32(8), 3),
    ])
    func `an error status ends with its exit status and creates nothing`(
        status: Int,
        exit: Int32,
        gets: Int
    ) async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                server.faults = TestFaults(status: status)
                let run = await self.fetch(server, into: directory, ["--retries", "2"])
                #expect(run.status == exit)
                #expect(server.getRequests.count == gets)
                #expect(listing(directory).isEmpty)
                #expect((run.json["error"] as? [String: Any])?["exit_code"] as? Int == Int(exit))
            }
        }
    }

    @Test func `a mismatch is exit 9 with both digests and leaves nothing`() async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let run = await self.fetch(server, into: directory, ["--sha256", Fixtures.sha256B])
                #expect(run.status == 9)
                #expect(run.standardError.contains(Fixtures.sha256A) && run.standardError.contains(Fixtures.sha256B))
                #expect(listing(directory).isEmpty)
                #expect(run.int("restarts") == 0)
            }
        }
    }

    @Test func `without a pin the digest is still computed and reported`() async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let run = await self.fetch(server, into: directory)
                #expect(run.status == 0)
                #expect(run.string("sha256") == Fixtures.sha256A)
            }
        }
    }

    @Test func `a SHA-512 pin is checkpointed and resumed too`() async throws {
        let pin = "sha512:" + Fixtures.sha512(Fixtures.a)
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                #expect(
                    await self.interruptedRun(server, into: directory, at: 400_000, ["--checksum", pin]).status == 4
                )
                let run = await self.fetch(server, into: directory, ["--checksum", pin])
                #expect(run.status == 0)
                #expect(run.int("resumed_from") == 400_000)
                #expect(run.int("rehashed_bytes") == 0)
                #expect(run.string("sha512") == Fixtures.sha512(Fixtures.a))
                #expect(contents("\(directory)/out.bin") == Fixtures.a)
            }
        }
    }

    @Test func `a zero-byte file is created and verified without a Range`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: [], etag: "\"empty\"")) { server in
            try await withTemporaryDirectory { directory in
                let run = await self.fetch(server, into: directory, ["--sha256", Fixtures.sha256([])])
                #expect(run.status == 0)
                #expect(contents("\(directory)/out.bin") == [])
                #expect(server.requests.allSatisfy { $0.header("Range") == nil })
            }
        }
    }

    @Test func `the library API throws the typed error`() async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let fetcher = Fetcher()
                let result = try await fetcher.fetch(
                    server.url(),
                    to: "\(directory)/a",
                    verifying: try Pin(sha256Hex: Fixtures.sha256A)
                )
                #expect(result.digest == Fixtures.sha256A)
                await #expect(throws: PinFetchError.self) {
                    try await fetcher.fetch(
                        server.url(),
                        to: "\(directory)/b",
                        verifying: try Pin(sha256Hex: Fixtures.sha256B)
                    )
                }
            }
        }
    }

    /// Dead host: a name that does not resolve, with one retry.
    @Test func `a retry after a host that did not resolve repeats the network error, exit 4`() async throws {
        try await withTemporaryDirectory { directory in
            let run = await runCLI(
                quietOnce + ["--retries", "1", "-o", "\(directory)/o", "http://nonexist.invalid/x"]
            )
            #expect(run.status == 4, "\(run.standardError)")
            #expect(!run.standardError.contains("bad argument"))
            #expect(run.int("attempts") == 2)
        }
    }
}
