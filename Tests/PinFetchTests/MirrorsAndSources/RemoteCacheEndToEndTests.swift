import Foundation
@preconcurrency import Glibc
import Testing

@testable import PinFetchCLI

/// The remote cache against real nginx set up as Bazel's documentation describes (`location
/// /cache/` with `dav_methods PUT` and `create_full_put_path on`): a miss, an upload,
/// then a hit with no request to the origin; a corrupt blob; uploads refused.
extension ProcessTests {
    static let cachedTool = Self.pseudoRandomContent(300_000, seed: 1616)

    /// `pinfetch` fetching `tool.bin` pinned, into `output`, with the remote cache at `cache`.
    func fetchThroughCache(
        _ nginx: Nginx,
        cache: String,
        to output: String,
        logs: String,
        upload: Bool = true
    )
        async throws -> CLIRun
    {
        try await self.pinfetch(
            ["--json", "--remote-cache", nginx.url(cache), "--sha256", Fixtures.sha256(Self.cachedTool), "-o", output]
                + (upload ? ["--remote-cache-upload"] : []) + [nginx.url("tool.bin")],
            logs: logs
        )
    }

    @Test func `a miss is uploaded after the download, and the next machine gets a hit without the origin`()
        async throws
    {
        try await withNginx { nginx in
            try await withTemporaryDirectory { work in
                try nginx.serve(Self.cachedTool, as: "tool.bin")
                let hex = Fixtures.sha256(Self.cachedTool)
                let first = try await self.fetchThroughCache(nginx, cache: "cache", to: work + "/a", logs: work + "/1")
                #expect(first.status == 0, EndToEndTests.explain(first, nginx))
                #expect(first.string("cache") == nil)
                #expect(contents(nginx.root + "/cache/cas/\(hex)") == Self.cachedTool, "uploaded: \(nginx.log)")
                let put = nginx.requests.filter { $0.method == "PUT" }
                #expect(put.map(\.path) == ["/cache/cas/\(hex)"] && put.allSatisfy { $0.status == 201 }, "\(nginx.log)")

                let before = nginx.requests.count
                let second = try await self.fetchThroughCache(nginx, cache: "cache", to: work + "/b", logs: work + "/2")
                #expect(second.status == 0, EndToEndTests.explain(second, nginx))
                #expect(contents(work + "/b") == Self.cachedTool)
                #expect(second.string("cache") == "remote")
                #expect(second.json["from_cache"] as? Bool == true)
                let asked = nginx.requests.dropFirst(before)
                #expect(asked.map(\.path) == ["/cache/cas/\(hex)"], "no request to the origin, no upload: \(nginx.log)")
            }
        }
    }

    @Test func `a corrupt blob is detected and the origin used; refused uploads are a warning`() async throws {
        try await withNginx { nginx in
            try await withTemporaryDirectory { work in
                try nginx.serve(Self.cachedTool, as: "tool.bin")
                let hex = Fixtures.sha256(Self.cachedTool)
                try FileManager.default.createDirectory(
                    atPath: nginx.root + "/cache/cas",
                    withIntermediateDirectories: true
                )
                try Data("corrupt\n".utf8).write(to: URL(fileURLWithPath: nginx.root + "/cache/cas/\(hex)"))
                let corrupt = try await self.fetchThroughCache(
                    nginx,
                    cache: "cache",
                    to: work + "/a",
                    logs: work + "/1",
                    upload: false
                )
                #expect(corrupt.status == 0, EndToEndTests.explain(corrupt, nginx))
                #expect(contents(work + "/a") == Self.cachedTool)
                #expect(corrupt.standardError.contains("holds other bytes than the pin"), "\(corrupt.standardError)")
                #expect(corrupt.string("source") == nginx.url("tool.bin"))

                let refused = try await self.fetchThroughCache(
                    nginx,
                    cache: "readonly",
                    to: work + "/b",
                    logs: work + "/2"
                )
                #expect(refused.status == 0, EndToEndTests.explain(refused, nginx))
                #expect(contents(work + "/b") == Self.cachedTool)
                #expect(refused.standardError.contains("upload was refused (HTTP 403)"), "\(refused.standardError)")
                #expect(!FileManager.default.fileExists(atPath: nginx.root + "/readonly/cas/\(hex)"))
            }
        }
    }

    @Test func `a run killed while a blob comes in leaves its placement, and gc removes it`() async throws {
        try await withNginx { nginx in
            try await withTemporaryDirectory { work in
                let hex = Fixtures.sha256(Self.cachedTool)
                try FileManager.default.createDirectory(
                    atPath: nginx.root + "/cache/cas",
                    withIntermediateDirectories: true
                )
                try Data(Self.cachedTool).write(to: URL(fileURLWithPath: nginx.root + "/cache/cas/\(hex)"))
                let downloads = try EndToEndTests.makeDirectory(work + "/downloads")
                let placement = downloads + "/a.part.cache"
                // /slow/ sends the blob at 200 KiB/s: the run is killed while it comes in.
                let run = try self.startPinfetch(
                    ["--remote-cache", nginx.slowURL("cache"), "--remote-cache-timeout", "30"]
                        + ["--sha256", hex, "-o", downloads + "/a", nginx.url("tool.bin")],
                    logs: work + "/1"
                )
                defer { run.stop() }
                try await Self.waitUntil("a blob coming in", run) { (Self.fileSize(placement) ?? 0) > 0 }
                run.signal(SIGKILL)
                _ = try await run.wait(timeout: .seconds(20))
                #expect(listing(downloads) == ["a.part.cache", "a.part.lock"])

                let size = try #require(Self.fileSize(placement))
                // The executable, not the library in this process: sizes once read as 0 B there.
                let gc = try ChildProcess(
                    try EndToEndTests.pinfetchExecutable(),
                    ["gc", downloads, "--older-than", "0s"],
                    logs: work + "/gc"
                )
                try await gc.wait(timeout: .seconds(60))
                #expect(gc.termination == .exited(0), "\(gc.transcript)")
                #expect(
                    gc.standardOutput == "removed \(placement) (\(ProgressReporter.size(Int64(size))))\n",
                    "\(gc.transcript)"
                )
                #expect(listing(downloads).isEmpty)
            }
        }
    }
}
