import Foundation
import PinFetch
import Testing

/// A mirror that lies: a mismatch on one mirror moves to the next, and costs only the lying
/// mirror's bytes; exit 9 only when every mirror that answered sent other bytes.
struct MirrorFailoverTests {
    static let quiet = ["-q", "--json", "--retry-delay", "0", "--retries", "0"]
    static var resourceB: TestResource { TestResource(body: Fixtures.b, etag: Fixtures.etagB) }

    /// The pin of file A, as `--sha256` gives it.
    static func pinA() throws -> Pin { try Pin(sha256Hex: Fixtures.sha256A) }

    /// One file pinned to A from `mirrors` in order, as several URLs on the command line are.
    static func job(_ mirrors: [String], to destination: String, pinned: Bool = true) throws -> FetchJob {
        FetchJob(mirrors: mirrors, destination: destination, pin: pinned ? try pinA() : nil)
    }

    /// The result of fetching `job` once, retrying nothing, as `--retries 0` does.
    static func once(_ job: FetchJob) async -> FetchResult { await Fetcher.immediate(retries: 0).run([job])[0] }

    @Test func `a mirror serving other bytes hands over to the next, which has the pinned file`() async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { good in
            try await withTestHTTPServer(serving: Self.resourceB) { lying in
                try await withTemporaryDirectory { directory in
                    let result = await Self.once(try Self.job([lying.url(), good.url()], to: "\(directory)/o"))
                    #expect(result.error == nil, "\(failure(result))")
                    #expect(contents("\(directory)/o") == Fixtures.a)
                    #expect(lying.getRequests.count == 1)
                    #expect(good.getRequests.count == 1)
                    #expect(good.getRequests.first?.header("Range") == nil)  // from byte 0
                    #expect(listing(directory) == ["o"])
                    #expect(result.url == lying.url())  // the file's identity: the first URL
                    #expect(result.source == good.url())
                    let mirrors = result.mirrors.map { "\($0.url) \($0.outcome)" }
                    #expect(mirrors == ["\(lying.url()) mismatch", "\(good.url()) ok"])
                }
            }
        }
    }

    /// A lying mirror is worth a line: the hand-over is shown without `-v` too.
    @Test func `a hand-over after a mismatch is one line on stderr without -v, none with -q`() async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { good in
            try await withTestHTTPServer(serving: Self.resourceB) { lying in
                try await withTemporaryDirectory { directory in
                    let arguments = ["--sha256", Fixtures.sha256A, "--retries", "0", lying.url(), good.url()]
                    let shown = await runCLI(["-o", "\(directory)/a"] + arguments)
                    #expect(shown.status == 0, "\(shown.standardError)")
                    let lines = shown.standardError.split(separator: "\n").filter { $0.contains("starting over") }
                    #expect(lines.count == 1 && lines[0].contains(lying.url()), "\(shown.standardError)")
                    let quiet = await runCLI(["-q", "-o", "\(directory)/b"] + arguments)
                    #expect(quiet.status == 0 && quiet.standardError.isEmpty, "\(quiet.standardError)")
                }
            }
        }
    }

    @Test func `exit 9 only when every mirror that answered sent other bytes`() async throws {
        try await withTestHTTPServer(serving: Self.resourceB) { second in
            try await withTestHTTPServer(serving: Self.resourceB) { first in
                try await withTestHTTPServer(serving: Self.resourceB) { gone in
                    gone.faults = TestFaults(status: 404)
                    try await withTemporaryDirectory { directory in
                        let both = await Self.once(try Self.job([first.url(), second.url()], to: "\(directory)/a"))
                        #expect(both.error?.code == .digestMismatch, "\(failure(both))")
                        #expect(first.getRequests.count == 1 && second.getRequests.count == 1)
                        // The other mirror gave no body at all: still the mismatch decides.
                        let withGone = await Self.once(try Self.job([first.url(), gone.url()], to: "\(directory)/b"))
                        #expect(withGone.error?.code == .digestMismatch, "\(failure(withGone))")
                        #expect(withGone.error?.message.contains("from \(first.url())") == true, "\(failure(withGone))")
                        #expect(listing(directory).isEmpty)
                    }
                }
            }
        }
    }

    @Test func `the JSON line names the mirror that delivered and how each tried mirror ended`() async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { good in
            try await withTestHTTPServer(serving: Self.resourceB) { gone in
                gone.faults = TestFaults(status: 404)
                try await withTemporaryDirectory { directory in
                    let run = await runCLI(Self.quiet + ["-o", "\(directory)/o", gone.url(), good.url()])
                    #expect(run.status == 0)
                    #expect(run.string("source") == good.url())
                    let outcomes = (run.json["mirrors"] as? [[String: Any]])?.map { $0["outcome"] as? String ?? "" }
                    #expect(outcomes == ["serverResponse", "ok"])
                    let again = await runCLI(
                        Self.quiet + ["--sha256", Fixtures.sha256A, "-o", "\(directory)/o", good.url()]
                    )
                    #expect(again.string("status") == "already-complete")
                    #expect(again.json["source"] is NSNull)
                    #expect((again.json["mirrors"] as? [Any])?.isEmpty == true)
                }
            }
        }
    }

    /// Lying mirror: listed first, it hands over to a good one, which then dies mid-body.
    @Test func `a good mirror failing mid-body after a hand-over keeps its partial, exit 4`() async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { good in
            try await withTestHTTPServer(serving: MirrorFailoverTests.resourceB) { lying in
                try await withTemporaryDirectory { directory in
                    let output = "\(directory)/o"
                    let job = try Self.job([lying.url(), good.url()], to: output)
                    good.enqueueFaults(TestFaults(closeAfterBodyBytes: 400_000))
                    let first = await Self.once(job)
                    #expect(first.error?.code == .network, "\(failure(first))")
                    #expect(FileManager.default.fileExists(atPath: output + ".part.state"))
                    #expect(!FileManager.default.fileExists(atPath: output))
                    let second = await Self.once(job)
                    #expect(second.error == nil, "\(failure(second))")
                    #expect(second.status == .resumed)
                    #expect(good.getRequests.last?.header("Range") == "bytes=400000-")
                    #expect(lying.getRequests.count == 1)  // the rerun went where the partial came from
                    #expect(fileHolds(output, Fixtures.a))
                }
            }
        }
    }

    /// Lying mirror: a Repr-Digest that disagrees with its body, and no pin.
    @Test func `a server digest mismatch moves to the next mirror, pin or not`() async throws {
        var lyingHead = TestResource(body: Fixtures.a, etag: Fixtures.etagA)
        lyingHead.extraHeaders = [("Repr-Digest", DigestFieldTests.field("sha-256", Fixtures.sha256B))]
        try await withTestHTTPServer(serving: lyingHead) { first in
            try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { second in
                try await withTemporaryDirectory { directory in
                    let job = try Self.job([first.url(), second.url()], to: "\(directory)/o", pinned: false)
                    let result = await Self.once(job)
                    #expect(result.error == nil, "\(failure(result))")
                    #expect(second.getRequests.count == 1)
                    #expect(fileHolds("\(directory)/o", Fixtures.a))
                }
            }
        }
    }

    /// Lying mirror: listed first, its bytes past a good mirror's pinned partial are other bytes.
    @Test func `a lying mirror's tail costs only the tail`() async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { good in
            try await withTestHTTPServer(serving: MirrorFailoverTests.resourceB) { lying in
                try await withTemporaryDirectory { directory in
                    let output = "\(directory)/o"
                    let job = try Self.job([lying.url(), good.url()], to: output)
                    good.enqueueFaults(TestFaults(closeAfterBodyBytes: 150_000))
                    let first = await Self.once(job)  // lying from 0, then good cut at 150,000
                    #expect(first.error?.code == .network, "\(failure(first))")
                    good.enqueueFaults(TestFaults(closeAfterBodyBytes: 1000))
                    good.enqueueFaults(TestFaults(closeAfterBodyBytes: 1000))
                    let second = await Self.once(job)
                    #expect(second.error?.code == .network, "\(failure(second))")
                    let lyingRanges = lying.getRequests.compactMap { $0.header("Range") }
                    #expect(lyingRanges == ["bytes=151000-"], "\(lyingRanges)")  // its tail was tried once
                    let kept = try #require(
                        FileManager.default.attributesOfItem(atPath: output + ".part")[.size] as? Int
                    )
                    #expect(kept == 152_000)
                    let third = await Self.once(job)
                    #expect(third.error == nil, "\(failure(third))")
                    #expect(third.resumedFrom == 152_000)
                    #expect(fileHolds(output, Fixtures.a))
                }
            }
        }
    }

    /// Lying mirror: the prefix of a pinned partial, continued on a good mirror once it is no longer listed.
    @Test func `a wrong prefix from a mirror no longer listed is replaced from byte 0`() async throws {
        try await withTestHTTPServer(serving: MirrorFailoverTests.resourceB) { lying in
            try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { good in
                try await withTemporaryDirectory { directory in
                    let output = "\(directory)/o"
                    lying.enqueueFaults(TestFaults(closeAfterBodyBytes: 100_000))
                    let first = await Self.once(try Self.job([lying.url()], to: output))
                    #expect(first.error?.code == .network, "\(failure(first))")
                    let result = await Self.once(try Self.job([good.url()], to: output))
                    #expect(result.error == nil, "\(failure(result))")
                    #expect(good.getRequests.map { $0.header("Range") } == ["bytes=100000-", nil])
                    #expect(fileHolds(output, Fixtures.a))
                }
            }
        }
    }
}
