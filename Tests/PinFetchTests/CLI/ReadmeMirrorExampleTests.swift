import Foundation
import Testing

/// The README's mirroring script, run as written against an origin and
/// a mirror that lies about one file and lacks another, ends with exit 0, every file of the tree
/// right, and every `--json` line naming its source. A rerun fetches nothing. Its `SHA256SUMS` is
/// signed with a minisign key made by the real `minisign`; a changed one stops it.
struct ReadmeMirrorExampleTests {
    static let release = "/releases/1.2.3/"

    static let tree: [String: [UInt8]] = [
        "linux/amd64/tool": Array("linux amd64 tool\n".utf8),
        "linux/arm64/tool": Array("linux arm64 tool\n".utf8),
        "darwin/arm64/tool": Array("darwin arm64 tool\n".utf8),
        "README.md": Array("read me\n".utf8),
    ]
    /// What the mirror gets wrong: other bytes for one file, nothing for another.
    static let lie = "linux/amd64/tool"
    static let missing = "README.md"

    /// The script of the README's mirroring example (the ```sh block after its marker).
    static func script() throws -> String {
        let readme = try String(contentsOf: ReadmeExampleTests.root.appending(path: "README.md"), encoding: .utf8)
        let marker = try #require(readme.range(of: "<!-- mirror-example:"))
        let after = readme[marker.upperBound...]
        let open = try #require(after.range(of: "```sh\n"))
        let close = try #require(after[open.upperBound...].range(of: "```\n"))
        return String(after[open.upperBound..<close.lowerBound])
    }

    static var sums: String {
        Self.tree.keys.sorted().map { "\(Fixtures.sha256(Self.tree[$0]!))  \($0)" }.joined(separator: "\n") + "\n"
    }

    /// `SHA256SUMS` and its minisign signature by `release.key` in `directory` (also written
    /// there: the script's `release.pub`).
    static func signedSums(in directory: String) async throws -> (sums: [UInt8], signature: [UInt8]) {
        try Self.sums.write(toFile: "\(directory)/sums", atomically: true, encoding: .utf8)
        try await SignedChecksumFileTests.minisignKey("release", in: directory)
        try await SignedChecksumFileTests.minisign("\(directory)/sums", key: "release", in: directory)
        let signature = try #require(FileManager.default.contents(atPath: "\(directory)/sums.minisig"))
        return (Array(Self.sums.utf8), Array(signature))
    }

    /// Writes the README's script into `directory` with the servers' URLs, and returns the bash
    /// command that runs it with the `pinfetch` under test first on the `PATH`.
    static func installScript(in directory: String, origin: TestHTTPServer, mirror: TestHTTPServer) throws -> String {
        let script = try Self.script()
            .replacing("https://downloads.example.org/", with: origin.baseURL + "/")
            .replacing("https://mirror.example.net/", with: mirror.baseURL + "/")
        try script.write(toFile: "\(directory)/mirror.sh", atomically: true, encoding: .utf8)
        return "cd \(directory) && mkdir -p bin && ln -sf \"$PF\" bin/pinfetch && "
            + "PATH=\"$PWD/bin:$PATH\" PINFETCH_CACHE_DIR= sh ./mirror.sh"
    }

    static func serve(_ server: TestHTTPServer, lying: Bool, signed: (sums: [UInt8], signature: [UInt8]) = ([], [])) {
        server.handler = { request, _ in
            guard request.target.hasPrefix(Self.release) else { return TestResponse(status: 404) }
            let name = String(request.target.dropFirst(Self.release.count))
            let modified = ("Last-Modified", "Sun, 09 Sep 2001 01:46:40 GMT")
            if name == "SHA256SUMS", !lying { return TestResponse(status: 200, body: signed.sums) }
            if name == "SHA256SUMS.minisig", !lying { return TestResponse(status: 200, body: signed.signature) }
            if lying, name == Self.missing { return TestResponse(status: 404) }
            if lying, name == Self.lie {
                return TestResponse(status: 200, headers: [modified], body: Array("evil\n".utf8))
            }
            guard let body = Self.tree[name] else { return TestResponse(status: 404) }
            return TestResponse(status: 200, headers: [modified], body: body)
        }
    }

    @Test func `the README's mirroring script mirrors a tree past a lying mirror, and a rerun fetches nothing`()
        async throws
    {
        try await withTestHTTPServer(serving: TestResource(body: [])) { origin in
            try await withTestHTTPServer(serving: TestResource(body: [])) { mirror in
                try await withTemporaryDirectory { directory in
                    Self.serve(origin, lying: false, signed: try await Self.signedSums(in: directory))
                    Self.serve(mirror, lying: true)
                    let run = try Self.installScript(in: directory, origin: origin, mirror: mirror)
                    let first = try await PipeTests.bash(run, in: directory)
                    #expect(first.termination == .exited(0), "\(first.transcript)")
                    for (name, body) in Self.tree {
                        #expect(contents("\(directory)/mirror/1.2.3/\(name)") == body, "\(name)")
                        #expect(TreeMirrorTests.modificationTime("\(directory)/mirror/1.2.3/\(name)") == 1_000_000_000)
                    }
                    let lines = jsonLines(try String(contentsOfFile: "\(directory)/results.jsonl", encoding: .utf8))
                    #expect(lines.count == Self.tree.count, "\(lines)")
                    for line in lines {
                        let path = try #require(line["path"] as? String)
                        let name = String(path.dropFirst("mirror/1.2.3/".count))
                        let source = line["source"] as? String
                        let outcomes = (line["mirrors"] as? [[String: Any]] ?? []).map { $0["outcome"] as? String }
                        switch name {
                        case Self.lie:
                            #expect(source == origin.url(Self.release + name), "\(line)")
                            #expect(outcomes == ["mismatch", "ok"], "\(line)")
                        case Self.missing:
                            #expect(source == origin.url(Self.release + name), "\(line)")
                            #expect(outcomes == ["serverResponse", "ok"], "\(line)")
                        default:
                            #expect(source == mirror.url(Self.release + name), "\(line)")
                            #expect(outcomes == ["ok"], "\(line)")
                        }
                    }
                    let requests = origin.getRequests.count + mirror.getRequests.count
                    let again = try await PipeTests.bash(run, in: directory)
                    #expect(again.termination == .exited(0), "\(again.transcript)")
                    let rerun = jsonLines(try String(contentsOfFile: "\(directory)/results.jsonl", encoding: .utf8))
                    #expect(rerun.allSatisfy { $0["status"] as? String == "already-complete" }, "\(rerun)")
                    // Only SHA256SUMS and its signature are fetched again (not pinned); no file is.
                    #expect(origin.getRequests.count + mirror.getRequests.count == requests + 2)
                }
            }
        }
    }

    @Test func `the README's mirroring script stops with exit 9 on a SHA256SUMS its key did not sign`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: [])) { origin in
            try await withTestHTTPServer(serving: TestResource(body: [])) { mirror in
                try await withTemporaryDirectory { directory in
                    var signed = try await Self.signedSums(in: directory)
                    // An attacker on the origin swaps one digest for their file's.
                    signed.sums = Array(
                        Self.sums.replacing(
                            Fixtures.sha256(Self.tree[Self.lie]!),
                            with: Fixtures.sha256(Array("evil\n".utf8))
                        ).utf8
                    )
                    Self.serve(origin, lying: false, signed: signed)
                    Self.serve(mirror, lying: true)
                    let run = try Self.installScript(in: directory, origin: origin, mirror: mirror)
                    let result = try await PipeTests.bash(run, in: directory)
                    #expect(result.termination == .exited(9), "\(result.transcript)")
                    #expect(!FileManager.default.fileExists(atPath: "\(directory)/mirror/1.2.3/\(Self.lie)"))
                    #expect(mirror.getRequests.isEmpty, "no file was fetched")
                    let lines = jsonLines(try String(contentsOfFile: "\(directory)/results.jsonl", encoding: .utf8))
                    // Its entries are not trusted, so none is named: the one line on stderr says why.
                    #expect(lines.isEmpty, "\(lines)")
                    #expect(result.transcript.contains("is not the one signed"), "\(result.transcript)")
                }
            }
        }
    }
}
