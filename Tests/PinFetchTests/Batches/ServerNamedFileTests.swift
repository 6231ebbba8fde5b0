import Foundation
import Testing

@testable import PinFetch

/// Names chosen by a server (`Content-Disposition`) never replace an existing file and never
/// collide within a batch, nor with a sidecar, a directory or a file made while it downloads:
/// that file fails with exit 3.
struct ServerNamedFileTests {
    static let quiet = ["-q", "--json", "--retry-delay", "0"]
    static let disposition = [("Content-Disposition", #"attachment; filename="same.bin""#)]

    /// A file from `url`, named by its server inside `directory` (`--content-disposition -P`), or
    /// `name` there when the user gave one (a manifest line's name); `pin` as `--sha256`.
    static func job(_ url: String, in directory: String, name: String? = nil, pin: Pin? = nil) -> FetchJob {
        let fallback = String(url.split(separator: "?")[0].split(separator: "/").last ?? "")
        return FetchJob(
            mirrors: [url],
            destination: "\(directory)/\(name ?? fallback)",
            pin: pin,
            namingDirectory: name == nil ? directory : nil
        )
    }

    /// Fetches `jobs` one at a time, as `-j 1` does.
    static func runBatch(_ jobs: [FetchJob]) async -> [FetchResult] {
        await Fetcher.immediate().run(jobs, parallelism: 1)
    }

    /// Runs `urls` as a manifest, one file at a time, named by their servers inside `directory/out`.
    static func runCLIBatch(_ urls: [String], in directory: String) async throws -> CLIRun {
        try (urls.joined(separator: "\n") + "\n").write(
            toFile: "\(directory)/manifest",
            atomically: true,
            encoding: .utf8
        )
        let batch = ["-j", "1", "--content-disposition", "-P", "\(directory)/out", "-i", "\(directory)/manifest"]
        return await runCLI(Self.quiet + batch)
    }

    @Test func `an existing file is never replaced by a server-chosen name`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: [])) { server in
            ManifestFetchTests.serveFiles(server, extra: Self.disposition)
            try await withTemporaryDirectory { directory in
                try Data("mine".utf8).write(to: URL(filePath: "\(directory)/same.bin"))
                let result = await Self.runBatch([Self.job(server.url("/f1"), in: directory)])[0]
                #expect(result.error?.code == .fileIO, "\(failure(result))")
                #expect(result.error?.message.contains("exists already") == true, "\(failure(result))")
                #expect(contents("\(directory)/same.bin") == Array("mine".utf8))
                #expect(listing(directory) == ["same.bin"])
            }
        }
    }

    @Test func `a file that already holds the pinned bytes is already complete`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: [])) { server in
            ManifestFetchTests.serveFiles(server, extra: Self.disposition)
            try await withTemporaryDirectory { directory in
                let body = ManifestFetchTests.body(1)
                try Data(body).write(to: URL(filePath: "\(directory)/same.bin"))
                let pin = try Pin(sha256Hex: Fixtures.sha256(body))
                let result = await Self.runBatch([Self.job(server.url("/f1"), in: directory, pin: pin)])[0]
                #expect(result.error == nil, "\(failure(result))")
                #expect(result.status == .alreadyComplete)
                #expect(server.getRequests.allSatisfy { $0.method != "GET" })  // the name came from HEAD
            }
        }
    }

    @Test func `two files of a batch given one name: the later fails, one path, one file`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: [])) { server in
            ManifestFetchTests.serveFiles(server, extra: Self.disposition)
            try await withTemporaryDirectory { directory in
                let out = "\(directory)/out"
                let results = await Self.runBatch([
                    Self.job(server.url("/f1"), in: out), Self.job(server.url("/f2"), in: out),
                ])
                #expect(results.map(\.error?.code) == [nil, .fileIO], "\(results.map(failure))")
                #expect(results.map(\.status) == [.downloaded, .failed])
                #expect(contents("\(directory)/out/same.bin") == ManifestFetchTests.body(1))
                #expect(listing("\(directory)/out") == ["same.bin"])
            }
        }
    }

    @Test func `a server-chosen name never takes an output the user named in the batch`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: [])) { server in
            ManifestFetchTests.serveFiles(server, extra: Self.disposition)
            try await withTemporaryDirectory { directory in
                // Line 1 is named by its server; line 2 by the user, with the same name: line 1 fails
                // even though it runs first.
                let out = "\(directory)/out"
                let results = await Self.runBatch([
                    Self.job(server.url("/f1"), in: out), Self.job(server.url("/f2"), in: out, name: "same.bin"),
                ])
                #expect(results.map(\.error?.code) == [.fileIO, nil], "\(results.map(failure))")
                #expect(contents("\(directory)/out/same.bin") == ManifestFetchTests.body(2))
                let message = results[0].error?.message ?? ""
                #expect(message.contains("another file of this batch"), "\(message)")
            }
        }
    }

    /// A server-chosen name equal to the name another file of the batch takes from its URL (its
    /// server gave none): one of them fails, the other is whole.
    @Test func `a server-chosen name and a URL's name alike in a batch: one file fails`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: [])) { server in
            server.handler = { request, _ in
                let path = String(request.target.split(separator: "?").first ?? "")
                let named = [(name: "Content-Disposition", value: #"attachment; filename="f2""#)]
                let index = path == "/f1" ? 1 : 2
                return TestResponse(
                    status: 200,
                    headers: path == "/f1" ? named : [],
                    body: ManifestFetchTests.body(index)
                )
            }
            try await withTemporaryDirectory { directory in
                let out = "\(directory)/out"
                let results = await Self.runBatch([
                    Self.job(server.url("/f1"), in: out), Self.job(server.url("/f2"), in: out),
                ])
                #expect(results.compactMap(\.error?.code) == [.fileIO], "\(results.map(failure))")
                #expect(contents("\(directory)/out/f2") == ManifestFetchTests.body(1))
                #expect(listing("\(directory)/out") == ["f2"])
            }
        }
    }

    /// Hostile server: a Content-Disposition name that is another entry's `.part`, `.part.state` or other sidecar.
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
                let out = "\(directory)/out"
                let results = await Self.runBatch([
                    Self.job(
                        server.url("/f1"),
                        in: out,
                        pin: try Pin(sha256Hex: Fixtures.sha256(ManifestFetchTests.body(1)))
                    ),
                    Self.job(
                        server.url("/f2"),
                        in: out,
                        name: "a",
                        pin: try Pin(sha256Hex: Fixtures.sha256(ManifestFetchTests.body(2)))
                    ),
                ])
                #expect(results.map(\.error?.code) == [.fileIO, nil], "\(results.map(failure))")
                #expect(results.map(\.status) == [.failed, .downloaded])
                #expect(listing("\(directory)/out") == ["a"])
                #expect(contents("\(directory)/out/a") == ManifestFetchTests.body(2))
            }
        }
    }

    /// Hostile server: a Content-Disposition name that is a directory in -P.
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
                let run = try await ServerNamedFileTests.runCLIBatch(
                    [server.url("/f1"), server.url("/f2") + " f2"],
                    in: directory
                )
                #expect(run.status == 3)
                #expect(run.standardOutput.split(separator: "\n").count == 2)
            }
        }
    }

    /// Race: the user creates the file that a server-chosen name names while its download runs.
    @Test func `a server-chosen name never replaces a file created while the download ran`() async throws {
        // HEAD and GET both name it: HEAD is advisory, and under load it may be given up.
        var resource = AnswerEndToEndTests.resourceA
        resource.extraHeaders = [("Content-Disposition", "attachment; filename=victim.txt")]
        try await withTestHTTPServer(serving: resource) { server in
            // 26 s of body: the partial is there while the test looks, however loaded the machine.
            server.faults = TestFaults(bytesPerSecond: 40_000)
            try await withTemporaryDirectory { directory in
                let run = Task { await Fetcher.immediate(retries: 0).run([Self.job(server.url(), in: directory)])[0] }
                let deadline = ContinuousClock.now + .seconds(45)
                while !FileSystem.exists("\(directory)/victim.txt.part"), ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(10))
                }
                try #require(
                    FileSystem.exists("\(directory)/victim.txt.part"),
                    "no partial under the server's name: \(listing(directory)), \(server.requests.map(\.method))"
                )
                try Data("my notes".utf8).write(to: URL(filePath: "\(directory)/victim.txt"))
                let result = await run.value
                #expect(result.error?.code == .fileIO, "\(failure(result))")
                #expect(result.error?.message.contains("exists already") == true, "\(failure(result))")
                #expect(contents("\(directory)/victim.txt") == Array("my notes".utf8))
            }
        }
    }
}
