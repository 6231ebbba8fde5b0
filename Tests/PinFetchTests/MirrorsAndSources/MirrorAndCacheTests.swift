import Foundation
import PinFetch
import Testing

/// Several URLs of one file, a partial carried from one to another (with a pin only), and the
/// content-addressed cache.
struct MirrorAndCacheTests {
    static var resourceA: TestResource { TestResource(body: Fixtures.a, etag: Fixtures.etagA) }

    /// One file from `mirrors` in order, pinned to A unless `pinned` is false, as several URLs
    /// and `--sha256` on the command line are.
    static func job(_ mirrors: [String], to destination: String, pinned: Bool = true) throws -> FetchJob {
        FetchJob(mirrors: mirrors, destination: destination, pin: pinned ? try Pin(sha256Hex: Fixtures.sha256A) : nil)
    }

    /// The result of fetching `job` with `fetcher`.
    static func run(_ job: FetchJob, with fetcher: Fetcher) async -> FetchResult { await fetcher.run([job])[0] }

    @Test func `a failing mirror hands over to the next`() async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { broken in
            broken.faults = TestFaults(status: 404)
            try await withTestHTTPServer(serving: Self.resourceA) { good in
                try await withTemporaryDirectory { directory in
                    let job = try Self.job([broken.url(), good.url()], to: "\(directory)/out.bin")
                    let result = await Self.run(job, with: .immediate(retries: 0))
                    #expect(result.error == nil, "\(failure(result))")
                    #expect(contents("\(directory)/out.bin") == Fixtures.a)
                    #expect(broken.getRequests.count == 1)
                    #expect(good.getRequests.count == 1)
                    #expect(result.url == broken.url())
                }
            }
        }
    }

    @Test func `with a pin a partial from one mirror is resumed on another`() async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { first in
            first.enqueueFaults(TestFaults(closeAfterBodyBytes: 400_000))
            first.faults = TestFaults(status: 503)
            // The same bytes under another ETag, as two independent mirrors would serve them.
            try await withTestHTTPServer(serving: TestResource(body: Fixtures.a, etag: "\"other\"")) { second in
                try await withTemporaryDirectory { directory in
                    let job = try Self.job([first.url(), second.url()], to: "\(directory)/out.bin")
                    let result = await Self.run(job, with: .immediate(retries: 1))
                    #expect(result.error == nil, "\(failure(result))")
                    #expect(contents("\(directory)/out.bin") == Fixtures.a)
                    let resume = try #require(second.getRequests.first)
                    #expect(resume.header("Range") == "bytes=400000-")
                    #expect(resume.header("If-Range") == nil)
                    #expect(result.downloadedBytes == 1_048_576)
                }
            }
        }
    }

    @Test func `without a pin a partial is not carried to another mirror`() async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { first in
            first.faults = TestFaults(closeAfterBodyBytes: 400_000)
            try await withTestHTTPServer(serving: TestResource(body: Fixtures.a, etag: "\"other\"")) { second in
                try await withTemporaryDirectory { directory in
                    let job = try Self.job([first.url(), second.url()], to: "\(directory)/out.bin", pinned: false)
                    let result = await Self.run(job, with: .immediate(retries: 0))
                    #expect(result.error == nil, "\(failure(result))")
                    #expect(second.getRequests.map { $0.header("Range") } == [nil])
                    #expect(contents("\(directory)/out.bin") == Fixtures.a)
                }
            }
        }
    }

    /// The wrong mirror's tail goes, the first mirror's 400,000 bytes stay: the third mirror
    /// continues them (the whole partial does not go).
    @Test func `a mirror serving other bytes is caught by the pin and only its tail is fetched again`() async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { first in
            first.enqueueFaults(TestFaults(closeAfterBodyBytes: 400_000))
            first.faults = TestFaults(status: 503)
            try await withTestHTTPServer(serving: TestResource(body: Fixtures.b, etag: "\"b\"")) { wrong in
                try await withTestHTTPServer(serving: Self.resourceA) { third in
                    try await withTemporaryDirectory { directory in
                        let job = try Self.job([first.url(), wrong.url(), third.url()], to: "\(directory)/out.bin")
                        let result = await Self.run(job, with: .immediate(retries: 2))
                        #expect(result.error == nil, "\(failure(result))")
                        #expect(contents("\(directory)/out.bin") == Fixtures.a)
                        #expect(result.restarts == 0)
                        #expect(wrong.getRequests.map { $0.header("Range") } == ["bytes=400000-"])
                        #expect(third.getRequests.map { $0.header("Range") } == ["bytes=400000-"])
                    }
                }
            }
        }
    }

    @Test func `a cached file is placed without a request, re-verified, and a corrupt entry replaced`() async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let cache = "\(directory)/cache"
                let fetcher = Fetcher.immediate { $0.cacheDirectory = cache }
                let first = await Self.run(try Self.job([server.url()], to: "\(directory)/one.bin"), with: fetcher)
                #expect(first.error == nil, "\(failure(first))")
                let entry = "\(cache)/sha256/\(Fixtures.sha256A)"
                #expect(contents(entry) == Fixtures.a)

                let second = await Self.run(try Self.job([server.url()], to: "\(directory)/two.bin"), with: fetcher)
                #expect(second.error == nil, "\(failure(second))")
                #expect(second.fromCache == true)
                #expect(contents("\(directory)/two.bin") == Fixtures.a)
                #expect(server.getRequests.count == 1)
                #expect(server.requests.count == 1)  // the GET of the first run only

                try Data(Fixtures.b).write(to: URL(filePath: entry))  // corrupt the entry in place
                let third = await Self.run(try Self.job([server.url()], to: "\(directory)/three.bin"), with: fetcher)
                #expect(third.error == nil, "\(failure(third))")
                #expect(third.fromCache == false)
                #expect(contents("\(directory)/three.bin") == Fixtures.a)
                #expect(contents(entry) == Fixtures.a)
                #expect(server.getRequests.count == 2)
            }
        }
    }

    @Test func `a corrupt cache entry never costs a resumable partial`() async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let cache = "\(directory)/cache"
                let job = try Self.job([server.url()], to: "\(directory)/out.bin")
                server.enqueueFaults(TestFaults(closeAfterBodyBytes: 400_000))
                let cut = await Self.run(job, with: .immediate(retries: 0) { $0.cacheDirectory = cache })
                #expect(cut.error?.code == .network, "\(failure(cut))")
                let entry = "\(cache)/sha256/\(Fixtures.sha256A)"
                try FileManager.default.createDirectory(atPath: "\(cache)/sha256", withIntermediateDirectories: true)
                try Data(Fixtures.b).write(to: URL(filePath: entry))
                let result = await Self.run(job, with: .immediate { $0.cacheDirectory = cache })
                #expect(result.error == nil, "\(failure(result))")
                #expect(result.resumedFrom == 400_000)
                #expect(contents("\(directory)/out.bin") == Fixtures.a)
                #expect(contents(entry) == Fixtures.a)
                #expect(listing(directory) == ["cache", "out.bin"])
            }
        }
    }

    /// Dead mirror: a next mirror that answers 503 after the first was cut mid-body, without a pin.
    @Test func `an unpinned partial survives a mirror that fails before answering`() async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { first in
            try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { second in
                second.faults = TestFaults(status: 503)
                try await withTemporaryDirectory { directory in
                    let output = "\(directory)/o"
                    let job = try Self.job([first.url(), second.url()], to: output, pinned: false)
                    first.enqueueFaults(TestFaults(closeAfterBodyBytes: 400_000))
                    let failed = await Self.run(job, with: .immediate(retries: 0))
                    #expect(failed.error != nil)
                    let asked = try #require(second.getRequests.first)
                    #expect(asked.header("Range") == nil)  // another mirror: from byte 0
                    #expect(FileManager.default.fileExists(atPath: output + ".part.state"))
                    let again = await Self.run(job, with: .immediate(retries: 0))
                    #expect(again.error == nil, "\(failure(again))")
                    #expect(again.resumedFrom == 400_000)
                    #expect(first.getRequests.last?.header("If-Range") == Fixtures.etagA)
                    #expect(fileHolds(output, Fixtures.a))
                }
            }
        }
    }

    /// User input: a rerun whose mirror list no longer holds the pinned partial's mirror.
    @Test func `a pinned partial moves to a mirror list without its own mirror`() async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { old in
            try await withTestHTTPServer(serving: TestResource(body: Fixtures.a, etag: "\"other\"")) { new in
                try await withTemporaryDirectory { directory in
                    let output = "\(directory)/o"
                    let once = Fetcher.immediate(retries: 0)
                    old.enqueueFaults(TestFaults(closeAfterBodyBytes: 400_000))
                    let cut = await Self.run(try Self.job([old.url()], to: output), with: once)
                    #expect(cut.error?.code == .network, "\(failure(cut))")
                    let moved = await Self.run(try Self.job([new.url()], to: output), with: once)
                    #expect(moved.error == nil, "\(failure(moved))")
                    #expect(moved.resumedFrom == 400_000)
                    let request = try #require(new.getRequests.last)
                    #expect(request.header("Range") == "bytes=400000-")
                    #expect(request.header("If-Range") == nil)
                    #expect(fileHolds(output, Fixtures.a))
                    // Without a pin it would not move: the same case unpinned starts from byte 0.
                    old.enqueueFaults(TestFaults(closeAfterBodyBytes: 400_000))
                    let other = "\(directory)/p"
                    let cutUnpinned = await Self.run(try Self.job([old.url()], to: other, pinned: false), with: once)
                    #expect(cutUnpinned.error?.code == .network, "\(failure(cutUnpinned))")
                    let unpinned = await Self.run(try Self.job([new.url()], to: other, pinned: false), with: once)
                    #expect(unpinned.error == nil && unpinned.resumedFrom == 0, "\(failure(unpinned))")
                    #expect(new.getRequests.last?.header("Range") == nil)
                }
            }
        }
    }

    /// Lying mirror: a pinned partial of two mirrors' bytes, rerun without the pin on the second one.
    @Test func `a partial of two mirrors' bytes resumes only with a pin`() async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { first in
            try await withTestHTTPServer(serving: MirrorFailoverTests.resourceB) { second in
                try await withTemporaryDirectory { directory in
                    let output = "\(directory)/o"
                    let once = Fetcher.immediate(retries: 0)
                    first.enqueueFaults(TestFaults(closeAfterBodyBytes: 100_000))
                    second.enqueueFaults(TestFaults(closeAfterBodyBytes: 50_000))
                    let pinned = await Self.run(try Self.job([first.url(), second.url()], to: output), with: once)
                    #expect(pinned.error?.code == .network, "\(failure(pinned))")
                    #expect(second.getRequests.first?.header("Range") == "bytes=100000-")
                    let unpinned = await Self.run(try Self.job([second.url()], to: output, pinned: false), with: once)
                    #expect(unpinned.error == nil, "\(failure(unpinned))")
                    #expect(unpinned.resumedFrom == 0)
                    #expect(second.getRequests.last?.header("Range") == nil)
                    #expect(fileHolds(output, Fixtures.b))
                }
            }
        }
    }
}
