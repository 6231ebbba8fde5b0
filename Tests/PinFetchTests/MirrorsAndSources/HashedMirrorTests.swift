import Foundation
import PinFetch
import Testing

/// Hash-addressed mirrors: asked first for a pinned file, verified like any
/// mirror; a miss or other bytes move on to the file's own URLs.
struct HashedMirrorTests {
    static let body = Array("hash-addressed content\n".utf8)

    /// A store that answers `/sha256/<hex>` with `stored` for the body's digest, 404 otherwise.
    static func store(_ server: TestHTTPServer, stored: [UInt8]?) {
        let hex = Fixtures.sha256(Self.body)
        server.handler = { request, _ in
            guard request.target == "/store/sha256/\(hex)", let stored else { return TestResponse(status: 404) }
            return TestResponse(status: 200, body: stored)
        }
    }

    @Test(arguments: ["hit", "miss", "other bytes"])
    func `a pinned file comes from the hashed mirror when it has the right bytes, else from its URL`(
        store: String
    ) async throws {
        try await withTestHTTPServer(serving: TestResource(body: [])) { hashed in
            try await withTestHTTPServer(serving: TestResource(body: Self.body, etag: "\"o\"")) { origin in
                Self.store(hashed, stored: store == "hit" ? Self.body : store == "miss" ? nil : Array("junk\n".utf8))
                try await withTemporaryDirectory { directory in
                    let run = await runCLI([
                        "--json", "--retries", "0", "--hashed-mirror", hashed.baseURL + "/store/{algo}/{hex}",
                        "--sha256", Fixtures.sha256(Self.body), "-o", directory + "/f", origin.url("/f"),
                    ])
                    #expect(run.status == 0, "\(run.standardError)")
                    #expect(contents(directory + "/f") == Self.body)
                    #expect(hashed.getRequests.count == 1)
                    #expect(origin.getRequests.count == (store == "hit" ? 0 : 1))
                    #expect(run.string("url") == origin.url("/f"))  // the file's identity
                    let hashedURL = hashed.url("/store/sha256/\(Fixtures.sha256(Self.body))")
                    #expect(run.string("source") == (store == "hit" ? hashedURL : origin.url("/f")))
                    let outcomes = (run.json["mirrors"] as? [[String: Any]] ?? []).map {
                        $0["outcome"] as? String ?? ""
                    }
                    let expected = [
                        "hit": ["ok"], "miss": ["serverResponse", "ok"], "other bytes": ["mismatch", "ok"],
                    ]
                    #expect(outcomes == expected[store], "\(run.standardOutput)")
                }
            }
        }
    }

    @Test func `an unpinned file never asks the hashed mirror; a manifest line adds one`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: [])) { hashed in
            try await withTestHTTPServer(serving: TestResource(body: Self.body, etag: "\"o\"")) { origin in
                Self.store(hashed, stored: Self.body)
                try await withTemporaryDirectory { directory in
                    let unpinned = await runCLI([
                        "--hashed-mirror", hashed.baseURL + "/store/{algo}/{hex}", "-o", directory + "/u",
                        origin.url("/f"),
                    ])
                    #expect(unpinned.status == 0, "\(unpinned.standardError)")
                    #expect(hashed.requests.isEmpty)
                    let manifest = """
                        hashed-mirror \(hashed.baseURL)/store/{algo}/{hex}
                        \(origin.url("/f")) sha256:\(Fixtures.sha256(Self.body)) m
                        """
                    try manifest.write(toFile: directory + "/list", atomically: true, encoding: .utf8)
                    let listed = await runCLI(["-i", directory + "/list", "-P", directory])
                    #expect(listed.status == 0, "\(listed.standardError)")
                    #expect(contents(directory + "/m") == Self.body)
                    #expect(hashed.getRequests.count == 1)
                }
            }
        }
    }

    @Test(arguments: [
        "https://store.example.org/{algo}/", "ftp://store.example.org/{hex}", "store/{hex}",
        // The message shows the template without its secrets.
        "http://u:PWSECRET@store.test/x?token=TOKSECRET", "ftp://u:PWSECRET@store.test/{hex}?token=TOKSECRET",
        "http://u:PWSECRET@store.test/{hex}?token=TOKSECRET#x",
    ])
    func `a template without {hex} or that makes no http URL is exit 2`(template: String) async {
        let run = await runCLI([
            "--hashed-mirror", template, "--sha256", String(repeating: "a", count: 64), "http://h.test/f",
        ])
        #expect(run.status == 2, "\(run.standardError)")
        #expect(run.standardError.contains("--hashed-mirror"))
        #expect(!run.standardError.contains("SECRET"), "\(run.standardError)")
    }

    @Test func `-H and --user go to the file's own URLs, never to a hashed mirror`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: [])) { hashed in
            try await withTestHTTPServer(serving: TestResource(body: Self.body, etag: "\"o\"")) { origin in
                Self.store(hashed, stored: nil)  // a miss: the origin is asked too
                try await withTemporaryDirectory { directory in
                    let run = await runCLI([
                        "--retries", "0", "--hashed-mirror", hashed.baseURL + "/store/{algo}/{hex}", "-H",
                        "X-Token: secret", "--user", "u:p", "--sha256", Fixtures.sha256(Self.body), "-o",
                        directory + "/f",
                        origin.url("/f"),
                    ])
                    #expect(run.status == 0, "\(run.standardError)")
                    let asked = try #require(hashed.getRequests.first)
                    #expect(asked.header("X-Token") == nil && asked.header("Authorization") == nil)
                    #expect(origin.getRequests.first?.header("X-Token") == "secret")
                    #expect(origin.getRequests.first?.header("Authorization") != nil)
                }
            }
        }
    }
}
