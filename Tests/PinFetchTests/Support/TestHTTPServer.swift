// TestHTTPServer.swift
//
// An in-process HTTP/1.1 server for tests. It serves one resource with byte-range support (RFC 9110),
// misbehaves on demand and records every request it sees. It uses plain Glibc sockets: one accept
// thread plus one thread per connection. Every response carries `Connection: close`, except a canned
// `TestResponse` that asks for `Connection: keep-alive`: then the connection serves the next request too.

import Foundation
@preconcurrency import Glibc
import Synchronization

// MARK: - Model

/// The representation the server currently serves.
struct TestResource: Sendable {
    /// The representation bytes (before any content coding).
    var body: [UInt8]
    /// Full `ETag` header value as sent, e.g. `"\"v1\""` or `"W/\"v1\""`; nil = no ETag header.
    var etag: String?
    /// `Last-Modified` header value as sent, e.g. `"Sat, 01 Jan 2000 00:00:00 GMT"`; nil = none.
    var lastModified: String?
    /// `Content-Type` header value.
    var contentType: String = "application/octet-stream"
    /// When set, the representation is `body` repeated cyclically up to this many bytes, generated
    /// as it is sent (for files larger than memory should hold, e.g. 5 GiB). No gzip then.
    var repeatedLength: Int? = nil
    /// More header fields sent with every HEAD, 200 and 206 answer (e.g. `Repr-Digest`).
    var extraHeaders: [(name: String, value: String)] = []

    /// Creates a resource; validators default to none.
    init(
        body: [UInt8],
        etag: String? = nil,
        lastModified: String? = nil,
        contentType: String = "application/octet-stream"
    ) {
        self.body = body
        self.etag = etag
        self.lastModified = lastModified
        self.contentType = contentType
    }
}

/// Ways to misbehave; all default to "behave correctly".
///
/// The body-truncating faults (`closeAfterBodyBytes`, `resetAfterBodyBytes`, `stallAfterBodyBytes`) count
/// message-body bytes (after content coding, excluding chunk framing). When several are set the smallest count
/// wins (ties: reset, then stall, then close). A count that is not smaller than the body has no effect.
struct TestFaults: Sendable {
    /// Send only K body bytes of a GET response, then close (FIN). Headers still announce the full length.
    var closeAfterBodyBytes: Int? = nil
    /// Like `closeAfterBodyBytes`, but abort with a TCP RST (`SO_LINGER {1, 0}` then close).
    var resetAfterBodyBytes: Int? = nil
    /// Answer a ranged GET with 200 and the whole body.
    var ignoreRange: Bool = false
    /// Honour Range even when If-Range does not match.
    var ignoreIfRange: Bool = false
    /// On 206: start the served range this many bytes earlier than asked (negative = later), with a
    /// Content-Range that truthfully says so. The start is clamped to the representation.
    var contentRangeShift: Int = 0
    /// Send 206 without a Content-Range header.
    var omitContentRange: Bool = false
    /// Answer a ranged GET with a 206 `multipart/byteranges` body holding one part.
    var multipartRanges: Bool = false
    /// Answer HEAD with this status (e.g. 405, 403, 501) and no validators.
    var headStatus: Int? = nil
    /// Send the body gzip-encoded (`Content-Encoding: gzip`) when the request's Accept-Encoding allows it.
    /// Ranges then apply to the gzip bytes. HEAD mirrors the GET headers.
    var gzip: Bool = false
    /// Send gzip even if Accept-Encoding does not allow it (implies `gzip`).
    var gzipEvenIfNotAllowed: Bool = false
    /// Body to send with 416; default a short HTML page.
    var rangeNotSatisfiableBody: [UInt8]? = nil
    /// Answer every GET (not HEAD) with this status and a small HTML body.
    var status: Int? = nil
    /// `Retry-After` header value to add to `status` answers.
    var retryAfter: String? = nil
    /// Send the GET body chunked (`Transfer-Encoding: chunked`) instead of with Content-Length.
    var omitContentLength: Bool = false
    /// Chunked body (implies `omitContentLength`) that ends before the final 0-size chunk.
    var chunkedWithoutTerminator: Bool = false
    /// Throttle the body: small writes with sleeps in between.
    var bytesPerSecond: Int? = nil
    /// Send K body bytes, then keep the connection open and silent until shutdown or the client goes away.
    var stallAfterBodyBytes: Int? = nil
}

/// One request as the server received it.
struct RecordedRequest: Sendable {
    /// The request method, e.g. `GET` or `HEAD`.
    var method: String
    /// The request-target, e.g. `/file`.
    var target: String
    /// Header fields in arrival order, names as sent.
    var headers: [(name: String, value: String)]

    /// The value of the first header field named `name` (case-insensitive), or nil.
    func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        return self.headers.first { $0.name.lowercased() == wanted }?.value
    }

    /// All values of header fields named `name` (case-insensitive), in arrival order.
    func headers(named name: String) -> [String] {
        let wanted = name.lowercased()
        return self.headers.filter { $0.name.lowercased() == wanted }.map(\.value)
    }
}

/// A canned response returned by `TestHTTPServer.handler`.
///
/// The server adds `Content-Length` (unless a Content-Length or Transfer-Encoding header is present, or the
/// status forbids a body) and `Connection: close` (unless a Connection header is present). The body is sent
/// verbatim (not for HEAD, unless `bodyOnHead`).
///
/// With a `Connection: keep-alive` header the server keeps the connection open after the whole response and
/// reads the next request from it (RFC 9112 §9.3), until the client closes it, the server shuts down or a
/// response without keep-alive ends it. A response cut short by `closeAfterBodyBytes` still closes.
struct TestResponse: Sendable {
    /// The status code.
    var status: Int
    /// Header fields to send, in order.
    var headers: [(name: String, value: String)]
    /// The message body, sent as is.
    var body: [UInt8]
    /// Send only this many body bytes, then close (FIN).
    var closeAfterBodyBytes: Int? = nil
    /// Send the body even in answer to HEAD, which RFC 9110 §9.3.2 forbids: a misbehaving server whose stray
    /// bytes wait on a kept-alive connection in front of the next response.
    var bodyOnHead: Bool = false

    /// Creates a canned response.
    init(
        status: Int,
        headers: [(name: String, value: String)] = [],
        body: [UInt8] = [],
        closeAfterBodyBytes: Int? = nil,
        bodyOnHead: Bool = false
    ) {
        self.status = status
        self.headers = headers
        self.body = body
        self.closeAfterBodyBytes = closeAfterBodyBytes
        self.bodyOnHead = bodyOnHead
    }

    /// Whether a `Connection` header lists `keep-alive` (case-insensitive).
    var keepsAlive: Bool {
        self.headers.contains { header in
            header.name.lowercased() == "connection"
                && header.value.split(separator: ",").contains {
                    $0.trimmingCharacters(in: .whitespaces).lowercased() == "keep-alive"
                }
        }
    }
}

/// A socket call failed while setting up the server.
struct TestHTTPServerError: Error, CustomStringConvertible {
    /// The failing call.
    var operation: String
    /// `errno` after the call.
    var code: Int32

    var description: String {
        "TestHTTPServer: \(self.operation) failed: \(String(cString: strerror(self.code))) (\(self.code))"
    }
}

// MARK: - Server

/// An in-process HTTP/1.1 test server on 127.0.0.1 (kernel-chosen port).
///
/// One accept thread plus one thread per connection; one request per connection, except after a canned
/// keep-alive response (``TestResponse/keepsAlive``). All mutable state lives in a
/// `Mutex`. Call `shutdown()` (or use `withTestHTTPServer`) to stop it: afterwards all threads end promptly,
/// including those of stalled or throttled connections.
final class TestHTTPServer: Sendable {
    private struct State {
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
    private enum Ending {
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
    private struct Delivery {
        var payload: [UInt8] = []
        var range: Range<Int> = 0..<0
        var chunked = false
        var sendTerminator = true
        var stopAfter: Int?
        var stopEnding: Ending = .graceful
        var bytesPerSecond: Int?
    }

    private static let writeChunkSize = 64 * 1024
    private static let maxHeadSize = 64 * 1024
    private static let multipartBoundary = "TestHTTPServer-boundary-3d6b6a416f9d"

    /// The TCP port the server listens on.
    let port: Int
    private let state: Mutex<State>

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

    private var isShutDown: Bool {
        self.state.withLock { $0.isShutDown }
    }

    // MARK: Accepting

    private func acceptLoop(listenFD: Int32) {
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

    private func serveConnection(_ fd: Int32) {
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

    private enum ReadResult {
        case request(RecordedRequest)
        case malformed(status: Int)
        case closed
    }

    /// Reads until the end of the request head (`\r\n\r\n`), which may arrive in several segments. Starts with
    /// `buffered` (bytes already read on this connection) and leaves there what follows the head. A request
    /// body is not read: on a kept-alive connection it would be taken for the next request.
    private func readRequest(_ fd: Int32, buffered: inout [UInt8]) -> ReadResult {
        var head = buffered
        buffered = []
        head.reserveCapacity(4096)
        if let end = Self.endOfHead(head, from: 0) {
            buffered = Array(head[end...])
            guard let request = Self.parseHead(head[0..<end]) else {
                return .malformed(status: 400)
            }
            return .request(request)
        }
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let received = buffer.withUnsafeMutableBytes { raw in
                recv(fd, raw.baseAddress, raw.count, 0)
            }
            if received < 0 {
                if errno == EINTR {
                    continue
                }
                return .closed
            }
            if received == 0 {
                return .closed
            }
            let searchFrom = max(0, head.count - 3)
            head.append(contentsOf: buffer[0..<received])
            if let end = Self.endOfHead(head, from: searchFrom) {
                buffered = Array(head[end...])
                guard let request = Self.parseHead(head[0..<end]) else {
                    return .malformed(status: 400)
                }
                return .request(request)
            }
            if head.count > Self.maxHeadSize {
                return .malformed(status: 431)
            }
        }
    }

    /// Index just past the first `\r\n\r\n` at or after `start`.
    private static func endOfHead(_ bytes: [UInt8], from start: Int) -> Int? {
        guard bytes.count >= 4 else {
            return nil
        }
        var index = start
        while index + 3 < bytes.count {
            if bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
                return index + 4
            }
            index += 1
        }
        return nil
    }

    private static func parseHead(_ bytes: ArraySlice<UInt8>) -> RecordedRequest? {
        let text = String(decoding: bytes, as: UTF8.self)
        var lines = text.components(separatedBy: "\r\n")
        while let first = lines.first, first.isEmpty {
            lines.removeFirst()  // RFC 9112 §2.2: ignore empty lines before the request-line.
        }
        guard let requestLine = lines.first else {
            return nil
        }
        let parts = requestLine.split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count == 3, parts[2].hasPrefix("HTTP/") else {
            return nil
        }
        var headers: [(name: String, value: String)] = []
        for line in lines.dropFirst() where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else {
                return nil
            }
            let name = line[..<colon].trimmingCharacters(in: .whitespaces)
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            guard !name.isEmpty else {
                return nil
            }
            headers.append((name: name, value: value))
        }
        return RecordedRequest(method: String(parts[0]), target: String(parts[1]), headers: headers)
    }

    private func handleRequest(_ fd: Int32, buffered: inout [UInt8]) -> Ending {
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

    // MARK: Responses

    private func respondToHead(
        _ fd: Int32,
        _ request: RecordedRequest,
        _ resource: TestResource,
        _ faults: TestFaults
    ) -> Ending {
        if let status = faults.headStatus {
            var extra: [(name: String, value: String)] = []
            if status == 405 {
                extra.append((name: "Allow", value: "GET"))
            }
            return self.sendSimple(fd, status: status, extraHeaders: extra, isHead: true)
        }
        let gzipped = Self.shouldGzip(request, faults)
        let length = gzipped ? TestGzip.encode(resource.body).count : resource.repeatedLength ?? resource.body.count
        var headers = Self.representationHeaders(resource, gzipped: gzipped)
        if !faults.omitContentLength && !faults.chunkedWithoutTerminator {
            headers.append((name: "Content-Length", value: String(length)))
        }
        headers.append((name: "Connection", value: "close"))
        return self.deliver(fd, status: 200, headers: headers, Delivery(), isHead: true)
    }

    private func respondToGet(
        _ fd: Int32,
        _ request: RecordedRequest,
        _ resource: TestResource,
        _ faults: TestFaults
    ) -> Ending {
        if let status = faults.status {
            var extra: [(name: String, value: String)] = []
            if let retryAfter = faults.retryAfter {
                extra.append((name: "Retry-After", value: retryAfter))
            }
            if status == 401 {
                extra.append((name: "WWW-Authenticate", value: "Basic realm=\"test\""))
            }
            if status == 405 {
                extra.append((name: "Allow", value: "HEAD"))
            }
            return self.sendSimple(fd, status: status, extraHeaders: extra, isHead: false)
        }

        let gzipped = Self.shouldGzip(request, faults)
        let representation = gzipped ? TestGzip.encode(resource.body) : resource.body
        let length = gzipped ? representation.count : resource.repeatedLength ?? representation.count
        var headers = Self.representationHeaders(resource, gzipped: gzipped)
        var status = 200
        var delivery = Delivery(payload: representation, range: 0..<length)

        if !faults.ignoreRange, let rangeValue = request.header("Range"),
            let wanted = Self.parseSingleByteRange(rangeValue)
        {
            let ifRange = request.header("If-Range")
            let validatorMatches = faults.ignoreIfRange || ifRange.map { Self.ifRangeMatches($0, resource) } ?? true
            if validatorMatches {
                if wanted.first >= length {
                    let body = faults.rangeNotSatisfiableBody ?? Array(Self.htmlPage(416).utf8)
                    let notSatisfiable: [(name: String, value: String)] = [
                        (name: "Content-Range", value: "bytes */\(length)"),
                        (name: "Content-Type", value: "text/html; charset=utf-8"),
                        (name: "Content-Length", value: String(body.count)),
                        (name: "Connection", value: "close"),
                    ]
                    let page = Delivery(payload: body, range: 0..<body.count)
                    return self.deliver(fd, status: 416, headers: notSatisfiable, page, isHead: false)
                }
                let end = min(wanted.last ?? (length - 1), length - 1)
                let start = min(max(wanted.first - faults.contentRangeShift, 0), end)
                let contentRange = "bytes \(start)-\(end)/\(length)"
                status = 206
                if faults.multipartRanges {
                    let boundary = Self.multipartBoundary
                    var multipart: [UInt8] = []
                    multipart.reserveCapacity(end - start + 1 + 256)
                    let partHead =
                        "--\(boundary)\r\nContent-Type: \(resource.contentType)\r\n"
                        + "Content-Range: \(contentRange)\r\n\r\n"
                    multipart.append(contentsOf: partHead.utf8)
                    multipart.append(contentsOf: representation[start...end])
                    multipart.append(contentsOf: "\r\n--\(boundary)--\r\n".utf8)
                    headers.removeAll { $0.name == "Content-Type" }
                    headers.insert((name: "Content-Type", value: "multipart/byteranges; boundary=\(boundary)"), at: 0)
                    delivery = Delivery(payload: multipart, range: 0..<multipart.count)
                } else {
                    delivery.range = start..<(end + 1)
                    if !faults.omitContentRange {
                        headers.append((name: "Content-Range", value: contentRange))
                    }
                }
            }
        }

        if faults.omitContentLength || faults.chunkedWithoutTerminator {
            headers.append((name: "Transfer-Encoding", value: "chunked"))
            delivery.chunked = true
            delivery.sendTerminator = !faults.chunkedWithoutTerminator
        } else {
            headers.append((name: "Content-Length", value: String(delivery.range.count)))
        }
        headers.append((name: "Connection", value: "close"))

        var stops: [(count: Int, ending: Ending)] = []
        if let count = faults.resetAfterBodyBytes {
            stops.append((count: count, ending: .reset))
        }
        if let count = faults.stallAfterBodyBytes {
            stops.append((count: count, ending: .stall))
        }
        if let count = faults.closeAfterBodyBytes {
            stops.append((count: count, ending: .graceful))
        }
        if let stop = stops.min(by: { $0.count < $1.count }) {
            delivery.stopAfter = max(0, stop.count)
            delivery.stopEnding = stop.ending
        }
        delivery.bytesPerSecond = faults.bytesPerSecond
        return self.deliver(fd, status: status, headers: headers, delivery, isHead: false)
    }

    private func sendCanned(_ fd: Int32, _ response: TestResponse, isHead: Bool) -> Ending {
        var headers = response.headers
        func has(_ name: String) -> Bool {
            headers.contains { $0.name.lowercased() == name.lowercased() }
        }
        let bodyless = (100..<200).contains(response.status) || response.status == 204 || response.status == 304
        if !bodyless && !has("Content-Length") && !has("Transfer-Encoding") {
            headers.append((name: "Content-Length", value: String(response.body.count)))
        }
        if !has("Connection") {
            headers.append((name: "Connection", value: "close"))
        }
        var delivery = Delivery(payload: response.body, range: 0..<response.body.count)
        delivery.stopAfter = response.closeAfterBodyBytes.map { max(0, $0) }
        let sendsBody = !isHead || response.bodyOnHead
        let ending = self.deliver(fd, status: response.status, headers: headers, delivery, isHead: !sendsBody)
        let truncated = sendsBody && (delivery.stopAfter.map { $0 < response.body.count } ?? false)
        return ending == .graceful && response.keepsAlive && !truncated ? .keepAlive : ending
    }

    /// A small HTML answer with Content-Length and `Connection: close`.
    private func sendSimple(
        _ fd: Int32,
        status: Int,
        extraHeaders: [(name: String, value: String)],
        isHead: Bool
    ) -> Ending {
        let body = isHead ? [] : Array(Self.htmlPage(status).utf8)
        var headers: [(name: String, value: String)] = [
            (name: "Content-Type", value: "text/html; charset=utf-8"),
            (name: "Content-Length", value: String(body.count)),
        ]
        headers += extraHeaders
        headers.append((name: "Connection", value: "close"))
        let delivery = Delivery(payload: body, range: 0..<body.count)
        return self.deliver(fd, status: status, headers: headers, delivery, isHead: isHead)
    }

    private static func representationHeaders(
        _ resource: TestResource,
        gzipped: Bool
    ) -> [(name: String, value: String)] {
        var headers: [(name: String, value: String)] = [
            (name: "Date", value: Self.httpDate(Date())),
            (name: "Content-Type", value: resource.contentType),
        ]
        if gzipped {
            headers.append((name: "Content-Encoding", value: "gzip"))
        }
        if let etag = resource.etag {
            headers.append((name: "ETag", value: etag))
        }
        if let lastModified = resource.lastModified {
            headers.append((name: "Last-Modified", value: lastModified))
        }
        headers.append((name: "Accept-Ranges", value: "bytes"))
        headers += resource.extraHeaders
        return headers
    }

    /// IMF-fixdate (RFC 9110 §5.6.7) of `date`, for the `Date` header.
    static func httpDate(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }

    private static func htmlPage(_ status: Int) -> String {
        let title = "\(status) \(Self.reasonPhrase(status))"
        return "<!DOCTYPE html>\n<html><head><title>\(title)</title></head><body><h1>\(title)</h1></body></html>\n"
    }

    // MARK: Writing

    /// Writes the head, then (unless HEAD) the body as planned; returns how the connection should end.
    private func deliver(
        _ fd: Int32,
        status: Int,
        headers: [(name: String, value: String)],
        _ delivery: Delivery,
        isHead: Bool
    ) -> Ending {
        var head = "HTTP/1.1 \(status) \(Self.reasonPhrase(status))\r\n"
        for header in headers {
            head += "\(header.name): \(header.value)\r\n"
        }
        head += "\r\n"
        guard self.sendAll(fd, Array(head.utf8)) else {
            return .abort
        }
        if isHead {
            return .graceful
        }

        let range = delivery.range
        var end = range.upperBound
        var truncated = false
        if let stop = delivery.stopAfter, stop < range.count {
            end = range.lowerBound + stop
            truncated = true
        }
        let pieceSize =
            delivery.bytesPerSecond.map { max(1, min(Self.writeChunkSize, $0 / 20)) }
            ?? Self.writeChunkSize
        let clock = ContinuousClock()
        let started = clock.now
        var offset = range.lowerBound
        while offset < end {
            if self.isShutDown {
                return .abort
            }
            // A repeated resource is generated from its period: offset modulo the payload size.
            let start = offset % delivery.payload.count
            let count = min(pieceSize, end - offset, delivery.payload.count - start)
            if delivery.chunked {
                guard self.sendAll(fd, Array((String(count, radix: 16) + "\r\n").utf8)) else {
                    return .abort
                }
            }
            let (written, ok) = delivery.payload.withUnsafeBytes { raw in
                self.send(fd, raw.baseAddress! + start, count)
            }
            self.state.withLock { $0.bodyBytesSent += written }
            guard ok else {
                return .abort
            }
            if delivery.chunked {
                guard self.sendAll(fd, Array("\r\n".utf8)) else {
                    return .abort
                }
            }
            offset += count
            if let rate = delivery.bytesPerSecond, rate > 0, offset < end {
                let due = started + .seconds(Double(offset - range.lowerBound) / Double(rate))
                while clock.now < due {
                    if self.isShutDown {
                        return .abort
                    }
                    let remaining = (due - clock.now).components
                    let micros = remaining.seconds * 1_000_000 + remaining.attoseconds / 1_000_000_000_000
                    usleep(UInt32(max(1, min(micros, 50_000))))
                }
            }
        }
        if truncated {
            return delivery.stopEnding
        }
        if delivery.chunked && delivery.sendTerminator {
            guard self.sendAll(fd, Array("0\r\n\r\n".utf8)) else {
                return .abort
            }
        }
        return .graceful
    }

    private func sendAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { raw in
            raw.isEmpty || self.send(fd, raw.baseAddress!, raw.count).ok
        }
    }

    /// Writes all `count` bytes, retrying partial writes and EINTR. `ok` is false if the peer went away.
    private func send(_ fd: Int32, _ base: UnsafeRawPointer, _ count: Int) -> (written: Int, ok: Bool) {
        var written = 0
        while written < count {
            let result = Glibc.send(fd, base + written, count - written, Int32(MSG_NOSIGNAL))
            if result < 0 {
                if errno == EINTR {
                    continue
                }
                return (written, false)  // EPIPE, ECONNRESET, or shut down: stop quietly.
            }
            if result == 0 {
                return (written, false)
            }
            written += result
        }
        return (written, true)
    }

    /// Sends FIN, then reads and discards until the client closes (at most 2 s), so that unread client bytes
    /// do not turn our close into an RST that could destroy response data still in flight.
    private func closeGracefully(_ fd: Int32) {
        _ = Glibc.shutdown(fd, Int32(SHUT_WR))
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(2)
        var scratch = [UInt8](repeating: 0, count: 4096)
        while clock.now < deadline && !self.isShutDown {
            guard self.waitReadable(fd, milliseconds: 50) else {
                continue
            }
            let received = scratch.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if received < 0 && errno == EINTR {
                continue
            }
            if received <= 0 {
                return
            }
        }
    }

    /// Keeps the connection open and silent until shutdown or until the client closes or resets it.
    private func stall(_ fd: Int32) {
        var scratch = [UInt8](repeating: 0, count: 4096)
        while !self.isShutDown {
            guard self.waitReadable(fd, milliseconds: 50) else {
                continue
            }
            let received = scratch.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if received < 0 && errno == EINTR {
                continue
            }
            if received <= 0 {
                return
            }
        }
    }

    /// True if `fd` is readable (or has EOF or an error pending) within the timeout.
    private func waitReadable(_ fd: Int32, milliseconds: Int32) -> Bool {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ready = poll(&descriptor, 1, milliseconds)
        return ready > 0
    }

    // MARK: HTTP semantics

    /// Parses `bytes=N-` or `bytes=N-M` (one range); nil for anything else. Huge numbers saturate.
    static func parseSingleByteRange(_ value: String) -> (first: Int, last: Int?)? {
        guard let equals = value.firstIndex(of: "=") else {
            return nil
        }
        let unit = value[..<equals].trimmingCharacters(in: .whitespaces)
        let spec = value[value.index(after: equals)...].trimmingCharacters(in: .whitespaces)
        guard unit.lowercased() == "bytes", let dash = spec.firstIndex(of: "-") else {
            return nil
        }
        guard let first = Self.parseDigits(spec[..<dash]) else {
            return nil
        }
        let lastText = spec[spec.index(after: dash)...]
        if lastText.isEmpty {
            return (first: first, last: nil)
        }
        guard let last = Self.parseDigits(lastText), last >= first else {
            return nil
        }
        return (first: first, last: last)
    }

    private static func parseDigits(_ text: Substring) -> Int? {
        guard !text.isEmpty else {
            return nil
        }
        var value = 0
        for byte in text.utf8 {
            guard byte >= 48 && byte <= 57 else {
                return nil
            }
            let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(Int(byte - 48))
            value = (overflow1 || overflow2) ? Int.max : sum
        }
        return value
    }

    /// RFC 9110 §13.1.5: an entity-tag matches only by strong comparison against a strong current ETag;
    /// an HTTP-date matches only if it equals the Last-Modified value exactly.
    static func ifRangeMatches(_ value: String, _ resource: TestResource) -> Bool {
        let condition = value.trimmingCharacters(in: .whitespaces)
        if condition.hasPrefix("\"") || condition.hasPrefix("W/") {
            guard let etag = resource.etag, !etag.hasPrefix("W/"), !condition.hasPrefix("W/") else {
                return false
            }
            return condition.utf8.elementsEqual(etag.utf8)
        }
        guard let lastModified = resource.lastModified else {
            return false
        }
        return condition.utf8.elementsEqual(lastModified.utf8)
    }

    /// Whether Accept-Encoding allows gzip: an explicit gzip/x-gzip entry decides, else `*`; q=0 forbids.
    static func acceptsGzip(_ acceptEncoding: String?) -> Bool {
        guard let acceptEncoding else {
            return false
        }
        var gzipQuality: Double?
        var anyQuality: Double?
        for item in acceptEncoding.split(separator: ",") {
            let parts = item.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let coding = parts.first?.lowercased(), !coding.isEmpty else {
                continue
            }
            var quality = 1.0
            for parameter in parts.dropFirst() {
                let pair = parameter.split(separator: "=", maxSplits: 1)
                if pair.count == 2, pair[0].trimmingCharacters(in: .whitespaces).lowercased() == "q",
                    let parsed = Double(pair[1].trimmingCharacters(in: .whitespaces))
                {
                    quality = parsed
                }
            }
            if coding == "gzip" || coding == "x-gzip" {
                gzipQuality = quality
            } else if coding == "*" {
                anyQuality = quality
            }
        }
        if let gzipQuality {
            return gzipQuality > 0
        }
        return (anyQuality ?? 0) > 0
    }

    private static func shouldGzip(_ request: RecordedRequest, _ faults: TestFaults) -> Bool {
        faults.gzipEvenIfNotAllowed || (faults.gzip && Self.acceptsGzip(request.header("Accept-Encoding")))
    }

    private static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 201: "Created"
        case 204: "No Content"
        case 206: "Partial Content"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 303: "See Other"
        case 304: "Not Modified"
        case 307: "Temporary Redirect"
        case 308: "Permanent Redirect"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 410: "Gone"
        case 412: "Precondition Failed"
        case 416: "Range Not Satisfiable"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        default: "Status \(status)"
        }
    }
}

// MARK: - gzip

/// A minimal gzip (RFC 1952) encoder: stored (uncompressed) deflate blocks plus CRC-32, in pure Swift.
enum TestGzip {
    private static let crcTable: [UInt32] = (0..<256).map { index in
        var crc = UInt32(index)
        for _ in 0..<8 {
            crc = (crc & 1) != 0 ? (0xEDB8_8320 ^ (crc >> 1)) : (crc >> 1)
        }
        return crc
    }

    /// CRC-32 (IEEE 802.3, as used by gzip and zlib) of `bytes`.
    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        self.crcTable.withUnsafeBufferPointer { table in
            bytes.withUnsafeBufferPointer { input in
                var crc: UInt32 = 0xFFFF_FFFF
                for byte in input {
                    crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8)
                }
                return crc ^ 0xFFFF_FFFF
            }
        }
    }

    /// A valid gzip stream whose decompression is `data`.
    static func encode(_ data: [UInt8]) -> [UInt8] {
        let blockSize = 65_535
        var out: [UInt8] = []
        out.reserveCapacity(data.count + (data.count / blockSize + 1) * 5 + 18)
        // ID1 ID2 CM=deflate FLG=0 MTIME=0 XFL=0 OS=255 (unknown)
        out.append(contentsOf: [0x1F, 0x8B, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xFF])
        var offset = 0
        repeat {
            let count = min(blockSize, data.count - offset)
            let isFinal = offset + count == data.count
            out.append(isFinal ? 0x01 : 0x00)  // BFINAL, BTYPE=00 (stored); rest of the byte is padding.
            let length = UInt16(count)
            let complement = ~length
            out.append(contentsOf: [UInt8(length & 0xFF), UInt8(length >> 8)])
            out.append(contentsOf: [UInt8(complement & 0xFF), UInt8(complement >> 8)])
            out.append(contentsOf: data[offset..<(offset + count)])
            offset += count
        } while offset < data.count
        let crc = self.crc32(data)
        let size = UInt32(truncatingIfNeeded: data.count)
        for shift in stride(from: 0, to: 32, by: 8) {
            out.append(UInt8(truncatingIfNeeded: crc >> UInt32(shift)))
        }
        for shift in stride(from: 0, to: 32, by: 8) {
            out.append(UInt8(truncatingIfNeeded: size >> UInt32(shift)))
        }
        return out
    }
}

// MARK: - Scoped helper

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
