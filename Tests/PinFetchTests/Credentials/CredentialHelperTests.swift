import Foundation
@preconcurrency import Glibc
import Testing

@testable import PinFetch

/// `--credential-helper` (Bazel's protocol): a script's header fields reach the host it was
/// given for and no other origin, are asked once per URI until they expire, are never shown;
/// a helper that fails, hangs or prints garbage is exit 6 and creates nothing.
@Suite(.serialized) struct CredentialHelperTests {
    static let body = Array("a file behind a token\n".utf8)

    /// Runs pinfetch to its end.
    static func pinfetch(_ arguments: [String], in work: String) async throws -> ChildProcess {
        let child = try ChildProcess(
            try EndToEndTests.pinfetchExecutable(),
            ["--no-cache", "--retries", "0"] + arguments,
            logs: "\(work)/pinfetch-\(UUID().uuidString.prefix(8))",
            environment: ["HOME": work]
        )
        try await child.wait(timeout: .seconds(60))
        return child
    }

    static func status(_ child: ChildProcess) -> Int32? {
        if case .exited(let code) = child.termination { return code }
        return nil
    }

    /// An executable script `name` in `work` with `body` after its `#!/bin/sh` line.
    static func script(_ name: String, in work: String, _ body: String) throws -> String {
        let path = "\(work)/\(name)"
        try "#!/bin/sh\n\(body)\n".write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o755)
        return path
    }

    /// A helper that logs each request it got to `work/asked` and answers `X-Token: t0k3n`.
    static func tokenHelper(in work: String, expires: String = "2099-01-01T00:00:00Z") throws -> String {
        try Self.script(
            "token-helper",
            in: work,
            """
            [ "$1" = get ] || exit 9
            cat >> '\(work)/asked'; echo >> '\(work)/asked'
            echo '{"headers": {"X-Token": ["t0k3n"]}, "expires": "\(expires)"}'
            """
        )
    }

    @Test func `a helper's header reaches its host, once per URI, and -v never shows its value`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: Self.body, etag: "\"t\"")) { server in
            server.handler = { request, _ in request.header("X-Token") == "t0k3n" ? nil : TestResponse(status: 401) }
            try await withTemporaryDirectory { work in
                let helper = try Self.tokenHelper(in: work)
                let url = server.url("/releases/tool.tgz?v=1")
                let run = try await Self.pinfetch(
                    ["-v", "--credential-helper", "127.0.0.1=\(helper)", "-o", "\(work)/out", url],
                    in: work
                )
                #expect(Self.status(run) == 0, "\(run.transcript)")
                let same = contents("\(work)/out") == Self.body
                #expect(same)
                #expect(!server.requests.isEmpty && server.requests.allSatisfy { $0.header("X-Token") == "t0k3n" })
                // Asked once with the URI as JSON, whatever number of requests went to it.
                let asked = (try? String(contentsOfFile: "\(work)/asked", encoding: .utf8)) ?? ""
                #expect(asked == #"{"uri":"\#(url)"}"# + "\n", "\(asked)")
                #expect(run.standardError.contains("X-Token: ***"), "\(run.standardError)")
                #expect(run.standardError.contains("credential helper \(helper) for 127.0.0.1: X-Token"))
                #expect(!run.standardError.contains("t0k3n"))
            }
        }
    }

    @Test func `an expired answer is asked again, and a helper for another host is not run`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: Self.body, etag: "\"t\"")) { server in
            server.handler = { request, index in
                guard request.header("X-Token") == "t0k3n" else { return TestResponse(status: 401) }
                // The first answer is cut: the retry is a second request to the same URI.
                return index == 0
                    ? TestResponse(status: 200, headers: [("ETag", "\"t\"")], body: Self.body, closeAfterBodyBytes: 10)
                    : nil
            }
            try await withTemporaryDirectory { work in
                let helper = try Self.tokenHelper(in: work, expires: "2001-01-01T00:00:00Z")
                let other = try Self.script("other", in: work, "touch '\(work)/other-ran'; exit 1")
                let run = try await Self.pinfetch(
                    [
                        "--credential-helper", "*.example.com=\(other)", "--credential-helper", "127.0.0.1=\(helper)",
                        "--credential-helper", "example.org=\(other)", "--retries", "1", "-o", "\(work)/out",
                        "--sha256", Fixtures.sha256(Self.body), server.url("/f"),
                    ],
                    in: work
                )
                #expect(Self.status(run) == 0, "\(run.transcript)")
                let asked = ((try? String(contentsOfFile: "\(work)/asked", encoding: .utf8)) ?? "")
                    .split(separator: "\n")
                #expect(server.requests.count == 2 && asked.count == 2, "\(asked) for \(server.requests.map(\.method))")
                #expect(!FileManager.default.fileExists(atPath: "\(work)/other-ran"))
            }
        }
    }

    @Test func `a manifest fetched by URL gets the helper's fields too`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: Self.body)) { server in
            let manifest = "\(server.url("/f")) sha256:\(Fixtures.sha256(Self.body)) tool\n"
            server.handler = { request, _ in
                guard request.header("X-Token") == "t0k3n" else { return TestResponse(status: 401) }
                return request.target == "/list" ? TestResponse(status: 200, body: Array(manifest.utf8)) : nil
            }
            try await withTemporaryDirectory { work in
                let helper = try Self.tokenHelper(in: work)
                let run = try await Self.pinfetch(
                    ["--credential-helper", "127.0.0.1=\(helper)", "-P", "\(work)/out", "-i", server.url("/list")],
                    in: work
                )
                #expect(Self.status(run) == 0, "\(run.transcript)")
                let same = contents("\(work)/out/tool") == Self.body
                #expect(same)
                #expect(server.requests.map(\.target).contains("/list"))
            }
        }
    }

    @Test func `the remote cache's host gets its helper's fields`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: Self.body)) { cache in
            try await withTestHTTPServer(serving: TestResource(body: [])) { origin in
                cache.handler = { request, _ in request.header("X-Token") == "t0k3n" ? nil : TestResponse(status: 401) }
                origin.handler = { _, _ in TestResponse(status: 500) }
                try await withTemporaryDirectory { work in
                    let helper = try Self.tokenHelper(in: work)
                    let run = try await Self.pinfetch(
                        [
                            "--credential-helper", "localhost=\(helper)", "--remote-cache",
                            "http://localhost:\(cache.port)/bazel", "-o", "\(work)/out", "--sha256",
                            Fixtures.sha256(Self.body), origin.url("/f"),
                        ],
                        in: work
                    )
                    #expect(Self.status(run) == 0, "\(run.transcript)")
                    let same = contents("\(work)/out") == Self.body
                    #expect(same)
                    #expect(cache.requests.first?.target == "/bazel/cas/\(Fixtures.sha256(Self.body))")
                    #expect(origin.requests.allSatisfy { $0.header("X-Token") == nil })
                }
            }
        }
    }

    @Test func `a helper's fields never follow a redirect to another origin`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: Self.body)) { storage in
            try await withTestHTTPServer(serving: TestResource(body: [])) { registry in
                // The storage is another host (localhost, not 127.0.0.1): the helper is not for it.
                let target = "http://localhost:\(storage.port)/blob"
                registry.handler = { request, _ in
                    guard request.header("X-Token") == "t0k3n" else { return TestResponse(status: 401) }
                    return TestResponse(status: 307, headers: [("Location", target)])
                }
                try await withTemporaryDirectory { work in
                    let helper = try Self.tokenHelper(in: work)
                    let run = try await Self.pinfetch(
                        [
                            "--credential-helper", "127.0.0.1=\(helper)", "-o", "\(work)/out", "--sha256",
                            Fixtures.sha256(Self.body), registry.url("/v2/blob"),
                        ],
                        in: work
                    )
                    #expect(Self.status(run) == 0, "\(run.transcript)")
                    #expect(registry.requests.allSatisfy { $0.header("X-Token") == "t0k3n" })
                    #expect(!storage.requests.isEmpty && storage.requests.allSatisfy { $0.header("X-Token") == nil })
                }
            }
        }
    }

    @Test func `a helper that fails, hangs or prints garbage is exit 6, and nothing is created`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: Self.body)) { server in
            try await withTemporaryDirectory { work in
                let out = try EndToEndTests.makeDirectory(work + "/out")
                let cases: [(String, String, String)] = [
                    (
                        "failing",
                        "echo 'login expired for ghp_R2x9Kq7LmN3pT5vW8yZ1aB4cD6eF: run gh auth login' >&2; exit 3",
                        "failed (exit 3): login expired for ***: run gh auth login"
                    ),
                    ("hanging", "sleep 60", "gave no answer within 1 s (--credential-helper-timeout)"),
                    ("garbage", "echo 'token: abc'", "printed no JSON object with \"headers\""),
                    (
                        "injecting", #"printf '%s\n' '{"headers": {"X-A": ["v\r\nX-Injected: 1"]}}'"#,
                        "gave a value of X-A with a control character"
                    ),
                    ("bad name", #"echo '{"headers": {"X A": ["v"]}}'"#, "gave a header name that is not a token"),
                    (
                        "host", #"echo '{"headers": {"Host": ["evil.example"]}}'"#,
                        "gave Host, which pinfetch sets itself"
                    ),
                ]
                for (name, body, said) in cases {
                    let helper = try Self.script(name.replacing(" ", with: "-"), in: work, body)
                    let run = try await Self.pinfetch(
                        [
                            "--credential-helper", helper, "--credential-helper-timeout", "1", "-o", "\(out)/file",
                            server.url("/f"),
                        ],
                        in: work
                    )
                    #expect(Self.status(run) == 6, "\(name): \(run.transcript)")
                    #expect(run.standardError.contains("credential helper \(helper) \(said)"), "\(run.standardError)")
                    #expect(listing(out).isEmpty, "\(name): \(listing(out))")
                }
                #expect(server.requests.isEmpty)
            }
        }
    }

    @Test func `the most specific pattern wins, the later of two equal ones`() throws {
        let helpers = try [
            "any", "*.example.com=wild", "*.ci.example.com=deeper", "example.com=exact", "*.example.com=later",
        ]
        .map { (text) throws(PinFetchError) in try CredentialHelper(parsing: text) }
        func chosen(_ host: String) -> String? { CredentialHelper.chosen(from: helpers, for: host)?.path }
        #expect(chosen("example.com") == "exact")
        #expect(chosen("EXAMPLE.com") == "exact")
        #expect(chosen("a.example.com") == "later")
        #expect(chosen("x.ci.example.com") == "deeper")
        #expect(chosen("ci.example.com") == "deeper")
        #expect(chosen("example.org") == "any")
        #expect(chosen("badexample.com") == "any")
        #expect(CredentialHelper.chosen(from: Array(helpers.dropFirst()), for: "example.org") == nil)
        // A path may hold '=' when what is before it is no pattern; a pattern is a host name.
        #expect(try CredentialHelper(parsing: "/opt/x=y/helper").pattern == nil)
        for refused in ["*=x", "a.*.com=x", "host:443=x", "example.com=", ""] {
            #expect(throws: PinFetchError.self, "\(refused)") { try CredentialHelper(parsing: refused) }
        }
    }
}
