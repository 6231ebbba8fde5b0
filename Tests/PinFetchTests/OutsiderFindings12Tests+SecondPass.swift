import Foundation
@preconcurrency import Glibc
import PinFetchCLI
import Testing

@testable import PinFetch

/// What a second outsider pass broke in issue 12's build, each kept as the input that broke it.
extension OutsiderFindings12Tests {
    /// Second outsider pass, finding 3: a pinned partial from a good mirror (strong validator)
    /// was handed to a lying mirror with a plain `Range`; its tail mismatched and the whole
    /// partial went. Now only the tail goes, and the prefix is continued on its own mirror.
    @Test func `a lying mirror's tail costs only the tail`() async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { good in
            try await withTestHTTPServer(serving: MirrorFailoverTests.resourceB) { lying in
                try await withTemporaryDirectory { directory in
                    let output = "\(directory)/o"
                    let arguments = Self.quiet + ["--sha256", Fixtures.sha256A, "-o", output, lying.url(), good.url()]
                    good.enqueueFaults(TestFaults(closeAfterBodyBytes: 150_000))
                    #expect(await runCLI(arguments).status == 4)  // lying from 0, then good cut at 150,000
                    good.enqueueFaults(TestFaults(closeAfterBodyBytes: 1000))
                    good.enqueueFaults(TestFaults(closeAfterBodyBytes: 1000))
                    let second = await runCLI(arguments)
                    #expect(second.status == 4, "\(second.standardError)")
                    let lyingRanges = lying.getRequests.compactMap { $0.header("Range") }
                    #expect(lyingRanges == ["bytes=151000-"], "\(lyingRanges)")  // its tail was tried once
                    let kept = try #require(
                        FileManager.default.attributesOfItem(atPath: output + ".part")[.size] as? Int
                    )
                    #expect(kept == 152_000)
                    let third = await runCLI(arguments)
                    #expect(third.status == 0, "\(third.standardError)")
                    #expect(third.int("resumed_from") == 152_000)
                    #expect(Self.holds(output, Fixtures.a))
                }
            }
        }
    }

    /// Second outsider pass, finding 7: without a pin, a mirror whose body disagreed with its
    /// own digest field ended the run with exit 9; the next mirror was never asked.
    @Test func `a server digest mismatch moves to the next mirror, pin or not`() async throws {
        var lyingHead = TestResource(body: Fixtures.a, etag: Fixtures.etagA)
        lyingHead.extraHeaders = [("Repr-Digest", DigestFieldTests.field("sha-256", Fixtures.sha256B))]
        try await withTestHTTPServer(serving: lyingHead) { first in
            try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { second in
                try await withTemporaryDirectory { directory in
                    let run = await runCLI(Self.quiet + ["-o", "\(directory)/o", first.url(), second.url()])
                    #expect(run.status == 0, "\(run.standardError)")
                    #expect(second.getRequests.count == 1)
                    #expect(Self.holds("\(directory)/o", Fixtures.a))
                }
            }
        }
    }

    /// Second outsider pass, findings 9 and 11: a temporary directory that could not be made
    /// (here under `/proc`) ended the run with exit 3 and no `--json` line; an input file's
    /// line named a partial in a temporary directory already removed.
    @Test func `every failure has its json line, and an input file's names no removed partial`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: [])) { server in
            server.handler = { request, _ in
                request.target == "/cut"
                    ? TestResponse(status: 200, headers: [("Content-Length", "100")], body: Array("abc".utf8))
                    : TestResponse(status: 200, body: Array("file".utf8))
            }
            try await withTemporaryDirectory { directory in
                for arguments in [
                    ["-o", "-", server.url("/f")], ["-i", server.url("/list"), "--base-url", server.url("/")],
                ] {
                    let child = try ChildProcess(
                        try EndToEndTests.pinfetchExecutable(),
                        ["--json", "-q", "--retries", "0"] + arguments,
                        logs: "\(directory)/log",
                        environment: ["TMPDIR": "/proc"]
                    )
                    #expect(try await child.wait(timeout: .seconds(30)) == .exited(3), "\(child.transcript)")
                    let lines = jsonLines(child.standardOutput + child.standardError)
                    #expect(
                        lines.count == 1 && (lines.first?["error"] as? [String: Any])?["kind"] as? String == "fileIO",
                        "\(child.transcript)"
                    )
                    #expect(server.requests.isEmpty)
                }
                let cut = await runCLI(Self.quiet + ["-i", server.url("/cut"), "-P", "\(directory)/o"])
                #expect(cut.status == 4, "\(cut.standardError)")
                #expect(cut.string("input") == "manifest")
                #expect(cut.json["partial"] is NSNull, "\(cut.standardOutput)")
            }
        }
    }

    /// Second outsider pass, finding 13: without -i, the message spoke of "-i FILE".
    @Test func `--base-url with a URL and no -i says what --base-url needs`() {
        let error = #expect(throws: PinFetchError.self) {
            try Arguments.parse(["--checksum-file", "SUMS", "--base-url", "http://h.test/", "http://h.test/f"])
        }
        #expect(error?.code == .usage)
        #expect(error?.message.hasPrefix("--base-url goes with -i FILE") == true, "\(error?.message ?? "")")
    }

    /// Third outsider pass, finding 1: after a pinned cross-mirror resume, the checkpoint named
    /// the second mirror and its ETag for every byte; a later run without a pin resumed there
    /// with `If-Range` and committed A's first bytes with B's last, exit 0.
    @Test func `a partial of two mirrors' bytes resumes only with a pin`() async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { first in
            try await withTestHTTPServer(serving: MirrorFailoverTests.resourceB) { second in
                try await withTemporaryDirectory { directory in
                    let output = "\(directory)/o"
                    first.enqueueFaults(TestFaults(closeAfterBodyBytes: 100_000))
                    second.enqueueFaults(TestFaults(closeAfterBodyBytes: 50_000))
                    let pinned = await runCLI(
                        Self.quiet + ["--sha256", Fixtures.sha256A, "-o", output, first.url(), second.url()]
                    )
                    #expect(pinned.status == 4, "\(pinned.standardError)")
                    #expect(second.getRequests.first?.header("Range") == "bytes=100000-")
                    let unpinned = await runCLI(Self.quiet + ["-o", output, second.url()])
                    #expect(unpinned.status == 0, "\(unpinned.standardError)")
                    #expect(unpinned.int("resumed_from") == 0)
                    #expect(second.getRequests.last?.header("Range") == nil)
                    #expect(Self.holds(output, Fixtures.b))
                }
            }
        }
    }

    /// Third outsider pass, finding 2: a pinned prefix from a lying mirror, continued on the one
    /// listed mirror that has the file, ended every rerun with exit 9, blaming that mirror.
    @Test func `a wrong prefix from a mirror no longer listed is replaced from byte 0`() async throws {
        try await withTestHTTPServer(serving: MirrorFailoverTests.resourceB) { lying in
            try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { good in
                try await withTemporaryDirectory { directory in
                    let output = "\(directory)/o"
                    lying.enqueueFaults(TestFaults(closeAfterBodyBytes: 100_000))
                    let pin = ["--sha256", Fixtures.sha256A]
                    #expect(await runCLI(Self.quiet + pin + ["-o", output, lying.url()]).status == 4)
                    let run = await runCLI(Self.quiet + pin + ["-o", output, good.url()])
                    #expect(run.status == 0, "\(run.standardError)")
                    #expect(good.getRequests.map { $0.header("Range") } == ["bytes=100000-", nil])
                    #expect(Self.holds(output, Fixtures.a))
                }
            }
        }
    }
}
