import Foundation
import Testing

/// Kept-alive connections and a body sent after a HEAD answer.
extension TestHTTPServerTests {
    static let keepAliveResource = TestResource(body: makeBody(1000), etag: "\"v1\"")

    @Test(arguments: [true, false])
    func `a keep-alive response keeps the connection for the next request`(keepAlive: Bool) async throws {
        try await withTestHTTPServer(serving: Self.keepAliveResource) { server in
            server.handler = { request, _ in
                TestResponse(
                    status: 200,
                    headers: keepAlive ? [(name: "Connection", value: "keep-alive")] : [],
                    body: Array(request.target.utf8)
                )
            }
            // Two URLs in one curl run: curl sends the second on the first one's connection when it may.
            let result = try await runCurl([server.url("/first")], url: server.url("/second"))
            #expect(result.exitCode == 0)
            #expect(result.status == 200)
            #expect(result.body == Array("/first".utf8))
            #expect(server.requests.map(\.target) == ["/first", "/second"])
            #expect(server.connectionsAccepted == (keepAlive ? 1 : 2))
            let deadline = ContinuousClock.now + .seconds(3)
            while server.activeThreadCount > 1 && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(10))
            }
            #expect(server.activeThreadCount == 1)  // curl left, so the kept connection ended
        }
    }

    @Test func `requests sent together on a kept-alive connection are answered in turn`() async throws {
        try await withTestHTTPServer(serving: Self.keepAliveResource) { server in
            server.handler = { request, _ in
                let keepAlive = request.target == "/one"
                return TestResponse(
                    status: 200,
                    headers: keepAlive ? [(name: "Connection", value: "keep-alive")] : [],
                    body: Array(request.target.utf8)
                )
            }
            let both = "GET /one HTTP/1.1\r\nHost: x\r\n\r\nGET /two HTTP/1.1\r\nHost: x\r\n\r\n"
            let response = try await rawExchange(port: server.port, pieces: [both])  // ends when the server closes
            let first = "HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nContent-Length: 4\r\n\r\n/one"
            let second = "HTTP/1.1 200 OK\r\nContent-Length: 4\r\nConnection: close\r\n\r\n/two"
            #expect(response == first + second)
            #expect(server.requests.map(\.target) == ["/one", "/two"])
            #expect(server.connectionsAccepted == 1)
        }
    }

    @Test func `an idle kept-alive connection ends at shutdown`() async throws {
        let server = try TestHTTPServer(serving: Self.keepAliveResource)
        server.handler = { _, _ in
            TestResponse(status: 200, headers: [(name: "Connection", value: "keep-alive")], body: [65, 66])
        }
        let port = server.port
        let exchange = Task.detached {
            try await rawExchange(port: port, pieces: ["GET / HTTP/1.1\r\nHost: x\r\n\r\n"])
        }
        let deadline = ContinuousClock.now + .seconds(5)
        while server.requests.isEmpty && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        try await Task.sleep(for: .milliseconds(100))
        #expect(server.activeThreadCount == 2)  // still waiting for a next request
        server.shutdown()
        let response = try await exchange.value
        #expect(response.hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(response.hasSuffix("\r\n\r\nAB"))
        #expect(await server.waitUntilStopped(timeout: .seconds(3)))
    }

    @Test(arguments: [false, true])
    func `bodyOnHead sends the body after the head of a HEAD answer`(bodyOnHead: Bool) async throws {
        try await withTestHTTPServer(serving: Self.keepAliveResource) { server in
            server.handler = { _, _ in TestResponse(status: 200, body: Array("stray".utf8), bodyOnHead: bodyOnHead) }
            let response = try await rawExchange(port: server.port, pieces: ["HEAD /x HTTP/1.1\r\nHost: x\r\n\r\n"])
            #expect(response.contains("\r\nContent-Length: 5\r\n"))
            #expect(response.hasSuffix(bodyOnHead ? "\r\n\r\nstray" : "\r\n\r\n"))
        }
    }
}
