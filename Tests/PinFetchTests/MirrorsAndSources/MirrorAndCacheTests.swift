import Foundation
import Testing

/// Several URLs of one file, a partial carried from one to another (with a pin only), and the
/// content-addressed cache.
struct MirrorAndCacheTests {
    static let quiet = ["-q", "--json", "--retry-delay", "0"]
    static var resourceA: TestResource { TestResource(body: Fixtures.a, etag: Fixtures.etagA) }

    @Test func `a failing mirror hands over to the next`() async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { broken in
            broken.faults = TestFaults(status: 404)
            try await withTestHTTPServer(serving: Self.resourceA) { good in
                try await withTemporaryDirectory { directory in
                    let run = await runCLI(
                        Self.quiet + ["--retries", "0", "--sha256", Fixtures.sha256A, "-o", "\(directory)/out.bin"]
                            + [broken.url(), good.url()]
                    )
                    #expect(run.status == 0)
                    #expect(contents("\(directory)/out.bin") == Fixtures.a)
                    #expect(broken.getRequests.count == 1)
                    #expect(good.getRequests.count == 1)
                    #expect(run.string("url") == broken.url())
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
                    let run = await runCLI(
                        Self.quiet + ["--retries", "1", "--sha256", Fixtures.sha256A, "-o", "\(directory)/out.bin"]
                            + [first.url(), second.url()]
                    )
                    #expect(run.status == 0)
                    #expect(contents("\(directory)/out.bin") == Fixtures.a)
                    let resume = try #require(second.getRequests.first)
                    #expect(resume.header("Range") == "bytes=400000-")
                    #expect(resume.header("If-Range") == nil)
                    #expect(run.int("downloaded_bytes") == 1_048_576)
                }
            }
        }
    }

    @Test func `without a pin a partial is not carried to another mirror`() async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { first in
            first.faults = TestFaults(closeAfterBodyBytes: 400_000)
            try await withTestHTTPServer(serving: TestResource(body: Fixtures.a, etag: "\"other\"")) { second in
                try await withTemporaryDirectory { directory in
                    let run = await runCLI(
                        Self.quiet + ["--retries", "0", "-o", "\(directory)/out.bin", first.url(), second.url()]
                    )
                    #expect(run.status == 0)
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
                        let run = await runCLI(
                            Self.quiet + ["--retries", "2", "--sha256", Fixtures.sha256A, "-o", "\(directory)/out.bin"]
                                + [first.url(), wrong.url(), third.url()]
                        )
                        #expect(run.status == 0)
                        #expect(contents("\(directory)/out.bin") == Fixtures.a)
                        #expect(run.int("restarts") == 0)
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
                let arguments = Self.quiet + ["--cache-dir", cache, "--sha256", Fixtures.sha256A]
                let first = await runCLI(arguments + ["-o", "\(directory)/one.bin", server.url()])
                #expect(first.status == 0)
                let entry = "\(cache)/sha256/\(Fixtures.sha256A)"
                #expect(contents(entry) == Fixtures.a)

                let second = await runCLI(arguments + ["-o", "\(directory)/two.bin", server.url()])
                #expect(second.status == 0)
                #expect(second.json["from_cache"] as? Bool == true)
                #expect(contents("\(directory)/two.bin") == Fixtures.a)
                #expect(server.getRequests.count == 1)
                #expect(server.requests.count == 1)  // the GET of the first run only

                try Data(Fixtures.b).write(to: URL(filePath: entry))  // corrupt the entry in place
                let third = await runCLI(arguments + ["-o", "\(directory)/three.bin", server.url()])
                #expect(third.status == 0)
                #expect(third.json["from_cache"] as? Bool == false)
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
                let arguments =
                    Self.quiet + ["--cache-dir", cache, "--sha256", Fixtures.sha256A, "-o", "\(directory)/out.bin"]
                server.enqueueFaults(TestFaults(closeAfterBodyBytes: 400_000))
                #expect(await runCLI(arguments + ["--retries", "0", server.url()]).status == 4)
                let entry = "\(cache)/sha256/\(Fixtures.sha256A)"
                try FileManager.default.createDirectory(atPath: "\(cache)/sha256", withIntermediateDirectories: true)
                try Data(Fixtures.b).write(to: URL(filePath: entry))
                let run = await runCLI(arguments + [server.url()])
                #expect(run.status == 0)
                #expect(run.int("resumed_from") == 400_000)
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
                    first.enqueueFaults(TestFaults(closeAfterBodyBytes: 400_000))
                    let failed = await runCLI(quietOnce + ["-o", output, first.url(), second.url()])
                    #expect(failed.status != 0)
                    let asked = try #require(second.getRequests.first)
                    #expect(asked.header("Range") == nil)  // another mirror: from byte 0
                    #expect(FileManager.default.fileExists(atPath: output + ".part.state"))
                    let again = await runCLI(quietOnce + ["-o", output, first.url(), second.url()])
                    #expect(again.status == 0, "\(again.standardError)")
                    #expect(again.int("resumed_from") == 400_000)
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
                    let pin = ["--sha256", Fixtures.sha256A]
                    old.enqueueFaults(TestFaults(closeAfterBodyBytes: 400_000))
                    #expect(await runCLI(quietOnce + pin + ["-o", output, old.url()]).status == 4)
                    let moved = await runCLI(quietOnce + pin + ["-o", output, new.url()])
                    #expect(moved.status == 0, "\(moved.standardError)")
                    #expect(moved.int("resumed_from") == 400_000)
                    let request = try #require(new.getRequests.last)
                    #expect(request.header("Range") == "bytes=400000-")
                    #expect(request.header("If-Range") == nil)
                    #expect(fileHolds(output, Fixtures.a))
                    // Without a pin it would not move: the same case unpinned starts from byte 0.
                    old.enqueueFaults(TestFaults(closeAfterBodyBytes: 400_000))
                    #expect(await runCLI(quietOnce + ["-o", "\(directory)/p", old.url()]).status == 4)
                    let unpinned = await runCLI(quietOnce + ["-o", "\(directory)/p", new.url()])
                    #expect(unpinned.status == 0 && unpinned.int("resumed_from") == 0)
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
                    first.enqueueFaults(TestFaults(closeAfterBodyBytes: 100_000))
                    second.enqueueFaults(TestFaults(closeAfterBodyBytes: 50_000))
                    let pinned = await runCLI(
                        quietOnce + ["--sha256", Fixtures.sha256A, "-o", output, first.url(), second.url()]
                    )
                    #expect(pinned.status == 4, "\(pinned.standardError)")
                    #expect(second.getRequests.first?.header("Range") == "bytes=100000-")
                    let unpinned = await runCLI(quietOnce + ["-o", output, second.url()])
                    #expect(unpinned.status == 0, "\(unpinned.standardError)")
                    #expect(unpinned.int("resumed_from") == 0)
                    #expect(second.getRequests.last?.header("Range") == nil)
                    #expect(fileHolds(output, Fixtures.b))
                }
            }
        }
    }
}
