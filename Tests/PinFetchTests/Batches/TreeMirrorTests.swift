import Foundation
import PinFetch
import Testing

/// Release directories are trees: `--base-url` keeps each entry's relative
/// directories under `-P`, and `-R`/`--remote-time` gives each file its source's `Last-Modified`.
struct TreeMirrorTests {
    /// 2001-09-09 01:46:40 UTC.
    static let modified = (text: "Sun, 09 Sep 2001 01:46:40 GMT", seconds: 1_000_000_000)

    static let tree: [String: [UInt8]] = [
        "/r/linux/amd64/tool": Array("linux tool".utf8),
        "/r/darwin/arm64/tool": Array("darwin tool".utf8),
        "/r/README": Array("read me".utf8),
    ]

    /// A server answering the paths of ``tree`` with their bytes and ``modified`` as `Last-Modified`.
    static func serveTree(_ server: TestHTTPServer) {
        server.handler = { request, _ in
            guard let body = Self.tree[request.target] else { return TestResponse(status: 404) }
            return TestResponse(status: 200, headers: [("Last-Modified", Self.modified.text)], body: body)
        }
    }

    static func writeSums(to path: String) throws {
        let lines = Self.tree.keys.sorted().map { "\(Fixtures.sha256(Self.tree[$0]!))  ./\($0.dropFirst(3))" }
        try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
    }

    /// A fetcher that gives each file its answer's `Last-Modified`, as `-R` does.
    static var remoteTime: Fetcher { Fetcher.immediate { $0.remoteTime = true } }

    static func modificationTime(_ path: String) -> Int? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        return info.st_mtim.tv_sec
    }

    @Test func `a tree-shaped SHA256SUMS is mirrored as a tree, each file with its source's time`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: [])) { server in
            Self.serveTree(server)
            try await withTemporaryDirectory { directory in
                try Self.writeSums(to: "\(directory)/SHA256SUMS")
                let out = "\(directory)/out"
                let run = await runCLI(
                    ["-q", "--json", "-i", "\(directory)/SHA256SUMS", "--base-url", server.url("/r/"), "-P", out]
                )
                #expect(run.status == 0, "\(run.standardError)")
                for (path, body) in Self.tree {
                    let file = out + path.dropFirst(2)
                    #expect(contents(file) == body, "\(file)")
                    #expect(Self.modificationTime(file) == Self.modified.seconds, "\(file)")
                }
                let paths = run.standardOutput.split(separator: "\n").compactMap {
                    (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
                }.compactMap { $0["path"] as? String }
                #expect(paths.sorted() == Self.tree.keys.map { out + $0.dropFirst(2) }.sorted())
            }
        }
    }

    @Test func `--no-remote-time keeps the time of the download`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: [])) { server in
            Self.serveTree(server)
            try await withTemporaryDirectory { directory in
                try Self.writeSums(to: "\(directory)/SHA256SUMS")
                let before = Int(Date().timeIntervalSince1970) - 1
                let run = await runCLI([
                    "-q", "-i", "\(directory)/SHA256SUMS", "--base-url", server.url("/r"), "-P", "\(directory)/out",
                    "--no-remote-time",
                ])
                #expect(run.status == 0, "\(run.standardError)")
                #expect((Self.modificationTime("\(directory)/out/README") ?? 0) >= before)
            }
        }
    }

    @Test func `-R sets the time for one URL; without it the file gets the time of the download`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: [])) { server in
            Self.serveTree(server)
            try await withTemporaryDirectory { directory in
                let before = Int(Date().timeIntervalSince1970) - 1
                let plain = await Fetcher.immediate().run(server.url("/r/README"), to: "\(directory)/plain")
                let remote = await Self.remoteTime.run(server.url("/r/README"), to: "\(directory)/remote")
                #expect(plain.error == nil && remote.error == nil, "\(failure(plain)) \(failure(remote))")
                #expect((Self.modificationTime("\(directory)/plain") ?? 0) >= before)
                #expect(Self.modificationTime("\(directory)/remote") == Self.modified.seconds)
            }
        }
    }

    @Test func `a resumed file gets the time of the answer that completed it`() async throws {
        let body = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let resource = TestResource(body: body, etag: "\"v1\"", lastModified: Self.modified.text)
        try await withTestHTTPServer(serving: resource) { server in
            try await withTemporaryDirectory { directory in
                let file = "\(directory)/f"
                server.enqueueFaults(TestFaults(closeAfterBodyBytes: 50_000))
                let first = await Fetcher.immediate(retries: 0) { $0.remoteTime = true }.run(server.url(), to: file)
                #expect(first.error?.code == .network, "\(failure(first))")
                let second = await Self.remoteTime.run(server.url(), to: file)
                #expect(second.error == nil, "\(failure(second))")
                #expect(second.status == .resumed)
                #expect(contents(file) == body)
                #expect(Self.modificationTime(file) == Self.modified.seconds)
            }
        }
    }

    @Test func `a file already complete keeps its own time`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: [])) { server in
            Self.serveTree(server)
            try await withTemporaryDirectory { directory in
                // The tree's files, as its SHA256SUMS with --base-url lists them.
                let jobs = try Self.tree.keys.sorted().map { path in
                    FetchJob(
                        mirrors: [server.url(path)],
                        destination: directory + path.dropFirst(2),
                        pin: try Pin(sha256Hex: Fixtures.sha256(Self.tree[path]!))
                    )
                }
                let first = await Self.remoteTime.run(jobs)
                #expect(first.allSatisfy { $0.error == nil }, "\(first.map(failure))")
                var times = [timespec(tv_sec: 1_234_567, tv_nsec: 0), timespec(tv_sec: 1_234_567, tv_nsec: 0)]
                #expect(utimensat(AT_FDCWD, "\(directory)/README", &times, 0) == 0)
                let requests = server.getRequests.count
                let rerun = await Self.remoteTime.run(jobs)
                #expect(rerun.allSatisfy { $0.error == nil }, "\(rerun.map(failure))")
                #expect(server.getRequests.count == requests)  // no answer in this run
                #expect(Self.modificationTime("\(directory)/README") == 1_234_567)
            }
        }
    }

    @Test(arguments: ["a//b", "a/./b", "a/../../b", "/etc/b", "a/b/"])
    func `a tree name that would leave -P or name a file two ways is bad input, nothing created`(
        name: String
    ) async throws {
        try await withTemporaryDirectory { directory in
            try "\(Fixtures.sha256A)  ok\n\(Fixtures.sha256A)  \(name)\n".write(
                toFile: "\(directory)/SUMS",
                atomically: true,
                encoding: .utf8
            )
            let run = await runCLI([
                "-q", "-i", "\(directory)/SUMS", "--base-url", "http://127.0.0.1:9/", "-P", "\(directory)/out",
            ])
            #expect(run.status == 2, "\(run.standardError)")
            #expect(run.standardError.contains("line 2"), "\(run.standardError)")
            #expect(listing(directory) == ["SUMS"])
        }
    }
}
