import Foundation
import Testing

/// Throttled and stalled connections, shutdown, and request heads that come in pieces.
extension TestHTTPServerTests {
    @Test func throttledBody() async throws {
        let res = serverTestResource(20_000)
        try await withTestHTTPServer(serving: res) { server in
            server.faults = TestFaults(bytesPerSecond: 100_000)
            let started = ContinuousClock.now
            let result = try await runCurl([], url: server.url())
            let elapsed = ContinuousClock.now - started
            #expect(result.body == res.body)
            #expect(elapsed >= .milliseconds(150))
        }
    }

    @Test func stalledConnectionEndsAtShutdown() async throws {
        let res = serverTestResource(100_000)
        let server = try TestHTTPServer(serving: res)
        server.faults = TestFaults(stallAfterBodyBytes: 1_000)
        async let stalled = runCurl([], url: server.url(), maxTime: 30)
        // Wait until the server has written the first 1000 bytes, then shut down while it stalls.
        let deadline = ContinuousClock.now + .seconds(10)
        while server.bodyBytesSent < 1_000 && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        try await Task.sleep(for: .milliseconds(200))
        #expect(server.activeThreadCount == 2)
        let before = ContinuousClock.now
        server.shutdown()
        server.shutdown()
        #expect(ContinuousClock.now - before < .milliseconds(100))
        let result = try await stalled
        #expect(result.exitCode == 18)
        #expect(result.body == Array(res.body[0..<1_000]))
        #expect(await server.waitUntilStopped(timeout: .seconds(3)))
    }

    @Test func stalledConnectionEndsWhenClientLeaves() async throws {
        try await withTestHTTPServer(serving: serverTestResource(100_000)) { server in
            server.faults = TestFaults(stallAfterBodyBytes: 10)
            let result = try await runCurl([], url: server.url(), maxTime: 1)
            #expect(result.exitCode == 28)
            #expect(result.body.count == 10)
            let deadline = ContinuousClock.now + .seconds(3)
            while server.activeThreadCount > 1 && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(10))
            }
            #expect(server.activeThreadCount == 1)  // only the accept thread
        }
    }

    @Test func shutdownStopsEverything() async throws {
        let server = try TestHTTPServer(serving: serverTestResource())
        let before = try await runCurl([], url: server.url())
        #expect(before.status == 200)
        server.shutdown()
        #expect(await server.waitUntilStopped(timeout: .seconds(3)))
        let after = try await runCurl([], url: server.url(), maxTime: 5)
        #expect(after.exitCode == 7)  // connection refused
        server.shutdown()
    }

    @Test func requestHeadInSeveralSegments() async throws {
        try await withTestHTTPServer(serving: serverTestResource(50)) { server in
            let response = try await rawExchange(
                port: server.port,
                pieces: ["GET /split HT", "TP/1.1\r\nHost: x\r", "\nRange: bytes=40-\r\n", "\r\n"]
            )
            #expect(response.hasPrefix("HTTP/1.1 206 Partial Content\r\n"))
            #expect(response.contains("Content-Range: bytes 40-49/50\r\n"))
            #expect(server.requests.first?.target == "/split")
            #expect(server.requests.first?.header("Range") == "bytes=40-")
        }
    }
}
