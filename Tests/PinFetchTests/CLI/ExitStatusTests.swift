import Foundation
import Testing

/// What the engine's outcomes become on the command line: the exit status, the `--json` line's
/// `exit_code`, and what standard error says (the outcomes themselves: ``FetchTests``).
struct ExitStatusTests {
    static let quiet = ["-q", "--json", "--retry-delay", "0"]

    /// Fixture A under a strong ETag.
    static var resourceA: TestResource { TestResource(body: Fixtures.a, etag: Fixtures.etagA) }

    /// An interrupted run (FetchTests) is exit 4, and a `--json` line of a failed file.
    @Test func `an interrupted run is exit 4 with a failed file's --json line`() async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                server.enqueueFaults(TestFaults(closeAfterBodyBytes: 400_000))
                let run = await runCLI(Self.quiet + ["--retries", "0", "-o", "\(directory)/out.bin", server.url()])
                #expect(run.status == 4)
                #expect(run.string("status") == "failed")
                #expect((run.json["error"] as? [String: Any])?["exit_code"] as? Int == 4)
            }
        }
    }

    /// An error status's kind (FetchTests) becomes its exit status, in the `--json` line too.
    @Test(arguments: [(404, Int32(8)), (401, Int32(6)), (407, Int32(6)), (500, Int32(8)), (429, Int32(8))])
    func `an error status ends with its exit status`(status: Int, exit: Int32) async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                server.faults = TestFaults(status: status)
                let run = await runCLI(Self.quiet + ["--retries", "0", "-o", "\(directory)/out.bin", server.url()])
                #expect(run.status == exit)
                #expect((run.json["error"] as? [String: Any])?["exit_code"] as? Int == Int(exit))
            }
        }
    }

    /// A mismatch (FetchTests) is exit 9, with both digests on standard error.
    @Test func `a mismatch is exit 9 with both digests on standard error`() async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let run = await runCLI(
                    Self.quiet + ["--sha256", Fixtures.sha256B, "-o", "\(directory)/out.bin", server.url()]
                )
                #expect(run.status == 9)
                #expect(run.standardError.contains(Fixtures.sha256A) && run.standardError.contains(Fixtures.sha256B))
            }
        }
    }
}
