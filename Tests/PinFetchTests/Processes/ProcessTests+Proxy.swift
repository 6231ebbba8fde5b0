import Foundation
import Testing

/// Downloads through a real forward proxy (squid): a resume passes `Range` and
/// `If-Range` through it, HTTPS goes through `CONNECT`, a 407 is exit 6, and proxy credentials
/// (in the URL or given with `-U`) are never shown.
extension ProcessTests {
    static let proxied = ["-q", "--json", "--retry-delay", "0", "--retries", "0", "--no-cache"]

    @Test func `a download through squid is interrupted and resumed with Range and If-Range passed through`()
        async throws
    {
        try await withSquid { squid in
            try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
                try await withTemporaryDirectory { directory in
                    let output = "\(directory)/out.bin"
                    let arguments = Self.proxied + ["--proxy", squid.url(), "-o", output, server.url()]
                    server.enqueueFaults(TestFaults(closeAfterBodyBytes: 400_000))
                    let first = await runCLI(arguments)
                    #expect(first.status == 4, "\(first.standardError)\n\(squid.log)")
                    let second = await runCLI(arguments)
                    #expect(second.status == 0, "\(second.standardError)\n\(squid.log)")
                    #expect(second.string("status") == "resumed")
                    #expect((second.int("resumed_from") ?? 0) > 0)
                    #expect(contents(output) == Fixtures.a)
                    let resume = server.getRequests.last
                    #expect(resume?.header("Range") == "bytes=\(second.int("resumed_from") ?? 0)-")
                    #expect(resume?.header("If-Range") == Fixtures.etagA)
                    #expect(resume?.header("Via")?.contains("squid") == true, "not through the proxy")
                }
            }
        }
    }

    @Test func `HTTPS goes through the proxy's CONNECT tunnel and is verified end to end`() async throws {
        try await withSquid { squid in
            try await Self.withHTTPSNginx { nginx, authority, work in
                let run = try await self.pinfetch(
                    ["--proxy", squid.url(), "--cacert", authority.certificate, "--sha256", Fixtures.sha256A]
                        + ["-o", work + "/file", nginx.httpsURL("file")],
                    logs: work + "/run"
                )
                #expect(run.status == 0, "\(run.standardError)\n\(squid.log)")
                #expect(contents(work + "/file") == Fixtures.a)
                #expect(squid.accessLog.contains("CONNECT 127.0.0.1:\(nginx.tlsPort ?? 0)"), "\(squid.log)")
            }
        }
    }

    @Test func `a proxy that wants credentials is exit 6, and its password is never shown`() async throws {
        try await withSquid(user: "ci:Pr0xyPass") { squid in
            try await Self.withHTTPSNginx { nginx, authority, work in
                let plain = await runCLI(Self.proxied + ["--proxy", squid.url(), "-o", work + "/a", nginx.url("file")])
                #expect(plain.status == 6, "\(plain.standardError)\n\(squid.log)")
                let tunnel = await runCLI(
                    Self.proxied + ["--proxy", squid.url(), "--cacert", authority.certificate]
                        + ["-o", work + "/b", nginx.httpsURL("file")]
                )
                #expect(tunnel.status == 6, "\(tunnel.standardError)")
                // Both name the proxy that wants credentials, and say how to give them.
                let named =
                    "the proxy \(squid.url()) (--proxy) wants credentials (HTTP 407): give --proxy-user USER:PASSWORD"
                #expect(plain.standardError.contains(named), "\(plain.standardError)")
                #expect(tunnel.standardError.contains(named), "\(tunnel.standardError)")

                let proxy = squid.url(credentials: "ci:Pr0xyPass")
                let wrong = await runCLI(
                    Self.proxied + [
                        "--proxy", squid.url(credentials: "ci:nope"), "-o", work + "/c", nginx.url("file"),
                    ]
                )
                #expect(wrong.status == 6)
                // Credentials were given: they are to be checked, not given.
                let refused = "wants credentials (HTTP 407): the credentials given were refused: check --proxy-user"
                #expect(wrong.standardError.contains(refused), "\(wrong.standardError)")
                let good = await runCLI(Self.proxied + ["--proxy", proxy, "-o", work + "/d", nginx.url("file")])
                #expect(good.status == 0, "\(good.standardError)\n\(squid.log)")
                #expect(contents(work + "/d") == Fixtures.a)
                // curl's -x and -U: the credentials apart from the URL, through the tunnel too.
                let separate = await runCLI(
                    Self.proxied + ["-x", squid.url(), "-U", "ci:Pr0xyPass", "--cacert", authority.certificate]
                        + ["-o", work + "/e", nginx.httpsURL("file")]
                )
                #expect(separate.status == 0, "\(separate.standardError)\n\(squid.log)")
                #expect(contents(work + "/e") == Fixtures.a)
                let wrongSeparate = await runCLI(
                    Self.proxied + ["-x", squid.url(), "-U", "ci:nope", "-o", work + "/f", nginx.url("file")]
                )
                #expect(wrongSeparate.status == 6, "\(wrongSeparate.standardError)")
                #expect(wrongSeparate.standardError.contains(refused), "\(wrongSeparate.standardError)")
                for run in [plain, tunnel, wrong, good, separate, wrongSeparate] {
                    #expect(!run.standardError.contains("Pr0xyPass") && !run.standardOutput.contains("Pr0xyPass"))
                }
            }
        }
    }

    @Test func `http_proxy from the environment is used, and --noproxy goes around a proxy`() async throws {
        try await withSquid { squid in
            try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
                try await withTemporaryDirectory { directory in
                    let child = try self.startPinfetch(
                        ["-o", directory + "/env.bin", server.url()],
                        logs: directory + "/env",
                        environment: ["http_proxy": squid.url(), "no_proxy": ""]
                    )
                    try await child.wait(timeout: .seconds(60))
                    #expect(child.termination == .exited(0), "\(child.transcript)")
                    #expect(server.getRequests.last?.header("Via")?.contains("squid") == true)

                    let dead = "http://127.0.0.1:\(try Nginx.freePort())"  // nothing listens there
                    let around = await runCLI(
                        Self.proxied + [
                            "--proxy", dead, "--noproxy", "127.0.0.1", "-o", directory + "/direct", server.url(),
                        ]
                    )
                    #expect(around.status == 0, "\(around.standardError)")
                    #expect(server.getRequests.last?.header("Via") == nil)
                    // Without --noproxy the dead proxy is named, with where it came from.
                    let down = await runCLI(Self.proxied + ["--proxy", dead, "-o", directory + "/down", server.url()])
                    #expect(down.status == 4)
                    #expect(down.standardError.contains("the proxy \(dead) (--proxy): "), "\(down.standardError)")
                    let fromEnvironment = try self.startPinfetch(
                        Self.proxied + ["-o", directory + "/down-env", server.url()],
                        logs: directory + "/down-env",
                        environment: ["http_proxy": dead, "no_proxy": ""]
                    )
                    try await fromEnvironment.wait(timeout: .seconds(60))
                    #expect(fromEnvironment.termination == .exited(4), "\(fromEnvironment.transcript)")
                    #expect(fromEnvironment.transcript.contains("the proxy \(dead) ($http_proxy): "))
                }
            }
        }
    }

    /// `--noproxy` names an internationalized host as typed: the request goes around the proxy
    /// (and, here, finds no such host), the proxy is never asked.
    @Test(arguments: [
        ("bücher.example", "http://bücher.example/file"), (".BÜCHER.example", "http://bücher.example/file"),
        ("bücher.example", "http://b%C3%BCcher.example/file"), ("bücher.example", "http://xn--bcher-kva.example/file"),
    ])
    func `an internationalized name in --noproxy goes around the proxy`(entry: String, url: String) async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { proxy in
            proxy.handler = { _, _ in TestResponse(status: 200, body: Fixtures.a) }
            try await withTemporaryDirectory { work in
                // A process of its own: the name reaches libcurl in the UTF-8 locale the command sets.
                let around = try ChildProcess(
                    try EndToEndTests.pinfetchExecutable(),
                    Self.proxied + ["--proxy", proxy.baseURL, "--noproxy", entry]
                        + ["-o", work + "/out/file", url],
                    logs: work + "/run"
                )
                try await around.wait(timeout: .seconds(60))
                #expect(around.termination == .exited(4), "\(around.transcript)")  // no such host
                #expect(proxy.requests.isEmpty)
                #expect(!FileManager.default.fileExists(atPath: work + "/out/file"))
            }
        }
    }

    /// An internationalized host goes to the wire in its IDNA form, as curl sends it, whether
    /// typed in Unicode or percent-encoded, and under the C locale: the test server stands in
    /// for a proxy, which sees the absolute URL and `Host` without resolving the name.
    @Test(arguments: ["http://bücher.example/file", "http://b%C3%BCcher.example/file"])
    func `an internationalized host name is sent in its IDNA form`(url: String) async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { proxy in
            proxy.handler = { _, _ in TestResponse(status: 200, body: Fixtures.a) }
            try await withTemporaryDirectory { work in
                let child = try ChildProcess(
                    try EndToEndTests.pinfetchExecutable(),
                    Self.proxied + ["--proxy", proxy.baseURL, "--sha256", Fixtures.sha256A, "-o", work + "/file", url],
                    logs: work + "/run",
                    environment: ["LC_ALL": "C", "LANG": "C"]
                )
                try await child.wait(timeout: .seconds(60))
                #expect(child.termination == .exited(0), "\(child.transcript)")
                let request = try #require(proxy.getRequests.first)
                #expect(request.target == "http://xn--bcher-kva.example/file")
                #expect(request.header("Host") == "xn--bcher-kva.example")
                #expect(contents(work + "/file") == Fixtures.a)
                // What it reports names the host as a person types it, not in %XX.
                #expect(child.result.json["url"] as? String == "http://bücher.example/file", "\(child.transcript)")
            }
        }
    }

    /// A percent-encoded delimiter in a host is never decoded into the authority on the wire.
    @Test func `an escaped slash or at sign in a host never becomes a delimiter`() async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { proxy in
            proxy.handler = { _, _ in TestResponse(status: 200, body: Fixtures.a) }
            try await withTemporaryDirectory { work in
                for url in ["http://b%C3%BC%2Fevil.example/file", "http://b%C3%BC%40evil.example/file"] {
                    let run = await runCLI(Self.proxied + ["--proxy", proxy.baseURL, "-o", work + "/file", url])
                    #expect(run.status != 0, "\(url): \(run.standardError)")
                }
                #expect(proxy.requests.allSatisfy { !$0.target.contains("evil.example/") }, "\(proxy.requests)")
                #expect(!FileManager.default.fileExists(atPath: work + "/file"))
            }
        }
    }
}
