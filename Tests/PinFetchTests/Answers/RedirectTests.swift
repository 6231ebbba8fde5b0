import Foundation
import Synchronization
import Testing

@testable import PinFetch

/// Redirects: followed by pinfetch itself, credentials kept inside the origin, the original URL
/// in the checkpoint, and a signed target re-resolved on every attempt.
struct RedirectTests {
    static let quiet = ["-q", "--json", "--retry-delay", "0"]
    static let secrets = [
        "Authorization: Bearer s3cr3t-token", "Cookie: session=c00kie", "Proxy-Authorization: Basic cHJveHk=",
    ]

    /// A 302 to `location`.
    static func redirect(to location: String) -> TestResponse {
        TestResponse(status: 302, headers: [(name: "Location", value: location)], body: Array("moved".utf8))
    }

    static func headerArguments(_ lines: [String]) -> [String] { lines.flatMap { ["-H", $0] } }

    /// Every -H header goes: `PRIVATE-TOKEN` and `X-Api-Key` are credentials too.
    @Test func `-H headers and credentials are dropped when a redirect leaves the origin`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: Fixtures.a, etag: Fixtures.etagA)) { target in
            try await withTestHTTPServer(serving: TestResource(body: [])) { origin in
                origin.handler = { _, _ in Self.redirect(to: target.url()) }
                try await withTemporaryDirectory { directory in
                    let headers = Self.secrets + ["X-Trace: 42", "PRIVATE-TOKEN: glpat-s3cr3t"]
                    let result = await Fetcher.immediate { $0.headers = headers }.run(
                        origin.url(),
                        to: "\(directory)/out.bin",
                        verifying: try Pin(sha256Hex: Fixtures.sha256A)
                    )
                    #expect(result.error == nil, "\(failure(result))")
                    #expect(contents("\(directory)/out.bin") == Fixtures.a)
                    let shown = [result.url, result.source ?? ""] + result.mirrors.map(\.url)
                    #expect(!shown.contains { $0.contains("s3cr3t") }, "\(shown)")
                    for request in origin.requests {
                        #expect(request.header("Authorization") == "Bearer s3cr3t-token")
                        #expect(request.header("Cookie") == "session=c00kie")
                    }
                    #expect(!target.requests.isEmpty)
                    for request in target.requests {
                        #expect(request.header("Authorization") == nil)
                        #expect(request.header("Cookie") == nil)
                        #expect(request.header("Proxy-Authorization") == nil)
                        #expect(request.header("X-Trace") == nil)
                        #expect(request.header("PRIVATE-TOKEN") == nil)
                    }
                    #expect(origin.requests.first?.header("PRIVATE-TOKEN") == "glpat-s3cr3t")
                    // What the command line prints of the same fetch, given the headers with -H.
                    let run = await runCLI(
                        Self.quiet + Self.headerArguments(headers)
                            + ["--sha256", Fixtures.sha256A, "-o", "\(directory)/again.bin", origin.url()]
                    )
                    #expect(run.status == 0)
                    #expect(!run.standardOutput.contains("s3cr3t") && !run.standardError.contains("s3cr3t"))
                }
            }
        }
    }

    @Test func `credentials stay on a redirect within the origin`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: Fixtures.a, etag: Fixtures.etagA)) { server in
            server.handler = { request, _ in request.target == "/file" ? Self.redirect(to: "/real") : nil }
            try await withTemporaryDirectory { directory in
                let result = await Fetcher.immediate { $0.headers = Self.secrets }.run(
                    server.url(),
                    to: "\(directory)/out.bin",
                    verifying: try Pin(sha256Hex: Fixtures.sha256A)
                )
                #expect(result.error == nil, "\(failure(result))")
                #expect(server.requests.map(\.target) == ["/file", "/real"])
                #expect(server.requests.allSatisfy { $0.header("Authorization") == "Bearer s3cr3t-token" })
            }
        }
    }

    @Test func `a signed target is re-resolved from the original URL on every attempt`() async throws {
        let issued = Atomic<Int>(0)
        try await withTestHTTPServer(serving: TestResource(body: Fixtures.a, etag: Fixtures.etagA)) { target in
            // Only the latest signature is valid: an attempt that reused an old target would get 403.
            target.handler = { request, _ in
                let signature = Int(request.target.split(separator: "=").last ?? "") ?? -1
                return signature == issued.load(ordering: .relaxed) ? nil : TestResponse(status: 403)
            }
            try await withTestHTTPServer(serving: TestResource(body: [])) { origin in
                origin.handler = { _, _ in
                    let signature = issued.add(1, ordering: .relaxed).newValue
                    return Self.redirect(to: target.url("/file?sig=\(signature)"))
                }
                try await withTemporaryDirectory { directory in
                    let output = "\(directory)/out.bin"
                    target.enqueueFaults(TestFaults(closeAfterBodyBytes: 400_000))
                    let first = await Fetcher.immediate(retries: 0).run(origin.url(), to: output)
                    #expect(first.error?.code == .network, "\(failure(first))")
                    let saved = try #require(CheckpointFile.read(output + ".part.state"))
                    #expect(saved.durable.first?.url == origin.url())  // the original URL, not the target

                    target.enqueueFaults(TestFaults(closeAfterBodyBytes: 200_000))
                    let second = await Fetcher.immediate(retries: 3).run(
                        origin.url(),
                        to: output,
                        verifying: try Pin(sha256Hex: Fixtures.sha256A)
                    )
                    #expect(second.error == nil, "\(failure(second))")
                    #expect(second.resumedFrom == 400_000)
                    #expect(contents(output) == Fixtures.a)
                    #expect(target.getRequests.map { $0.header("Range") } == [nil, "bytes=400000-", "bytes=600000-"])
                    #expect(origin.getRequests.count == 3)
                }
            }
        }
    }

    @Test func `a redirect loop ends with exit 7`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: [])) { server in
            server.handler = { _, _ in Self.redirect(to: "/file") }
            try await withTemporaryDirectory { directory in
                let result = await Fetcher.immediate().run(server.url(), to: "\(directory)/out.bin")
                #expect(result.error?.code == .protocolViolation, "\(failure(result))")
                #expect(server.getRequests.count == 11)  // the first request and 10 redirects
                #expect(listing(directory).isEmpty)
            }
        }
    }

    @Test(arguments: ["ftp://127.0.0.1/file", "http://", "file:///etc/passwd"])
    func `a redirect to a non-HTTP or malformed target is refused`(location: String) async throws {
        try await withTestHTTPServer(serving: TestResource(body: [])) { server in
            server.handler = { _, _ in Self.redirect(to: location) }
            try await withTemporaryDirectory { directory in
                let result = await Fetcher.immediate().run(server.url(), to: "\(directory)/out.bin")
                #expect(result.error?.code == .protocolViolation, "\(failure(result))")
                #expect(listing(directory).isEmpty)
            }
        }
    }

    @Test func `origins compare scheme, host and port`() throws {
        func same(_ a: String, _ b: String) throws -> Bool { try HTTPURL(a).isSameOrigin(as: HTTPURL(b)) }
        #expect(try same("http://a.example/x", "HTTP://A.example:80/y"))
        #expect(try same("https://a.example/", "https://a.example:443/"))
        #expect(try !same("http://a.example/", "https://a.example/"))
        #expect(try !same("http://a.example/", "http://a.example:8080/"))
        #expect(try !same("http://a.example/", "http://b.example/"))
    }
}
