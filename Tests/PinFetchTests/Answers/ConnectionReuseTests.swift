import Foundation
import Testing

@testable import PinFetch

/// Which connection ``EasyHandle`` sends each request on, against servers that keep connections alive:
/// GETs share one (that keeps `-j` batches fast), while the HTTP/1.x connection of a HEAD is closed,
/// because some servers send a body after their HEAD answer and it would wait there for the next request.
struct ConnectionReuseTests {
    /// More than libcurl reads at once (`CURLOPT_BUFFERSIZE` is 512 KiB): with a small body the stray
    /// bytes after a HEAD answer can arrive in the read of the answer itself, where libcurl drops them,
    /// and the connection would look clean.
    static let body = makeBody(2 * 1024 * 1024)

    /// Answers every request with ``body``, its `Content-Length` and `Connection: keep-alive`; HEAD too
    /// when `bodyOnHead` (the misbehaving server).
    static func keepAlive(bodyOnHead: Bool) -> @Sendable (RecordedRequest, Int) -> TestResponse? {
        { _, _ in
            TestResponse(
                status: 200,
                headers: [
                    (name: "Content-Length", value: String(Self.body.count)),
                    (name: "Connection", value: "keep-alive"),
                ],
                body: Self.body,
                bodyOnHead: bodyOnHead
            )
        }
    }

    @Test func `a GET after a HEAD answered with a body gets a connection of its own`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: [])) { server in
            server.handler = Self.keepAlive(bodyOnHead: true)
            let seen = try await performInTurn([
                TransferRequest(url: server.url(), method: .head, headers: []),
                TransferRequest(url: server.url(), method: .get, headers: []),
            ])
            #expect(seen[0].outcome.category == .ok)
            #expect(seen[0].status == 200)
            #expect(seen[0].body.isEmpty)
            #expect(seen[1].outcome.category == .ok, "\(seen[1].outcome.message)")
            #expect(seen[1].status == 200)
            #expect(seen[1].isWholeBody)
            #expect(seen[1].outcome.reusedConnection == false)
            #expect(server.requests.map(\.method) == ["HEAD", "GET"])
            #expect(server.connectionsAccepted == 2)
        }
    }

    @Test func `GETs in a row share one connection`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: [])) { server in
            server.handler = Self.keepAlive(bodyOnHead: false)
            let get = TransferRequest(url: server.url(), method: .get, headers: [])
            let seen = try await performInTurn([get, get])
            #expect(seen.map(\.outcome.category) == [.ok, .ok])
            #expect(seen.map(\.status) == [200, 200])
            #expect(seen.map(\.isWholeBody) == [true, true])
            #expect(seen.map(\.outcome.reusedConnection) == [false, true])
            #expect(server.requests.count == 2)
            #expect(server.connectionsAccepted == 1)
        }
    }

    @Test func `a fresh connection is opened when asked for`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: [])) { server in
            server.handler = Self.keepAlive(bodyOnHead: false)
            var fresh = TransferRequest(url: server.url(), method: .get, headers: [])
            fresh.freshConnection = true
            let seen = try await performInTurn([TransferRequest(url: server.url(), method: .get, headers: []), fresh])
            #expect(seen.map(\.status) == [200, 200])
            #expect(seen[1].isWholeBody)
            #expect(seen.map(\.outcome.reusedConnection) == [false, false])
            #expect(server.connectionsAccepted == 2)
        }
    }

    @Test func `a connect that fails is not counted as a reused connection`() async throws {
        try await Nginx.withRefusingPort { refusing in
            try await withTestHTTPServer(serving: TestResource(body: [])) { server in
                server.handler = Self.keepAlive(bodyOnHead: false)
                let seen = try await performInTurn([
                    TransferRequest(url: server.url(), method: .get, headers: []),
                    TransferRequest(url: "http://127.0.0.1:\(refusing)/file", method: .get, headers: []),
                ])
                #expect(seen[0].outcome.category == .ok)
                #expect(seen[1].outcome.category == .network)  // connection refused
                #expect(seen[1].outcome.reusedConnection == false)
            }
        }
    }
}

/// What one request of ``performInTurn(_:)`` saw.
private struct Seen: Sendable {
    var outcome: TransferOutcome
    /// The status of the final response head, `nil` without one.
    var status: Int?
    var body: [UInt8]

    /// Whether ``body`` is exactly ``ConnectionReuseTests/body``. A Bool for `#expect`: its failure
    /// report of two unequal 2 MiB arrays computes their difference, which takes minutes.
    var isWholeBody: Bool { self.body == ConnectionReuseTests.body }
}

/// Keeps the final head and every body byte.
private final class RecordingDelegate: TransferDelegate {
    var body: [UInt8] = []

    override func receive(body: UnsafeRawBufferPointer) -> Bool {
        self.body.append(contentsOf: body)
        return true
    }
}

/// Performs `requests` one after another on one new ``EasyHandle`` and engine, on a thread of its
/// own (``EasyHandle/perform(_:delegate:)`` blocks, so it stays off the cooperative pool).
private func performInTurn(_ requests: [TransferRequest]) async throws -> [Seen] {
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[Seen], any Error>) in
        Thread.detachNewThread {
            continuation.resume(
                with: Result {
                    let engine = try TransferEngine(maximumConnectionsPerHost: 8)
                    defer { engine.stop() }
                    let easy = try EasyHandle(engine: engine)
                    var seen: [Seen] = []
                    for request in requests {
                        let delegate = RecordingDelegate()
                        let outcome = try easy.perform(request, delegate: delegate)
                        seen.append(Seen(outcome: outcome, status: delegate.head?.status, body: delegate.body))
                    }
                    return seen
                }
            )
        }
    }
}
