import Foundation
@preconcurrency import Glibc
import PinFetchCLI
import Testing

@testable import PinFetch

/// What a second outsider pass broke in issue 12's build, each kept as the input that broke it.
extension OutsiderFindings12Tests {
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
}
