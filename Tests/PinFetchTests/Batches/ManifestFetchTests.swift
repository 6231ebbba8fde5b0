import Foundation
import PinFetch
import Synchronization
import Testing

/// Many files from `-i`: parallel jobs, one `--json` line each, the most serious exit status,
/// `--fail-fast`, `--shard`, a checksum file as a manifest, and names that stay inside `-P`.
struct ManifestFetchTests {
    static let quiet = ["-q", "--json", "--retry-delay", "0", "--retries", "0"]

    /// Distinct content for file `index`.
    static func body(_ index: Int) -> [UInt8] {
        (0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* (index + 3) &+ index) }
    }

    /// A server answering `/f<N>` with `body(N)`, and 404 for the paths in `missing`.
    static func serveFiles(_ server: TestHTTPServer, missing: Set<String> = [], extra: [(String, String)] = []) {
        server.handler = { request, _ in
            let path = String(request.target.split(separator: "?").first ?? "")
            if missing.contains(path) { return TestResponse(status: 404, body: Array("gone".utf8)) }
            guard path.hasPrefix("/f"), let index = Int(path.dropFirst(2)) else { return TestResponse(status: 404) }
            return TestResponse(status: 200, headers: extra.map { (name: $0.0, value: $0.1) }, body: Self.body(index))
        }
    }

    /// The file at `server`'s `/f<index>`, to `directory/f<index>`, pinned to its body when `pinned`.
    static func job(
        _ index: Int,
        from server: TestHTTPServer,
        in directory: String,
        pinned: Bool = false
    ) throws
        -> FetchJob
    {
        FetchJob(
            mirrors: [server.url("/f\(index)")],
            destination: "\(directory)/f\(index)",
            pin: pinned ? try Pin(sha256Hex: Fixtures.sha256(Self.body(index))) : nil
        )
    }

    /// One attempt per file, at once, as ``quiet`` has it.
    static var once: Fetcher { Fetcher.immediate(retries: 0) }

    func write(_ lines: [String], to path: String) throws {
        try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
    }

    @Test func `forty files with -j 8 each get their bytes and one JSON line`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: [])) { server in
            Self.serveFiles(server)
            try await withTemporaryDirectory { directory in
                let lines =
                    ["# release 1.0", ""]
                    + (0..<40).map { "\(server.url("/f\($0)")) sha256:\(Fixtures.sha256(Self.body($0)))" }
                try self.write(lines, to: "\(directory)/manifest")
                let run = await runCLI(
                    Self.quiet + ["-j", "8", "-P", "\(directory)/out", "-i", "\(directory)/manifest"]
                )
                #expect(run.status == 0)
                let wrong = (0..<40).filter { contents("\(directory)/out/f\($0)") != Self.body($0) }
                #expect(wrong.isEmpty)
                let reports = run.standardOutput.split(separator: "\n")
                #expect(reports.count == 40)
                let paths = Set(
                    reports.compactMap { line in
                        (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["path"] as? String
                    }
                )
                #expect(paths == Set((0..<40).map { "\(directory)/out/f\($0)" }))
                #expect(run.standardError.isEmpty, "-q prints nothing on success: \(run.standardError)")
                #expect(listing("\(directory)/out").count == 40)
            }
        }
    }

    @Test func `the files of a batch over plain HTTP are asked for together, not one after another`() async throws {
        // Each request is held until four are in flight (or 5 s passed): requests sent one after
        // another (libcurl 7.88's CURLOPT_PIPEWAIT over plain HTTP did) never see four at once.
        try await withTestHTTPServer(serving: TestResource(body: [])) { server in
            let arrived = Mutex((inFlight: 0, most: 0))
            server.handler = { request, _ in
                arrived.withLock { $0.inFlight += 1 }
                defer { arrived.withLock { $0.inFlight -= 1 } }
                let deadline = ContinuousClock.now + .seconds(5)
                while arrived.withLock({ $0.inFlight }) < 4, ContinuousClock.now < deadline { usleep(1000) }
                arrived.withLock { $0.most = max($0.most, $0.inFlight) }
                guard let index = Int(request.target.dropFirst(2)) else { return TestResponse(status: 404) }
                return TestResponse(status: 200, body: Self.body(index))
            }
            try await withTemporaryDirectory { directory in
                let jobs = try (0..<4).map { try Self.job($0, from: server, in: "\(directory)/out", pinned: true) }
                let results = await Self.once.run(jobs, parallelism: 4)
                #expect(results.allSatisfy { $0.error == nil }, "\(results.map(failure))")
                #expect(arrived.withLock { $0.most } == 4, "requests were not in flight together")
                #expect((0..<4).allSatisfy { contents("\(directory)/out/f\($0)") == Self.body($0) })
            }
        }
    }

    @Test func `one failing file does not stop the others`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: [])) { server in
            Self.serveFiles(server, missing: ["/f2"])
            try await withTemporaryDirectory { directory in
                var jobs = try [1, 2, 3, 4].map { try Self.job($0, from: server, in: directory) }
                jobs[2].pin = try Pin(sha256Hex: Fixtures.sha256(Self.body(99)))  // wrong pin: a mismatch
                let results = await Self.once.run(jobs)
                #expect(results.map(\.error?.code) == [nil, .serverResponse, .digestMismatch, nil])
                #expect(contents("\(directory)/f1") == Self.body(1), "f1")
                #expect(contents("\(directory)/f4") == Self.body(4))
                #expect(!FileManager.default.fileExists(atPath: "\(directory)/f2"))
                #expect(!FileManager.default.fileExists(atPath: "\(directory)/f3"))
            }
        }
    }

    /// The command line's part of the test above: the most serious status (the mismatch's 9), a
    /// `--json` line for each file, and a summary.
    @Test func `the worst status of a batch wins`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: [])) { server in
            Self.serveFiles(server, missing: ["/f2"])
            try await withTemporaryDirectory { directory in
                try self.write(
                    [
                        server.url("/f1"), server.url("/f2"),
                        "\(server.url("/f3")) sha256:\(Fixtures.sha256(Self.body(99)))",  // wrong pin: exit 9
                        server.url("/f4"),
                    ],
                    to: "\(directory)/manifest"
                )
                let run = await runCLI(Self.quiet + ["-P", directory, "-i", "\(directory)/manifest"])
                #expect(run.status == 9)
                #expect(run.standardOutput.split(separator: "\n").count == 4)
                #expect(run.standardError.contains("2 of 4 files ok, 2 failed"))
            }
        }
    }

    @Test func `--fail-fast starts no file after the first failure`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: [])) { server in
            Self.serveFiles(server, missing: ["/f1"])
            try await withTemporaryDirectory { directory in
                let jobs = try (0..<5).map { try Self.job($0, from: server, in: directory) }
                // f3 has a partial an earlier run left: skipped, it is named, and kept as it was.
                try Data([1, 2, 3]).write(to: URL(fileURLWithPath: directory + "/f3.part"))
                try Data("state".utf8).write(to: URL(fileURLWithPath: directory + "/f3.part.state"))
                let results = await Self.once.run(jobs, failFast: true)
                #expect(results.map(\.status) == [.downloaded, .failed, .skipped, .skipped, .skipped])
                // Each later file is skipped with the failure's code: exit 8 for all of them.
                #expect(results.dropFirst().allSatisfy { $0.error?.code == .serverResponse }, "\(results.map(failure))")
                #expect(Set(server.getRequests.map(\.target)) == ["/f0", "/f1"])
                #expect(listing(directory) == ["f0", "f3.part", "f3.part.state"])
                #expect(results[3].partial?.path == "\(directory)/f3.part")
                #expect(results[3].partial?.bytes == 3)
                #expect(contents(directory + "/f3.part") == [1, 2, 3])
            }
        }
    }

    /// The command line's part of the test above and the one below: exit 8, a `--json` line for
    /// each file, the partial a skipped file kept in its line, and the skipped files counted.
    @Test func `--fail-fast prints a line for each file, and counts the files not started`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: [])) { server in
            Self.serveFiles(server, missing: ["/f1"])
            try await withTemporaryDirectory { directory in
                try self.write((0..<5).map { server.url("/f\($0)") }, to: "\(directory)/manifest")
                try Data([1, 2, 3]).write(to: URL(fileURLWithPath: directory + "/f3.part"))
                try Data("state".utf8).write(to: URL(fileURLWithPath: directory + "/f3.part.state"))
                let run = await runCLI(Self.quiet + ["--fail-fast", "-P", directory, "-i", "\(directory)/manifest"])
                #expect(run.status == 8)
                let lines = run.standardOutput.split(separator: "\n").map(String.init)
                #expect(lines.count == 5)
                let f3 = lines.first { $0.contains("/f3\"") }
                #expect(f3?.contains(#""bytes":3,"path":"\#(directory)/f3.part""#) == true, "\(String(describing: f3))")
                let skipped = lines.filter { $0.contains(#""status":"skipped""#) }
                #expect(skipped.count == 3, "\(lines)")
                #expect(
                    skipped.allSatisfy {
                        $0.contains("not started: an earlier file failed (fail-fast)") && $0.contains(#""mirrors":[]"#)
                            && $0.contains(#""exit_code":8"#)
                    },
                    "\(skipped)"
                )
                #expect(run.standardError.contains("3 not started"), "\(run.standardError)")
            }
        }
    }

    @Test func `--fail-fast starts no file that waits for a connection to its host`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: [])) { server in
            let first = Atomic<Bool>(true)
            server.handler = { request, _ in
                // Whichever file takes the one connection fails, a moment later.
                guard first.exchange(false, ordering: .relaxed) else {
                    return TestResponse(status: 200, body: Self.body(0))
                }
                usleep(300_000)
                return TestResponse(status: 404, body: Array("gone".utf8))
            }
            try await withTemporaryDirectory { directory in
                let jobs = try (0..<6).map { try Self.job($0, from: server, in: "\(directory)/out") }
                let fetcher = Fetcher.immediate(retries: 0) { $0.maximumConnectionsPerHost = 1 }
                let results = await fetcher.run(jobs, parallelism: 6, failFast: true)
                // Every file ends with the failure's code (the skipped ones too): exit 8.
                #expect(results.allSatisfy { $0.error?.code == .serverResponse }, "\(results.map(failure))")
                // The connection the failed file leaves goes to no waiting file: its place is given
                // back only once the failure stopped the batch.
                let requests = server.getRequests.count
                #expect(requests == 1, "\(server.getRequests.map(\.target))")
                #expect(results.count == 6)
                #expect(results.filter { $0.status == .failed }.count == 1, "\(results.map(\.status))")
                let skipped = results.filter { $0.status == .skipped }
                #expect(skipped.count == 6 - requests, "\(results.map(\.status))")
                #expect(
                    skipped.allSatisfy {
                        $0.error?.message.contains("not started: an earlier file failed (fail-fast)") == true
                            && $0.mirrors.isEmpty
                    },
                    "\(skipped.map(failure))"
                )
                // No partial, no lock file: only what was downloaded.
                #expect(listing("\(directory)/out").count == requests - 1)
            }
        }
    }

    @Test(arguments: [(0, 3), (1, 3), (2, 3), (0, 1)])
    func `--shard K of N takes the entries whose index mod N is K`(k: Int, n: Int) async throws {
        try await withTestHTTPServer(serving: TestResource(body: [])) { server in
            Self.serveFiles(server)
            try await withTemporaryDirectory { directory in
                try self.write(["# header"] + (0..<10).map { server.url("/f\($0)") }, to: "\(directory)/manifest")
                let run = await runCLI(
                    Self.quiet + ["--shard", "\(k)/\(n)", "-P", directory, "-i", "\(directory)/manifest"]
                )
                #expect(run.status == 0)
                let expected = Set((0..<10).filter { $0 % n == k }.map { "/f\($0)" })
                #expect(Set(server.getRequests.map(\.target)) == expected)
            }
        }
    }

    @Test func `a checksum file with --base-url mirrors a whole release`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: [])) { server in
            Self.serveFiles(server)
            try await withTemporaryDirectory { directory in
                let sums = (0..<12).map { "\(Fixtures.sha256(Self.body($0)))  f\($0)" }
                try self.write(sums, to: "\(directory)/SHA256SUMS")
                let run = await runCLI(
                    Self.quiet + ["-j", "4", "-P", "\(directory)/mirror", "--base-url", server.url("/")]
                        + ["-i", "\(directory)/SHA256SUMS"]
                )
                #expect(run.status == 0)
                let wrong = (0..<12).filter { contents("\(directory)/mirror/f\($0)") != Self.body($0) }
                #expect(wrong.isEmpty)
            }
        }
    }

    @Test(arguments: ["../evil", "/etc/evil", "a/../../evil", "dir\\\\evil"])
    func `an output name that would leave -P is exit 2 before any request`(output: String) async throws {
        try await withTestHTTPServer(serving: TestResource(body: [])) { server in
            Self.serveFiles(server)
            try await withTemporaryDirectory { directory in
                try self.write([server.url("/f1"), "\(server.url("/f2")) \(output)"], to: "\(directory)/manifest")
                let run = await runCLI(Self.quiet + ["-P", "\(directory)/out", "-i", "\(directory)/manifest"])
                #expect(run.status == 2)
                #expect(server.requests.isEmpty)
                #expect(listing(directory) == ["manifest"])
            }
        }
    }

    /// Outputs `x` and `x.part` in one batch would let one download rename its verified file onto
    /// the other's partial, which would then be renamed onto `x` with exit 0.
    @Test(arguments: [
        ("x", "x.part"), ("x.part.state", "x"), ("x", "x.part.lock"), ("x", "x.part.cache"),
        // A sidecar or an output that another output needs as a directory.
        ("x", "x.part/y"), ("x.part.state/y", "x"), ("a", "a/b"), ("a/b/c", "a/b"), ("d/./a", "d/a/b"),
    ])
    func `an output that is another's sidecar is exit 2 before any request`(first: String, second: String) async throws
    {
        try await withTestHTTPServer(serving: TestResource(body: [])) { server in
            Self.serveFiles(server)
            try await withTemporaryDirectory { directory in
                try self.write(
                    ["\(server.url("/f1")) \(first)", "\(server.url("/f2")) \(second)"],
                    to: "\(directory)/manifest"
                )
                let run = await runCLI(Self.quiet + ["-P", "\(directory)/out", "-i", "\(directory)/manifest"])
                #expect(run.status == 2)
                #expect(run.standardError.contains("choose another name"), "\(run.standardError)")
                #expect(server.requests.isEmpty)
                #expect(listing(directory) == ["manifest"])
            }
        }
    }

    @Test func `outputs may share directories`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: [])) { server in
            Self.serveFiles(server)
            try await withTemporaryDirectory { directory in
                try self.write(
                    ["\(server.url("/f1")) a/b/one", "\(server.url("/f2")) a/two", "\(server.url("/f1")) a/b/c/three"],
                    to: "\(directory)/manifest"
                )
                let run = await runCLI(Self.quiet + ["-P", "\(directory)/out", "-i", "\(directory)/manifest"])
                #expect(run.status == 0, "\(run.standardError)")
                #expect(run.lines.count == 3)
            }
        }
    }

    @Test(arguments: ["http://", "http://:80/x", "https://?q"])
    func `a manifest URL without a host is exit 2 before any request`(bad: String) async throws {
        try await withTestHTTPServer(serving: TestResource(body: [])) { server in
            Self.serveFiles(server)
            try await withTemporaryDirectory { directory in
                try self.write([server.url("/f1"), "\(bad) out.bin"], to: "\(directory)/manifest")
                let run = await runCLI(Self.quiet + ["-P", "\(directory)/out", "-i", "\(directory)/manifest"])
                #expect(run.status == 2)
                #expect(server.requests.isEmpty)
                #expect(listing(directory) == ["manifest"])
                #expect(run.standardOutput.isEmpty)
            }
        }
    }

    @Test func `a Content-Disposition name is reduced to a base name inside -P`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: [])) { server in
            Self.serveFiles(server, extra: [("Content-Disposition", "attachment; filename=\"../../escape.bin\"")])
            try await withTemporaryDirectory { directory in
                var job = try Self.job(5, from: server, in: "\(directory)/out")
                job.namingDirectory = "\(directory)/out"  // --content-disposition -P
                let result = await Self.once.run([job])[0]
                #expect(result.error == nil, "\(failure(result))")
                #expect(contents("\(directory)/out/escape.bin") == Self.body(5))
                #expect(listing(directory) == ["out"])
                #expect(result.path == "\(directory)/out/escape.bin")
            }
        }
    }

    /// No request that is not needed: a pinned batch whose every file is already complete is
    /// verified from disk, with no request at all.
    @Test func `a pinned batch rerun where every file is complete makes no request`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: [])) { server in
            Self.serveFiles(server)
            try await withTemporaryDirectory { directory in
                let jobs = try (1...6).map { try Self.job($0, from: server, in: "\(directory)/out", pinned: true) }
                let first = await Self.once.run(jobs, parallelism: 3)
                #expect(first.allSatisfy { $0.error == nil }, "\(first.map(failure))")
                #expect(server.requests.count == 6)
                let again = await Self.once.run(jobs, parallelism: 3)
                #expect(again.allSatisfy { $0.error == nil }, "\(again.map(failure))")
                #expect(again.map(\.status) == Array(repeating: .alreadyComplete, count: 6))
                #expect(server.requests.count == 6)  // none more
            }
        }
    }

    /// User input: a manifest whose two outputs are one file, once through a symbolic link to its directory.
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
}
