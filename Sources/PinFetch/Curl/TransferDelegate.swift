import FoundationEssentials

/// Receives what libcurl reads. Called on the thread that runs ``EasyHandle/perform(_:delegate:)``.
///
/// A redirect (301, 302, 303, 307, 308 with a `Location`) is not handed to the subclass: its
/// target is kept in ``redirectLocation`` and its body is dropped; the caller decides whether to
/// follow it (libcurl's own following is off, so the caller controls credentials per origin).
/// A `401` is kept likewise when ``interceptsUnauthorized`` is set.
class TransferDelegate {
    /// The most recent complete response head (the final one once the body starts).
    private(set) var head: ResponseHead?
    /// The `Location` of a redirect answer, when the response was one.
    private(set) var redirectLocation: String?
    /// Whether a `401` is kept from the subclass like a redirect (its challenge in
    /// ``refusedChallenge``): set by a caller that can answer it with fresh credentials.
    var interceptsUnauthorized = false
    /// The `WWW-Authenticate` of an intercepted `401` (empty when it had none), or `nil`.
    private(set) var refusedChallenge: String?
    private var building: ResponseHead?
    private var headDelivered = false
    /// Set when the transfer was abandoned because no byte came for the stall timeout.
    private(set) var stalled = false
    private var stallTimeout: Duration?
    private var lastReceived: Int64 = -1
    private var lastChange = ContinuousClock.now
    /// Bytes per second allowed, and the body bytes and start of this request, for the limit.
    private var rateLimit: Int64?
    private var limitedBytes: Int64 = 0
    private var limitStart = ContinuousClock.now
    /// When the request must end (`TransferRequest/timeout`): a wait for the rate limit stops
    /// there (libcurl cannot time out a transfer whose write callback is waiting).
    private var deadline: ContinuousClock.Instant?
    /// Set when the rate limit's wait reached ``deadline``.
    private(set) var timedOut = false

    /// Called once with the final response head, before any body byte (or after the
    /// transfer when there is no body). Return `false` to abort the transfer.
    func receive(head: ResponseHead) -> Bool { true }
    /// Called for each piece of the body. Return `false` to abort the transfer.
    func receive(body: UnsafeRawBufferPointer) -> Bool { true }
    /// Whether the run was cancelled: asked while the transfer waits for a connection too.
    var isCancelled: Bool { false }
    /// Called often during the transfer with body bytes received so far in this request.
    /// Return `false` to abort (`CURLE_ABORTED_BY_CALLBACK`).
    func progress(received: Int64) -> Bool { true }

    /// The URL of the request in flight, hop by hop (set by the caller before each).
    var requestURL: String?
    /// Whether the request in flight has its connection (its request went out), set by
    /// ``EasyHandle`` before each progress call.
    var connected = false
    /// Whether a redirect led to the request in flight.
    private(set) var redirected = false

    /// Forgets the previous response, before the next hop of a redirect chain (or the same
    /// request again with fresh credentials, `redirect` false).
    func prepareForNextResponse(redirect: Bool = true) {
        if redirect { self.redirected = true }
        self.refusedChallenge = nil
        self.head = nil
        self.redirectLocation = nil
        self.building = nil
        self.headDelivered = false
    }

    /// Starts the stall clock and the rate limit of one request.
    func begin(stallTimeout seconds: Double?, rateLimit: Int64?, timeout: Double?) {
        self.rateLimit = rateLimit
        self.timedOut = false
        self.deadline = timeout.map { ContinuousClock.now + .milliseconds(Int64($0 * 1000)) }
        self.limitedBytes = 0
        self.limitStart = ContinuousClock.now
        self.stallTimeout = seconds.map { .milliseconds(Int64(($0 * 1000).rounded())) }
        self.stalled = false
        self.lastReceived = -1
        self.lastChange = ContinuousClock.now
    }

    /// The progress callback: a stall check, then the subclass's ``progress(received:)``.
    func tick(received: Int64) -> Bool {
        let now = ContinuousClock.now
        if received != self.lastReceived {
            self.lastReceived = received
            self.lastChange = now
        } else if let limit = self.stallTimeout, now - self.lastChange >= limit {
            self.stalled = true
            return false
        }
        return self.progress(received: received)
    }

    func headerLine(_ bytes: UnsafeRawBufferPointer) {
        let line = String(decoding: bytes, as: UTF8.self)
        if line.hasPrefix("HTTP/") {
            self.building = ResponseHead(statusLine: line.trimmingWhitespace())
        } else if line.trimmingWhitespace().isEmpty {
            if let done = self.building { self.head = done }
            self.building = nil
        } else {
            self.building?.add(line: line)
        }
    }

    func body(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard self.deliverHeadIfNeeded() else { return false }
        guard self.receive(body: bytes) else { return false }
        return self.keepToRateLimit(adding: bytes.count)
    }

    /// With a rate limit, waits (in slices of at most 100 ms, asking ``progress(received:)``
    /// whether to go on) until the body bytes so far are no more than the limit allows since the
    /// request began. While this callback waits, libcurl reads nothing, so TCP slows the sender.
    private func keepToRateLimit(adding count: Int) -> Bool {
        guard let rate = self.rateLimit, rate > 0 else { return true }
        // The limit's clock starts at the first body byte: time spent waiting for a connection
        // (beyond --max-connections-per-host) is no credit for a burst.
        if self.limitedBytes == 0 { self.limitStart = ContinuousClock.now }
        self.limitedBytes += Int64(count)
        let due = self.limitStart + .nanoseconds(self.limitedBytes * 1_000_000_000 / rate)
        while ContinuousClock.now < due {
            guard self.progress(received: self.limitedBytes) else { return false }
            if let deadline = self.deadline, ContinuousClock.now >= deadline {
                self.timedOut = true
                return false
            }
            let wait = min(due - ContinuousClock.now, .milliseconds(100))
            if wait > .zero {
                Threads.sleep(Double(wait.components.attoseconds) / 1e18 + Double(wait.components.seconds))
            }
        }
        return true
    }

    /// Delivers the head once; `false` when the delegate refuses it or it is a redirect.
    func deliverHeadIfNeeded() -> Bool {
        guard !self.headDelivered else { return self.redirectLocation == nil && self.refusedChallenge == nil }
        self.headDelivered = true
        guard let head = self.head else { return false }  // body before any head: refuse it
        if [301, 302, 303, 307, 308].contains(head.status), let location = head.value("location"), !location.isEmpty {
            self.redirectLocation = location
            return false
        }
        if head.status == 401, self.interceptsUnauthorized {
            self.refusedChallenge = head.value("www-authenticate") ?? ""
            return false
        }
        return self.receive(head: head)
    }

    /// `true` once the final head was looked at.
    var hasDeliveredHead: Bool { self.headDelivered }
}
