import Foundation
import PinFetch
import PinFetchCLI
import Testing

/// `--shard auto`: a Kubernetes Indexed Job's `JOB_COMPLETION_INDEX` picks the shard.
struct ShardAutoTests {
    static let arguments = ["--shard", "auto", "--shard-count", "4", "-i", "list"]

    @Test func `the index names the shard, the count the number of shards`() throws {
        let parsed = try Arguments.parse(Self.arguments, environment: ["JOB_COMPLETION_INDEX": "3"])
        #expect(parsed.shard?.k == 3 && parsed.shard?.n == 4)
    }

    @Test(arguments: [
        (["JOB_COMPLETION_INDEX": "4"], "needs 0 to 3"), ([:], "which is not set"),
        (["JOB_COMPLETION_INDEX": ""], "not set"),
        (["JOB_COMPLETION_INDEX": "-1"], "needs 0 to 3"), (["JOB_COMPLETION_INDEX": "1x"], "needs 0 to 3"),
    ])
    func `an index missing, empty or out of range is exit 2`(environment: [String: String], words: String) {
        #expect {
            try Arguments.parse(Self.arguments, environment: environment)
        } throws: { error in
            let error = error as? PinFetchError
            return error?.code == .usage && error?.message.contains(words) == true
        }
    }

    @Test func `--shard auto needs --shard-count, and --shard-count needs --shard auto`() {
        for arguments in [
            ["--shard", "auto", "-i", "list"], ["--shard-count", "2", "-i", "list"],
            ["--shard", "1/2", "--shard-count", "2", "-i", "list"],
        ] {
            #expect(throws: PinFetchError.self, "\(arguments)") {
                try Arguments.parse(arguments, environment: ["JOB_COMPLETION_INDEX": "1"])
            }
        }
    }

    /// The `command:` of the README's Indexed Job (a JSON array in its YAML, after the marker).
    static func readmeCommand() throws -> [String] {
        let readme = try String(contentsOf: ReadmeExampleTests.root.appending(path: "README.md"), encoding: .utf8)
        let marker = try #require(readme.range(of: "<!-- shard-example:"))
        let after = readme[marker.upperBound...]
        let start = try #require(after.range(of: "command: ["))
        let end = try #require(after[start.upperBound...].range(of: "]"))
        let array = "[" + after[start.upperBound..<end.lowerBound] + "]"
        return try #require(try JSONSerialization.jsonObject(with: Data(array.utf8)) as? [String])
    }

    /// The README's Indexed Job runs this command line (its YAML cannot run here): each index
    /// fetches its own entries, and all indexes together fetch every entry once.
    @Test func `the README's Job command fetches each entry on exactly one index`() async throws {
        let release = "/releases/1.2.3/"
        let bodies = (0..<6).map { Array("file \($0)\n".utf8) }
        let sums = bodies.indices.map { "\(Fixtures.sha256(bodies[$0]))  f\($0)" }.joined(separator: "\n") + "\n"
        try await withTestHTTPServer(serving: TestResource(body: [])) { server in
            server.handler = { request, _ in
                let name = request.target.dropFirst(release.count)
                if name == "SHA256SUMS" { return TestResponse(status: 200, body: Array(sums.utf8)) }
                guard let index = Int(name.dropFirst()), bodies.indices.contains(index) else {
                    return TestResponse(status: 404)
                }
                return TestResponse(status: 200, body: bodies[index])
            }
            try await withTemporaryDirectory { directory in
                let command = try Self.readmeCommand()
                #expect(command.first == "pinfetch")
                let arguments = command.dropFirst().map {
                    $0.replacing("https://downloads.example.org/", with: server.baseURL + "/")
                        .replacing("/mirror/", with: directory + "/mirror/")
                }
                let count = try #require(
                    arguments.firstIndex(of: "--shard-count").map { Int(arguments[$0 + 1]) } ?? nil
                )
                var fetched: [String] = []
                for index in 0..<count {
                    let child = try ChildProcess(
                        try EndToEndTests.pinfetchExecutable(),
                        ["--no-cache"] + arguments,
                        logs: directory + "/run\(index)",
                        environment: ["JOB_COMPLETION_INDEX": "\(index)"]
                    )
                    try await child.wait(timeout: .seconds(60))
                    #expect(child.termination == .exited(0), "\(child.transcript)")
                    let now = listing(directory + "/mirror/1.2.3").filter { !fetched.contains($0) }
                    #expect(
                        now == (index..<bodies.count).filter { $0 % count == index % count }.map { "f\($0)" },
                        "index \(index)"
                    )
                    fetched += now
                }
                #expect(fetched.sorted() == bodies.indices.map { "f\($0)" })
                for index in bodies.indices {
                    #expect(contents(directory + "/mirror/1.2.3/f\(index)") == bodies[index])
                }
                // Without the index the same command is exit 2, and nothing is fetched.
                let requests = server.requests.count
                let unset = try ChildProcess(
                    try EndToEndTests.pinfetchExecutable(),
                    ["--no-cache"] + arguments,
                    logs: directory + "/unset"
                )
                try await unset.wait(timeout: .seconds(60))
                #expect(unset.termination == .exited(2), "\(unset.transcript)")
                #expect(server.requests.count == requests)
            }
        }
    }
}

/// `PINFETCH_REMOTE_CACHE` and `--no-remote-cache`: a fleet-wide setting can be
/// turned off for one command; a bad value is exit 2.
struct RemoteCacheEnvironmentTests {
    static let pinned = ["--sha256", String(repeating: "a", count: 64), "http://h.test/f"]

    @Test func `the variable sets the cache, --remote-cache wins, --no-remote-cache turns it off`() throws {
        let environment = ["PINFETCH_REMOTE_CACHE": "http://cache.test/"]
        #expect(try Arguments.parse(Self.pinned, environment: environment).options.remoteCache == "http://cache.test/")
        let given = try Arguments.parse(
            ["--remote-cache", "http://other.test"] + Self.pinned,
            environment: environment
        )
        #expect(given.options.remoteCache == "http://other.test")
        let off = try Arguments.parse(["--no-remote-cache"] + Self.pinned, environment: environment)
        #expect(off.options.remoteCache == nil)
        let badButOff = ["PINFETCH_REMOTE_CACHE": "ftp://cache.test"]
        #expect(
            try Arguments.parse(["--no-remote-cache"] + Self.pinned, environment: badButOff).options.remoteCache == nil
        )
        #expect(throws: PinFetchError.self) { try Arguments.parse(Self.pinned, environment: badButOff) }
    }
}
