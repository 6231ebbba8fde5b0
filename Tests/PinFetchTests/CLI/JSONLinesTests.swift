import Foundation
@preconcurrency import Glibc
import Testing

/// Output a script can trust: every file gets its `--json` line on every
/// failure but bad usage; a file never started has status `skipped`, with the cause's kind and
/// exit code; an input file fetched by URL that failed gets a line of its own.
struct JSONLinesTests {
    static func error(_ line: [String: Any]) -> (kind: String?, exitCode: Int?) {
        let error = line["error"] as? [String: Any]
        return (error?["kind"] as? String, (error?["exit_code"] as? NSNumber)?.intValue)
    }

    @Test func `files not started after --fail-fast get skipped lines with the first failure's kind`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: [])) { server in
            ManifestFetchTests.serveFiles(server, missing: ["/f1"])
            try await withTemporaryDirectory { directory in
                try ((0..<5).map { server.url("/f\($0)") }.joined(separator: "\n") + "\n")
                    .write(toFile: "\(directory)/manifest", atomically: true, encoding: .utf8)
                let run = await runCLI([
                    "--json", "--fail-fast", "--retry-delay", "0", "-P", directory, "-i", "\(directory)/manifest",
                ])
                #expect(run.status == 8)
                let byPath = Dictionary(uniqueKeysWithValues: run.lines.map { ($0["path"] as? String ?? "", $0) })
                #expect(byPath.count == 5)
                #expect(byPath["\(directory)/f0"]?["status"] as? String == "downloaded")
                #expect(byPath["\(directory)/f1"]?["status"] as? String == "failed")
                for index in 2..<5 {
                    let line = byPath["\(directory)/f\(index)"] ?? [:]
                    #expect(line["status"] as? String == "skipped", "\(line)")
                    #expect(Self.error(line).kind == "serverResponse" && Self.error(line).exitCode == 8, "\(line)")
                    #expect((line["attempts"] as? NSNumber)?.intValue == 0)
                }
                #expect(run.standardError.contains("1 of 5 files ok, 1 failed, 3 not started"), "\(run.standardError)")
                #expect(!run.standardError.contains("not started: an earlier"), "one summary, not a line per file")
            }
        }
    }

    @Test func `a checksum file that cannot be fetched gets a line, and the file it pins a skipped one`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: Fixtures.a)) { server in
            server.handler = { request, _ in request.target == "/SUMS" ? TestResponse(status: 404) : nil }
            try await withTemporaryDirectory { directory in
                let run = await runCLI([
                    "--json", "--retry-delay", "0", "--checksum-file", server.url("/SUMS"), "-o", "\(directory)/file",
                    server.url("/file"),
                ])
                #expect(run.status == 8, "\(run.standardError)")
                let lines = run.lines
                #expect(lines.count == 2, "\(run.standardOutput)")
                let input = lines.first { $0["input"] != nil } ?? [:]
                #expect(input["input"] as? String == "checksum-file")
                #expect(input["url"] as? String == server.url("/SUMS"))
                #expect(input["path"] is NSNull)
                #expect(input["status"] as? String == "failed")
                #expect(Self.error(input).kind == "serverResponse" && Self.error(input).exitCode == 8)
                let file = lines.first { $0["input"] == nil } ?? [:]
                #expect(file["path"] as? String == "\(directory)/file")
                #expect(file["url"] as? String == server.url("/file"))
                #expect(file["status"] as? String == "skipped")
                #expect(Self.error(file).exitCode == 8)
                #expect(server.requests.allSatisfy { $0.target == "/SUMS" })
                #expect(listing(directory).isEmpty)
            }
        }
    }

    @Test func `a manifest that cannot be fetched gets a line of its own; bad input gets none`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: [])) { server in
            server.handler = { _, _ in TestResponse(status: 404) }
            try await withTemporaryDirectory { directory in
                let run = await runCLI(["--json", "--retry-delay", "0", "-i", server.url("/list"), "-P", directory])
                #expect(run.status == 8)
                #expect(run.lines.count == 1)
                #expect(run.lines.first?["input"] as? String == "manifest")
                let sums = await runCLI([
                    "--json", "--retry-delay", "0", "-i", server.url("/SUMS"), "--base-url", server.url("/"), "-P",
                    directory,
                ])
                #expect(sums.lines.first?["input"] as? String == "checksum-file")
                try "not a checksum file\n".write(toFile: "\(directory)/bad", atomically: true, encoding: .utf8)
                let bad = await runCLI([
                    "--json", "--checksum-file", "\(directory)/bad", "-o", "\(directory)/f", server.url("/f"),
                ])
                #expect(bad.status == 2)
                #expect(bad.standardOutput.isEmpty)
            }
        }
    }

    @Test func `an interrupted batch ends with a line for every file, the ones not started skipped`() async throws {
        let body = [UInt8](repeating: 7, count: 1 << 20)
        try await withTestHTTPServer(serving: TestResource(body: body, etag: "\"v\"")) { server in
            server.faults = TestFaults(stallAfterBodyBytes: 1000)
            try await withTemporaryDirectory { directory in
                try ((0..<3).map { server.url("/f\($0)") }.joined(separator: "\n") + "\n")
                    .write(toFile: "\(directory)/manifest", atomically: true, encoding: .utf8)
                let child = try ChildProcess(
                    try EndToEndTests.pinfetchExecutable(),
                    EndToEndTests.quiet + ["-P", "\(directory)/out", "-i", "\(directory)/manifest"],
                    logs: "\(directory)/run"
                )
                defer { child.stop() }
                try await ProcessTests.waitUntil("the first body", child) { !server.getRequests.isEmpty }
                try await Task.sleep(for: .milliseconds(200))
                child.signal(SIGINT)
                #expect(try await child.wait(timeout: .seconds(20)) == .exited(130), "\(child.transcript)")
                let lines = jsonLines(child.standardOutput)
                #expect(lines.count == 3, "\(child.transcript)")
                #expect(lines.map { $0["status"] as? String ?? "" }.sorted() == ["failed", "skipped", "skipped"])
                #expect(lines.allSatisfy { Self.error($0).exitCode == 130 && Self.error($0).kind == "cancelled" })
                #expect(server.getRequests.count == 1)
            }
        }
    }

    /// User environment: TMPDIR=/proc, where no temporary file can be made; an input file cut short.
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
                let cut = await runCLI(quietOnce + ["-i", server.url("/cut"), "-P", "\(directory)/o"])
                #expect(cut.status == 4, "\(cut.standardError)")
                #expect(cut.string("input") == "manifest")
                #expect(cut.json["partial"] is NSNull, "\(cut.standardOutput)")
            }
        }
    }
}
