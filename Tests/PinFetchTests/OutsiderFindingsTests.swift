import Foundation
@preconcurrency import Glibc
import Testing

@testable import PinFetch

/// What an outsider broke before issue 10 was closed, each kept as the input that broke it.
struct OutsiderFindingsTests {
    static let quiet = ["-q", "--json", "--retry-delay", "0", "--retries", "0"]

    @Test(
        .enabled(if: geteuid() == 0, "needs root to act as the user nobody"),
        arguments: [".part", ".part.state", ".part.lock", ".part.cache"]
    )
    func `a server-chosen name that is another entry's sidecar fails that entry, and no file is lost`(
        suffix: String
    ) async throws {
        try await withTestHTTPServer(serving: TestResource(body: [])) { server in
            ManifestFetchTests.serveFiles(
                server,
                extra: [("Content-Disposition", "attachment; filename=\"a\(suffix)\"")]
            )
            try await withTemporaryDirectory { directory in
                let manifest = [
                    "\(server.url("/f1")) sha256:\(Fixtures.sha256(ManifestFetchTests.body(1)))",
                    "\(server.url("/f2")) sha256:\(Fixtures.sha256(ManifestFetchTests.body(2))) a",
                ]
                let run = try await ServerNamedFileTests.runBatch(manifest, in: directory)
                #expect(run.status == 3, "\(run.standardError)")
                let lines = run.standardOutput.split(separator: "\n").compactMap {
                    try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
                }
                #expect(lines.map { $0["status"] as? String } == ["failed", "downloaded"])
                #expect(listing("\(directory)/out") == ["a"])
                #expect(contents("\(directory)/out/a") == ManifestFetchTests.body(2))
            }
        }
    }

    @Test func `a server-chosen name never replaces a file created while the download ran`() async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
            server.faults = TestFaults(bytesPerSecond: 200_000)  // 5 s: the test sees the partial
            server.handler = { request, _ in
                guard request.method == "HEAD" else { return nil }
                return TestResponse(
                    status: 200,
                    headers: [
                        ("Content-Disposition", "attachment; filename=victim.txt"), ("Content-Length", "1048576"),
                    ],
                    body: []
                )
            }
            try await withTemporaryDirectory { directory in
                let run = Task {
                    await runCLI(Self.quiet + ["--content-disposition", "-P", directory, server.url()])
                }
                let deadline = ContinuousClock.now + .seconds(30)
                while !FileSystem.exists("\(directory)/victim.txt.part"), ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(10))
                }
                try Data("my notes".utf8).write(to: URL(filePath: "\(directory)/victim.txt"))
                let result = await run.value
                #expect(result.status == 3, "\(result.standardError)")
                #expect(result.standardError.contains("exists already"))
                #expect(contents("\(directory)/victim.txt") == Array("my notes".utf8))
            }
        }
    }

    @Test func `one output reached through a symbolic link to its directory is written twice: exit 2`()
        async throws
    {
        try await withTestHTTPServer(serving: TestResource(body: [])) { server in
            ManifestFetchTests.serveFiles(server)
            try await withTemporaryDirectory { directory in
                try FileManager.default.createDirectory(atPath: "\(directory)/real", withIntermediateDirectories: true)
                try FileManager.default.createSymbolicLink(atPath: "\(directory)/link", withDestinationPath: "real")
                try "\(server.url("/f1")) link/f\n\(server.url("/f2")) real/f\n".write(
                    toFile: "\(directory)/manifest",
                    atomically: true,
                    encoding: .utf8
                )
                let run = await runCLI(Self.quiet + ["-P", directory, "-i", "\(directory)/manifest"])
                #expect(run.status == 2)
                #expect(run.standardError.contains("is written by line 1 too"), "\(run.standardError)")
                #expect(server.requests.isEmpty)
            }
        }
    }

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

    @Test func `a server-chosen name that is a directory fails that file with exit 3 and a JSON line`()
        async throws
    {
        try await withTestHTTPServer(serving: TestResource(body: [])) { server in
            ManifestFetchTests.serveFiles(server, extra: [("Content-Disposition", "attachment; filename=sub")])
            try await withTemporaryDirectory { directory in
                try FileManager.default.createDirectory(
                    atPath: "\(directory)/out/sub",
                    withIntermediateDirectories: true
                )
                let run = try await ServerNamedFileTests.runBatch(
                    [server.url("/f1"), server.url("/f2") + " f2"],
                    in: directory
                )
                #expect(run.status == 3)
                #expect(run.standardOutput.split(separator: "\n").count == 2)
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
