import Foundation
import Testing

@testable import PinFetch
@testable import PinFetchCLI

/// `--max-filesize`: an answer announcing more fails before its body, a body without a length
/// stops where it passes the bound, both exit 7 with the partial removed, and a larger cache entry
/// is not placed; a remote checksum file or manifest stops at 16 MiB while it streams.
struct MaximumFileSizeTests {
    static let quiet = ["-q", "--json", "--retry-delay", "0"]

    @Test(arguments: [("1000", 1000), ("10K", 10_240), ("3m", 3 << 20), ("2G", 2 << 30)] as [(String, Int64)])
    func `sizes are bytes, or KiB, MiB and GiB with a suffix`(text: String, bytes: Int64) throws {
        #expect(try Arguments.parse(["--max-filesize", text, "http://h/x"]).options.maximumFileSize == bytes)
    }

    @Test(arguments: ["0", "-1", "1T", "K", "x", "1.5M", "99999999999999999999", "9999999999G", "１"])
    func `a size that is not one is exit 2`(text: String) {
        let error = #expect(throws: PinFetchError.self) { try Arguments.parse(["--max-filesize", text, "http://h/x"]) }
        #expect(error?.code == .usage)
    }

    @Test(arguments: [false, true])
    func `a file larger than the bound is exit 7 and leaves nothing`(chunked: Bool) async throws {
        try await withTestHTTPServer(serving: TestResource(body: Fixtures.a, etag: Fixtures.etagA)) { server in
            server.faults = TestFaults(omitContentLength: chunked)
            try await withTemporaryDirectory { directory in
                let output = "\(directory)/out.bin"
                let result = await Fetcher.immediate { $0.maximumFileSize = 100 << 10 }.run(server.url(), to: output)
                #expect(result.error?.code == .protocolViolation, "\(failure(result))")
                #expect(result.error?.message.contains("larger than --max-filesize (102400 bytes)") == true)
                #expect(listing(directory).isEmpty)
                #expect(server.getRequests.count == 1)  // not retried: another answer would be as large
            }
        }
    }

    @Test func `a resume whose total is larger than the bound removes the partial`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: Fixtures.a, etag: Fixtures.etagA)) { server in
            try await withTemporaryDirectory { directory in
                let output = "\(directory)/out.bin"
                server.enqueueFaults(TestFaults(closeAfterBodyBytes: 400_000))
                let cut = await Fetcher.immediate(retries: 0).run(server.url(), to: output)
                #expect(cut.error?.code == .network, "\(failure(cut))")
                #expect(listing(directory) == ["out.bin.part", "out.bin.part.state"])
                let result = await Fetcher.immediate { $0.maximumFileSize = 500 << 10 }.run(server.url(), to: output)
                #expect(result.error?.code == .protocolViolation, "\(failure(result))")
                #expect(listing(directory).isEmpty)
            }
        }
    }

    @Test func `a file as large as the bound is fine`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: Fixtures.a, etag: Fixtures.etagA)) { server in
            try await withTemporaryDirectory { directory in
                let output = "\(directory)/out.bin"
                let result = await Fetcher.immediate { $0.maximumFileSize = 1 << 20 }.run(server.url(), to: output)
                #expect(result.error == nil, "\(failure(result))")
                #expect(contents(output) == Fixtures.a)
            }
        }
    }

    /// Announced (refused at the head) or not (refused while the body streams), the refusal is
    /// recognised as one, not as any failed fetch.
    @Test(arguments: [true, false])
    func `a remote checksum file over 16 MiB is exit 2, read no further than that`(chunked: Bool) async throws {
        let huge = [UInt8](repeating: 0x61, count: (16 << 20) + 4096)
        try await withTestHTTPServer(serving: TestResource(body: huge)) { server in
            server.faults = TestFaults(omitContentLength: chunked)
            try await withTemporaryDirectory { directory in
                let run = await runCLI(
                    Self.quiet + [
                        "--checksum-file", server.url(), "-o", "\(directory)/out.bin", "http://127.0.0.1:9/x",
                    ]
                )
                #expect(run.status == 2)
                #expect(
                    run.standardError.contains("is larger than 16777216 bytes: not a checksum file or manifest"),
                    "\(run.standardError)"
                )
                #expect(listing(directory).isEmpty)
            }
        }
    }

    /// User input: a --max-filesize smaller than a file the cache holds.
    @Test func `--max-filesize holds for a cache entry too`() async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let pin = try Pin(sha256Hex: Fixtures.sha256A)
                let cached = Fetcher.immediate(retries: 0) { $0.cacheDirectory = "\(directory)/c" }
                let first = await cached.run(server.url(), to: "\(directory)/x", verifying: pin)
                #expect(first.error == nil, "\(failure(first))")
                let bounded = await Fetcher.immediate(retries: 0) {
                    $0.cacheDirectory = "\(directory)/c"
                    $0.maximumFileSize = 1000
                }.run(server.url(), to: "\(directory)/y", verifying: pin)
                #expect(bounded.error?.code == .protocolViolation, "\(failure(bounded))")
                #expect(!FileSystem.exists("\(directory)/y"))
            }
        }
    }
}
