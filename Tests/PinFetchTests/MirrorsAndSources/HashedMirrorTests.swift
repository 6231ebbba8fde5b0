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

    /// One file from `url` to `destination`, pinned to ``body`` unless `pinned` is false, with
    /// the hashed mirror of `hashed`, as `--hashed-mirror` is.
    static func job(
        _ url: String,
        to destination: String,
        hashed: TestHTTPServer,
        pinned: Bool = true
    ) throws
        -> FetchJob
    {
        var job = FetchJob(
            mirrors: [url],
            destination: destination,
            pin: pinned ? try Pin(sha256Hex: Fixtures.sha256(Self.body)) : nil
        )
        job.hashedMirrors = [try HashedMirror(hashed.baseURL + "/store/{algo}/{hex}")]
        return job
    }

    @Test(arguments: ["hit", "miss", "other bytes"])
    func `a pinned file comes from the hashed mirror when it has the right bytes, else from its URL`(
        store: String
    ) async throws {
        try await withTestHTTPServer(serving: TestResource(body: [])) { hashed in
            try await withTestHTTPServer(serving: TestResource(body: Self.body, etag: "\"o\"")) { origin in
                Self.store(hashed, stored: store == "hit" ? Self.body : store == "miss" ? nil : Array("junk\n".utf8))
                try await withTemporaryDirectory { directory in
                    let job = try Self.job(origin.url("/f"), to: directory + "/f", hashed: hashed)
                    let result = await Fetcher.immediate(retries: 0).run([job])[0]
                    #expect(result.error == nil, "\(failure(result))")
                    #expect(contents(directory + "/f") == Self.body)
                    #expect(hashed.getRequests.count == 1)
                    #expect(origin.getRequests.count == (store == "hit" ? 0 : 1))
                    #expect(result.url == origin.url("/f"))  // the file's identity
                    let hashedURL = hashed.url("/store/sha256/\(Fixtures.sha256(Self.body))")
                    #expect(result.source == (store == "hit" ? hashedURL : origin.url("/f")))
                    let expected = [
                        "hit": ["ok"], "miss": ["serverResponse", "ok"], "other bytes": ["mismatch", "ok"],
                    ]
                    #expect(result.mirrors.map(\.outcome) == expected[store], "\(result.mirrors)")
                }
            }
        }
    }

    @Test func `an unpinned file never asks the hashed mirror`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: [])) { hashed in
            try await withTestHTTPServer(serving: TestResource(body: Self.body, etag: "\"o\"")) { origin in
                Self.store(hashed, stored: Self.body)
                try await withTemporaryDirectory { directory in
                    let job = try Self.job(origin.url("/f"), to: directory + "/u", hashed: hashed, pinned: false)
                    let unpinned = await Fetcher.immediate().run([job])[0]
                    #expect(unpinned.error == nil, "\(failure(unpinned))")
                    #expect(hashed.requests.isEmpty)
                }
            }
        }
    }

    @Test func `a manifest line adds a hashed mirror`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: [])) { hashed in
            try await withTestHTTPServer(serving: TestResource(body: Self.body, etag: "\"o\"")) { origin in
                Self.store(hashed, stored: Self.body)
                try await withTemporaryDirectory { directory in
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
        "http://u:PWSECRET@store.test/{hex}?token=TOKSECRET#x", "https://store.example.org/{hex}#\u{301}x",
    ])
    func `a template without {hex} or that makes no http URL is exit 2`(template: String) async {
        let run = await runCLI([
            "--hashed-mirror", template, "--sha256", String(repeating: "a", count: 64), "http://h.test/f",
        ])
        #expect(run.status == 2, "\(run.standardError)")
        #expect(run.standardError.contains("--hashed-mirror"))
        #expect(!run.standardError.contains("SECRET"), "\(run.standardError)")
        if template.utf8.contains(UInt8(ascii: "#")) {
            #expect(run.standardError.contains("fragment"), "\(run.standardError)")
        }
    }

    @Test func `-H and --user go to the file's own URLs, never to a hashed mirror`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: [])) { hashed in
            try await withTestHTTPServer(serving: TestResource(body: Self.body, etag: "\"o\"")) { origin in
                Self.store(hashed, stored: nil)  // a miss: the origin is asked too
                try await withTemporaryDirectory { directory in
                    let job = try Self.job(origin.url("/f"), to: directory + "/f", hashed: hashed)
                    let fetcher = Fetcher.immediate(retries: 0) {
                        $0.headers = ["X-Token: secret"]
                        $0.credentials = "u:p"
                    }
                    let result = await fetcher.run([job])[0]
                    #expect(result.error == nil, "\(failure(result))")
                    let asked = try #require(hashed.getRequests.first)
                    #expect(asked.header("X-Token") == nil && asked.header("Authorization") == nil)
                    #expect(origin.getRequests.first?.header("X-Token") == "secret")
                    #expect(origin.getRequests.first?.header("Authorization") != nil)
                }
            }
        }
    }
}
