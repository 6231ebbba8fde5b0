// TestHTTPServer.swift
//
// An in-process HTTP/1.1 server for tests. It serves one resource with byte-range support (RFC 9110),
// misbehaves on demand and records every request it sees. It uses plain Glibc sockets: one accept
// thread plus one thread per connection. Every response carries `Connection: close`, except a canned
// `TestResponse` that asks for `Connection: keep-alive`: then the connection serves the next request too.

import Foundation
@preconcurrency import Glibc
import Synchronization

/// An in-process HTTP/1.1 test server on 127.0.0.1 (kernel-chosen port).
///
/// One accept thread plus one thread per connection; one request per connection, except after a canned
/// keep-alive response (``TestResponse/keepsAlive``). All mutable state lives in a
/// `Mutex`. Call `shutdown()` (or use `withTestHTTPServer`) to stop it: afterwards all threads end promptly,
/// including those of stalled or throttled connections.
final class TestHTTPServer: Sendable {
    struct State {
        var resource: TestResource
        var faults = TestFaults()
        var queuedFaults: [TestFaults] = []
        var handler: (@Sendable (RecordedRequest, Int) -> TestResponse?)?
        var requests: [RecordedRequest] = []
        var bodyBytesSent = 0
        var connectionsAccepted = 0
        /// The listening socket, or -1 once the accept thread closed it. Only the accept thread closes it;
        /// `shutdown()` only calls `shutdown(2)` on it, under the lock, while it is still open.
        var listenFD: Int32
        var isShutDown = false
        /// Open connection sockets. A connection thread removes its fd under the lock before closing it, so
        /// `shutdown()` never touches a closed (possibly reused) descriptor.
        var connections: Set<Int32> = []
        /// Accept thread plus connection threads still running.
        var activeThreads = 0
    }

    /// How a connection ends after its response (or partial response).
    enum Ending {
        /// `shutdown(SHUT_WR)` (FIN), drain briefly, close.
        case graceful
        /// `SO_LINGER {1, 0}` then close: TCP RST.
        case reset
        /// Stay open and silent until shutdown or the client goes away.
        case stall
        /// The client went away: just close.
        case abort
        /// The whole response went out and it asked for keep-alive: read the next request.
        case keepAlive
    }

    /// What to write after the response head.
    struct Delivery {
        var payload: [UInt8] = []
        var range: Range<Int> = 0..<0
        var chunked = false
        var sendTerminator = true
        var stopAfter: Int?
        var stopEnding: Ending = .graceful
        var bytesPerSecond: Int?
    }

    static let writeChunkSize = 64 * 1024
    static let maxHeadSize = 64 * 1024
    static let multipartBoundary = "TestHTTPServer-boundary-3d6b6a416f9d"

    /// The TCP port the server listens on.
    let port: Int
    let state: Mutex<State>

    /// Binds 127.0.0.1 on a kernel-chosen port, starts listening and starts the accept thread.
    init(serving resource: TestResource) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else {
            throw TestHTTPServerError(operation: "socket", code: errno)
        }
        var one: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr = in_addr(s_addr: in_addr_t(0x7F00_0001).bigEndian)
        let bound = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bind(fd, socketAddress, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else {
            let code = errno
            close(fd)
            throw TestHTTPServerError(operation: "bind", code: code)
        }
        guard listen(fd, 128) == 0 else {
            let code = errno
            close(fd)
            throw TestHTTPServerError(operation: "listen", code: code)
        }
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &actual) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                getsockname(fd, socketAddress, &length)
            }
        }
        guard named == 0 else {
            let code = errno
            close(fd)
            throw TestHTTPServerError(operation: "getsockname", code: code)
        }
        // Non-blocking listener: poll() says "readable", then accept() must not block if the peer vanished.
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)

        self.port = Int(UInt16(bigEndian: actual.sin_port))
        self.state = Mutex(State(resource: resource, listenFD: fd, activeThreads: 1))

        let thread = Thread { [self] in
            self.acceptLoop(listenFD: fd)
        }
        thread.name = "TestHTTPServer.accept.\(self.port)"
        thread.start()
    }

    /// `"http://127.0.0.1:<port>"`.
    var baseURL: String {
        "http://127.0.0.1:\(self.port)"
    }

    /// The URL of `path` on this server; any path serves the resource.
    func url(_ path: String = "/file") -> String {
        path.hasPrefix("/") ? self.baseURL + path : self.baseURL + "/" + path
    }

    /// The representation being served; tests may change it between requests.
    var resource: TestResource {
        get { self.state.withLock { $0.resource } }
        set { self.state.withLock { $0.resource = newValue } }
    }

    /// Faults applied to every request for which no one-shot fault is queued.
    var faults: TestFaults {
        get { self.state.withLock { $0.faults } }
        set { self.state.withLock { $0.faults = newValue } }
    }

    /// Queues a one-shot fault set: the next GET (not HEAD) uses the first queued entry instead of `faults`.
    func enqueueFaults(_ faults: TestFaults) {
        self.state.withLock { $0.queuedFaults.append(faults) }
    }

    /// Optional override: given a request and its 0-based index among all requests, return a complete canned
    /// response, or nil for normal handling. Runs on the connection thread, outside the server's lock. A
    /// request answered by the handler does not consume a queued fault.
    var handler: (@Sendable (RecordedRequest, Int) -> TestResponse?)? {
        get { self.state.withLock { $0.handler } }
        set { self.state.withLock { $0.handler = newValue } }
    }

    /// Snapshot of all requests (HEAD, GET and others), in arrival order.
    var requests: [RecordedRequest] {
        self.state.withLock { $0.requests }
    }

    /// Snapshot of the GET requests, in arrival order.
    var getRequests: [RecordedRequest] {
        self.state.withLock { $0.requests.filter { $0.method == "GET" } }
    }

    /// Total message-body bytes written to sockets so far, over all requests (chunk framing excluded).
    var bodyBytesSent: Int {
        self.state.withLock { $0.bodyBytesSent }
    }

    /// Number of TCP connections accepted so far. Compared with `requests.count`, it shows whether a client
    /// reused a kept-alive connection.
    var connectionsAccepted: Int {
        self.state.withLock { $0.connectionsAccepted }
    }

    /// Number of server threads still running (accept thread plus connection threads); 0 after `shutdown()`
    /// once they have all finished.
    var activeThreadCount: Int {
        self.state.withLock { $0.activeThreads }
    }

    /// Waits (polling) until all server threads have ended; returns false on timeout. Useful after `shutdown()`.
    func waitUntilStopped(timeout: Duration = .seconds(5)) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while self.activeThreadCount > 0 {
            if ContinuousClock.now >= deadline {
                return false
            }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return true
    }

    /// Stops the server. Idempotent and non-blocking: shuts down the listening socket (the accept thread wakes,
    /// closes it and ends) and every open connection (their threads wake, close and end). Joins nothing.
    func shutdown() {
        self.state.withLock { state in
            guard !state.isShutDown else {
                return
            }
            state.isShutDown = true
            if state.listenFD >= 0 {
                _ = Glibc.shutdown(state.listenFD, Int32(SHUT_RDWR))
            }
            for fd in state.connections {
                _ = Glibc.shutdown(fd, Int32(SHUT_RDWR))
            }
        }
    }

    var isShutDown: Bool {
        self.state.withLock { $0.isShutDown }
    }

    // MARK: Accepting

    func acceptLoop(listenFD: Int32) {
        while !self.isShutDown {
            var descriptor = pollfd(fd: listenFD, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, 200)
            if ready < 0 && errno != EINTR {
                break
            }
            if ready <= 0 {
                continue
            }
            let client = accept(listenFD, nil, nil)  // Linux: the accepted socket is blocking.
            if client < 0 {
                let code = errno
                if code == EINTR || code == EAGAIN || code == EWOULDBLOCK || code == ECONNABORTED || code == EPROTO {
                    continue
                }
                if code == EMFILE || code == ENFILE || code == ENOBUFS || code == ENOMEM {
                    usleep(10_000)
                    continue
                }
                break  // EINVAL after shutdown(2), or something fatal.
            }
            let registered = self.state.withLock { state -> Bool in
                guard !state.isShutDown else {
                    return false
                }
                state.connections.insert(client)
                state.connectionsAccepted += 1
                state.activeThreads += 1
                return true
            }
            guard registered else {
                close(client)
                break
            }
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)
            let thread = Thread { [self] in
                self.serveConnection(client)
            }
            thread.name = "TestHTTPServer.connection.\(self.port)"
            thread.start()
        }
        // Only this thread closes the listening socket (see State.listenFD).
        self.state.withLock { $0.listenFD = -1 }
        close(listenFD)
        self.state.withLock { $0.activeThreads -= 1 }
    }

    // MARK: Connections

    func serveConnection(_ fd: Int32) {
        var one: Int32 = 1
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        var buffered: [UInt8] = []  // bytes read past a request head: the start of the next request
        var ending = Ending.keepAlive
        while ending == .keepAlive {
            ending = self.isShutDown ? .abort : self.handleRequest(fd, buffered: &buffered)
        }
        switch ending {
        case .graceful:
            self.closeGracefully(fd)
        case .reset:
            var option = linger(l_onoff: 1, l_linger: 0)
            _ = setsockopt(fd, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
        case .stall:
            self.stall(fd)
        case .abort, .keepAlive:
            break
        }
        self.state.withLock { _ = $0.connections.remove(fd) }
        close(fd)
        self.state.withLock { $0.activeThreads -= 1 }
    }

    func handleRequest(_ fd: Int32, buffered: inout [UInt8]) -> Ending {
        let request: RecordedRequest
        switch self.readRequest(fd, buffered: &buffered) {
        case .closed:
            return .abort
        case .malformed(let status):
            return self.sendSimple(fd, status: status, extraHeaders: [], isHead: false)
        case .request(let parsed):
            request = parsed
        }
        let (index, resource, handler) = self.state.withLock { state in
            state.requests.append(request)
            return (state.requests.count - 1, state.resource, state.handler)
        }
        let isHead = request.method == "HEAD"
        if let handler, let canned = handler(request, index) {
            return self.sendCanned(fd, canned, isHead: isHead)
        }
        switch request.method {
        case "HEAD":
            return self.respondToHead(fd, request, resource, self.faults)
        case "GET":
            let faults = self.state.withLock { state in
                state.queuedFaults.isEmpty ? state.faults : state.queuedFaults.removeFirst()
            }
            return self.respondToGet(fd, request, resource, faults)
        default:
            return self.sendSimple(fd, status: 501, extraHeaders: [], isHead: false)
        }
    }
}

/// Creates a server for the duration of `body` and always shuts it down.
func withTestHTTPServer<T>(
    serving resource: TestResource,
    isolation: isolated (any Actor)? = #isolation,
    _ body: (TestHTTPServer) async throws -> T
) async throws -> T {
    let server = try TestHTTPServer(serving: resource)
    defer { server.shutdown() }
    return try await body(server)
}
