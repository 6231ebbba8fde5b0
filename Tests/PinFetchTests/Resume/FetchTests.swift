import Foundation
import Synchronization
import Testing

@testable import PinFetch

/// The single-file fetch against the in-process server: bytes on disk, digests, error kinds
/// and the requests the server saw (the exit statuses they become: ``ExitStatusTests``).
struct FetchTests {
    /// Fixture A under a strong ETag.
    static var resourceA: TestResource { TestResource(body: Fixtures.a, etag: Fixtures.etagA) }

    /// Fetches `server`'s file into `directory/out.bin` verifying `pin`, retrying at once up to
    /// `retries` times (5, as the command line does), with what `configure` sets.
    func fetch(
        _ server: TestHTTPServer,
        into directory: String,
        pin: Pin? = nil,
        retries: Int = 5,
        _ configure: (inout FetchOptions) -> Void = { _ in }
    ) async -> FetchResult {
        await Fetcher.immediate(retries: retries, configure).run(
            server.url(),
            to: "\(directory)/out.bin",
            verifying: pin
        )
    }

    /// An earlier run that lost its connection after `bytes` body bytes, with no retries.
    func interruptedRun(
        _ server: TestHTTPServer,
        into directory: String,
        at bytes: Int,
        pin: Pin? = nil
    ) async -> FetchResult {
        server.enqueueFaults(TestFaults(closeAfterBodyBytes: bytes))
        return await self.fetch(server, into: directory, pin: pin, retries: 0)
    }

    @Test func `downloads, verifies and leaves only the file`() async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let result = await self.fetch(
                    server,
                    into: directory,
                    pin: try Pin(sha256Hex: Fixtures.sha256A.uppercased())
                )
                #expect(result.error == nil, "\(failure(result))")
                #expect(contents("\(directory)/out.bin") == Fixtures.a)
                #expect(listing(directory) == ["out.bin"])
                #expect(result.status == .downloaded)
                #expect(result.algorithm == .sha256 && result.digest == Fixtures.sha256A)
                #expect(result.bytes == 1_048_576)
                #expect(result.downloadedBytes == 1_048_576)
                #expect(result.resumedFrom == 0)
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
                #expect(first.error?.code == .network, "\(failure(first))")
                #expect(first.status == .failed)
                #expect(listing(directory) == ["out.bin.part", "out.bin.part.state"])
                #expect(contents("\(directory)/out.bin.part") == Array(Fixtures.a[..<400_000]))

                let sentBefore = server.bodyBytesSent
                let second = await self.fetch(server, into: directory, pin: try Pin(sha256Hex: Fixtures.sha256A))
                #expect(second.error == nil, "\(failure(second))")
                #expect(contents("\(directory)/out.bin") == Fixtures.a)
                #expect(second.status == .resumed)
                #expect(second.resumedFrom == 400_000)
                #expect(second.rehashedBytes == 0)
                #expect(second.downloadedBytes == 648_576)
                #expect(server.bodyBytesSent - sentBefore == 648_576)
                let resumeRequest = try #require(server.getRequests.last)
                #expect(resumeRequest.header("Range") == "bytes=400000-")
                #expect(resumeRequest.header("If-Range") == Fixtures.etagA)
                #expect(listing(directory) == ["out.bin"])
            }
        }
    }

    @Test func `a 206 that starts before the offset has its overlap skipped`() async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let cut = await self.interruptedRun(server, into: directory, at: 400_000)
                #expect(cut.error?.code == .network, "\(failure(cut))")
                server.faults = TestFaults(contentRangeShift: 2688)  // bytes 397312-1048575/1048576
                let result = await self.fetch(server, into: directory, pin: try Pin(sha256Hex: Fixtures.sha256A))
                #expect(result.error == nil, "\(failure(result))")
                #expect(contents("\(directory)/out.bin") == Fixtures.a)
                #expect(result.resumedFrom == 400_000)
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
                let cut = await self.interruptedRun(server, into: directory, at: 400_000)
                #expect(cut.error?.code == .network, "\(failure(cut))")
                server.enqueueFaults(faults)
                let result = await self.fetch(server, into: directory, pin: try Pin(sha256Hex: Fixtures.sha256A))
                #expect(result.error == nil, "\(failure(result))")
                #expect(contents("\(directory)/out.bin") == Fixtures.a)
                #expect(result.resumedFrom == 0)
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
                let result = await self.fetch(server, into: directory, pin: try Pin(sha256Hex: Fixtures.sha256A))
                #expect(result.error == nil, "\(failure(result))")
                #expect(contents("\(directory)/out.bin") == Fixtures.a)
                #expect(result.downloadedBytes == 0)
                #expect(result.rehashedBytes == 0)
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
                let result = await self.fetch(server, into: directory, pin: try Pin(sha256Hex: Fixtures.sha256A))
                #expect(result.error == nil, "\(failure(result))")
                #expect(contents("\(directory)/out.bin") == Fixtures.a)
                #expect(server.getRequests.count == 1)
                #expect(server.getRequests.first?.header("Range") == nil)
            }
        }
    }

    @Test func `a weak ETag never goes into If-Range`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: Fixtures.a, etag: "W/\"weak\"")) { server in
            try await withTemporaryDirectory { directory in
                let cut = await self.interruptedRun(server, into: directory, at: 400_000)
                #expect(cut.error?.code == .network, "\(failure(cut))")
                let result = await self.fetch(server, into: directory, retries: 2)
                server.enqueueFaults(TestFaults(closeAfterBodyBytes: 300_000))
                let again = await Fetcher.immediate(retries: 2).run(server.url(), to: "\(directory)/again.bin")
                #expect(result.error == nil, "\(failure(result))")
                #expect(again.error == nil, "\(failure(again))")
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
                let cut = await self.interruptedRun(server, into: directory, at: 400_000)
                #expect(cut.error?.code == .network, "\(failure(cut))")
                let result = await self.fetch(server, into: directory, pin: try Pin(sha256Hex: Fixtures.sha256A))
                #expect(result.error == nil, "\(failure(result))")
                #expect(result.resumedFrom == 400_000)
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
                let result = await self.fetch(
                    server,
                    into: directory,
                    pin: try Pin(sha256Hex: Fixtures.sha256A),
                    retries: 2
                )
                #expect(result.error == nil, "\(failure(result))")
                #expect(contents("\(directory)/out.bin") == Fixtures.a)
                let ranges = server.getRequests.map { $0.header("Range") }
                #expect(ranges.prefix(2) == [nil, "bytes=400000-"])
                // A reset can discard bytes still in the socket buffers: the third asks for what was not received.
                let third = ranges.count == 3 ? ranges[2] ?? "" : ""
                let offset = Int(third.dropFirst("bytes=".count).dropLast()) ?? 0
                #expect((400_001...700_000).contains(offset))
                #expect(result.attempts == 3)
                #expect(result.downloadedBytes == 1_048_576)
            }
        }
    }

    @Test func `a stalled body is abandoned and resumed`() async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                server.enqueueFaults(TestFaults(stallAfterBodyBytes: 300_000))
                let result = await self.fetch(server, into: directory, pin: try Pin(sha256Hex: Fixtures.sha256A)) {
                    $0.stallTimeout = 1
                }
                #expect(result.error == nil, "\(failure(result))")
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
                let result = await self.fetch(server, into: directory, pin: try Pin(sha256Hex: Fixtures.sha256A))
                #expect(result.error == nil, "\(failure(result))")
                #expect(Date().timeIntervalSince(started) >= 1)
                #expect(server.getRequests.count == 2)
                #expect(contents("\(directory)/out.bin") == Fixtures.a)
            }
        }
    }

    /// The wait before a retry is reported as such, after the retry event that names the delay,
    /// so a display shows a wait rather than a stall.
    @Test func `a Retry-After wait is reported as waiting to retry`() async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                server.enqueueFaults(TestFaults(status: 503, retryAfter: "2"))
                let seen = Mutex<[String]>([])
                let result = await Fetcher.immediate {
                    $0.events = { event in
                        switch event {
                        case .retrying(let retry): seen.withLock { $0.append("retry \(retry.delaySeconds)") }
                        case .progress(let progress) where progress.phase == .waitingToRetry:
                            seen.withLock { $0.append("waiting") }
                        default: break
                        }
                    }
                }.run(server.url(), to: "\(directory)/out.bin")
                #expect(result.error == nil, "\(failure(result))")
                let events = seen.withLock { $0 }
                #expect(events.first == "retry 2.0" && events.dropFirst().allSatisfy { $0 == "waiting" }, "\(events)")
                #expect(events.count >= 2, "\(events)")
            }
        }
    }

    @Test(arguments: [
        (404, PinFetchError.Code.serverResponse, 1), (401, .authentication, 1), (407, .authentication, 1),
        (500, .serverResponse, 3), (429, .serverResponse, 3),
    ])
    func `an error status ends with its kind and creates nothing`(
        status: Int,
        code: PinFetchError.Code,
        gets: Int
    ) async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                server.faults = TestFaults(status: status)
                let result = await self.fetch(server, into: directory, retries: 2)
                #expect(result.error?.code == code, "\(failure(result))")
                #expect(server.getRequests.count == gets)
                #expect(listing(directory).isEmpty)
            }
        }
    }

    @Test func `a mismatch names both digests and leaves nothing`() async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let result = await self.fetch(server, into: directory, pin: try Pin(sha256Hex: Fixtures.sha256B))
                #expect(result.error?.code == .digestMismatch, "\(failure(result))")
                let message = result.error?.message ?? ""
                #expect(message.contains(Fixtures.sha256A) && message.contains(Fixtures.sha256B))
                #expect(listing(directory).isEmpty)
                #expect(result.restarts == 0)
            }
        }
    }

    @Test func `without a pin the digest is still computed and reported`() async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let result = await self.fetch(server, into: directory)
                #expect(result.error == nil, "\(failure(result))")
                #expect(result.algorithm == .sha256 && result.digest == Fixtures.sha256A)
            }
        }
    }

    @Test func `a SHA-512 pin is checkpointed and resumed too`() async throws {
        let pin = try Pin(parsing: "sha512:" + Fixtures.sha512(Fixtures.a))
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let cut = await self.interruptedRun(server, into: directory, at: 400_000, pin: pin)
                #expect(cut.error?.code == .network, "\(failure(cut))")
                let result = await self.fetch(server, into: directory, pin: pin)
                #expect(result.error == nil, "\(failure(result))")
                #expect(result.resumedFrom == 400_000)
                #expect(result.rehashedBytes == 0)
                #expect(result.algorithm == .sha512)
                #expect(result.digest == Fixtures.sha512(Fixtures.a))
                #expect(contents("\(directory)/out.bin") == Fixtures.a)
            }
        }
    }

    @Test func `a zero-byte file is created and verified without a Range`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: [], etag: "\"empty\"")) { server in
            try await withTemporaryDirectory { directory in
                let result = await self.fetch(server, into: directory, pin: try Pin(sha256Hex: Fixtures.sha256([])))
                #expect(result.error == nil, "\(failure(result))")
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
            let result = await Fetcher.immediate(retries: 1).run("http://nonexist.invalid/x", to: "\(directory)/o")
            #expect(result.error?.code == .network, "\(failure(result))")
            #expect(result.error?.message.contains("bad argument") == false)
            #expect(result.attempts == 2)
        }
    }
}
