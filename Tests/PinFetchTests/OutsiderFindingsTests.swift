import Foundation
@preconcurrency import Glibc
import Testing

@testable import PinFetch

/// What an outsider broke before issue 10 was closed, each kept as the input that broke it.
struct OutsiderFindingsTests {
    static let quiet = ["-q", "--json", "--retry-delay", "0", "--retries", "0"]

    @Test func `messages escape what they echo: a name with ESC, CR and U+202E stays on its line`() async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let name = "\(directory)/\u{1B}[2J\rOK\u{202E}"
                let run = await runCLI(["--retries", "0", "--sha256", Fixtures.sha256B, "-o", name, server.url()])
                #expect(run.status == 9)
                #expect(!run.standardError.contains("\u{1B}") && !run.standardError.contains("\r"))
                #expect(!run.standardError.unicodeScalars.contains("\u{202E}"))
                #expect(run.standardError.contains("\\u{1B}[2J\\u{D}OK\\u{202E}"), "\(run.standardError)")
            }
        }
    }

    @Test func `--max-filesize holds for a cache entry too`() async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let pinned = Self.quiet + ["--cache-dir", "\(directory)/c", "--sha256", Fixtures.sha256A]
                #expect(await runCLI(pinned + ["-o", "\(directory)/x", server.url()]).status == 0)
                let bounded = await runCLI(pinned + ["--max-filesize", "1000", "-o", "\(directory)/y", server.url()])
                #expect(bounded.status == 7)
                #expect(!FileSystem.exists("\(directory)/y"))
            }
        }
    }

    @Test func `a relative PINFETCH_CACHE_DIR is bad input, and a directional mark is no name`() async throws {
        try await withTemporaryDirectory { directory in
            let child = try ChildProcess(
                try EndToEndTests.pinfetchExecutable(),
                ["-q", "-o", "\(directory)/x", "http://127.0.0.1:9/x"],
                logs: "\(directory)/run",
                environment: ["PINFETCH_CACHE_DIR": "relative"]
            )
            try await child.wait(timeout: .seconds(30))
            #expect(child.termination == .exited(2), "\(child.transcript)")
            #expect(child.standardError.contains("PINFETCH_CACHE_DIR must be an absolute path"))
            #expect(throws: PinFetchError.self) { try SafeFileName.resolve("a\u{200F}b", in: "d") }
            #expect(SafeFileName.fromContentDisposition("attachment; filename=\"a\u{200E}b\"") == "ab")
        }
    }
}
