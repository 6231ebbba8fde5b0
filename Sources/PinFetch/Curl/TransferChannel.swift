internal import CCurl
@preconcurrency import Glibc

/// The hand-over of one transfer between the ``TransferEngine``'s thread, where libcurl's
/// callbacks run, and the thread waiting in ``EasyHandle/perform(_:delegate:)``, which feeds the
/// ``TransferDelegate`` (writes, hashes, decides) as it did when it ran libcurl itself.
///
/// The engine's callbacks only copy: header lines and body pieces queue here in order. When more
/// than ``pauseAbove`` bytes wait, the write callback pauses the transfer
/// (`CURL_WRITEFUNC_PAUSE`: libcurl keeps that piece and stops reading the connection, so TCP or
/// HTTP/2 flow control slows the sender) and the waiting thread asks the engine to go on once it
/// took them. So a slow disk, a full hashing pipeline or `--limit-rate` slow one transfer, never
/// the event loop or the other transfers.
///
/// `@unchecked Sendable`: the queue's fields (and when the transfer took its connection) are
/// guarded by `condition`; the transfer's facts (``connection``, ``errorText``) are written on the
/// engine's thread before ``finish(_:message:)`` and read by the waiting thread after it;
/// ``answerTimeout`` and ``unanswered`` are the waiting thread's alone.
final class TransferChannel: @unchecked Sendable {
    enum Event {
        /// One header line as libcurl gave it (with its line end).
        case header([UInt8])
        /// A piece of the body.
        case body([UInt8])
    }

    /// Bytes queued before the transfer is paused, unless a rate limit asks for less.
    static let pauseAbove = 1 << 20
    /// Bytes queued before this transfer is paused: with `--limit-rate`, a tenth of a second's
    /// worth (at least 16 KiB), so the network is held to the rate too, not only the disk (a
    /// file smaller than the queue would otherwise come at full speed).
    let pauseAbove: Int
    /// Bytes at most in one queued body piece.
    static let joinUpTo = 256 << 10

    /// The engine the transfer runs on.
    unowned let engine: TransferEngine
    /// `scheme://host:port` of the request.
    let origin: String
    /// Whether the request waits for a connection that may carry streams (`CURLOPT_PIPEWAIT`).
    let waitsForMultiplexing: Bool
    /// libcurl's error text for the transfer (`CURLOPT_ERRORBUFFER`), final once it ended.
    let errorText: UnsafePointer<CChar>?
    /// The connection the transfer took (``ConnectionLedger``), once it had one.
    var connection: String?
    /// Whether libcurl made a socket for this transfer (it tried to connect, not only waited).
    var triedConnecting = false
    /// ``TransferRequest/answerTimeout``, and whether the transfer was abandoned for it: both only
    /// touched by the waiting thread.
    var answerTimeout: Double?
    var unanswered = false
    /// Whether this is its file's first request (``TransferRequest/opensFile``).
    let opensFile: Bool
    /// Whether it asks over a connection of its own (``TransferRequest/ownConnection``).
    let ownConnection: Bool

    init(
        engine: TransferEngine,
        origin: String,
        waitsForMultiplexing: Bool,
        errorText: UnsafePointer<CChar>?,
        rateLimit: Int64? = nil,
        opensFile: Bool = false,
        ownConnection: Bool = false
    ) {
        self.opensFile = opensFile
        self.ownConnection = ownConnection
        self.pauseAbove = rateLimit.map { Int(min(Int64(Self.pauseAbove), max(16 << 10, $0 / 10))) } ?? Self.pauseAbove
        self.engine = engine
        self.origin = origin
        self.waitsForMultiplexing = waitsForMultiplexing
        self.errorText = errorText
    }

    private let condition = Condition()
    private var events: [Event] = []
    private var queuedBytes = 0
    private var paused = false
    private var aborted = false
    /// When the transfer took its connection (``noteConnected()``).
    private var connectedAt: ContinuousClock.Instant?
    /// Body bytes libcurl reports for the request so far (`dlnow`), or `-1` before its first report.
    private var received: Int64 = -1
    /// The transfer's `CURLcode` once libcurl (or the engine) ended it, and why when the engine
    /// ended it for a reason libcurl's error text does not give.
    private var finished: CURLcode?
    private var finishMessage: String?
    private var dropped = false

    // MARK: The engine's side (libcurl's callbacks and the end of the transfer)

    /// Queues a header line; `false` once the transfer was aborted.
    func deliverHeader(_ bytes: UnsafeRawBufferPointer) -> Bool {
        self.condition.lock()
        defer { self.condition.unlock() }
        guard !self.aborted else { return false }
        self.events.append(.header(Array(bytes)))
        self.condition.broadcast()
        return true
    }

    /// Queues a piece of the body. Returns what the write callback returns: the count taken,
    /// `CURL_WRITEFUNC_PAUSE` when enough waits already (libcurl hands the same piece again on
    /// resuming), or 0 to abort.
    func deliverBody(_ bytes: UnsafeRawBufferPointer) -> Int {
        self.condition.lock()
        defer { self.condition.unlock() }
        guard !self.aborted else { return 0 }
        if self.queuedBytes >= self.pauseAbove {
            self.paused = true
            return ccurl_write_pause()
        }
        // libcurl hands at most 16 KiB a call (CURL_MAX_WRITE_SIZE): pieces still queued are joined,
        // so the waiting thread writes and hashes a burst in a few large steps.
        if case .body(var last) = self.events.last, last.count + bytes.count <= Self.joinUpTo {
            self.events[self.events.count - 1] = .body([])  // `last` is then the only reference
            last.append(contentsOf: bytes)
            self.events[self.events.count - 1] = .body(last)
        } else {
            var piece: [UInt8] = []
            piece.reserveCapacity(Self.joinUpTo)
            piece.append(contentsOf: bytes)
            self.events.append(.body(piece))
        }
        self.queuedBytes += bytes.count
        self.condition.broadcast()
        return bytes.count
    }

    /// Notes libcurl's count of body bytes; `false` once the transfer was aborted.
    func noteProgress(received: Int64) -> Bool {
        self.condition.lock()
        defer { self.condition.unlock() }
        self.received = received  // read at the waiting thread's next wake-up (at least every 100 ms)
        return !self.aborted
    }

    /// Ends the transfer with `code` (and `message`, when libcurl's error text does not say
    /// why); the waiting thread returns once it took the queued events.
    func finish(_ code: CURLcode, message: String? = nil) {
        self.condition.lock()
        defer { self.condition.unlock() }
        if self.finished == nil {
            self.finished = code
            self.finishMessage = message
        }
        self.condition.broadcast()
    }

    /// Ends a transfer libcurl never had (``TransferOutcome/Category/notStarted``).
    func drop() {
        self.condition.lock()
        self.dropped = self.finished == nil
        self.condition.unlock()
        self.finish(CURLE_ABORTED_BY_CALLBACK)
    }

    /// Whether the waiting thread ended the transfer (``abort()``); read after it ended.
    var wasAborted: Bool {
        self.condition.lock()
        defer { self.condition.unlock() }
        return self.aborted
    }

    /// Whether the engine dropped the transfer before libcurl had it (read after it ended).
    var wasDropped: Bool {
        self.condition.lock()
        defer { self.condition.unlock() }
        return self.dropped
    }

    /// The engine's reason for ending the transfer, if it gave one (read after it ended).
    var message: String? {
        self.condition.lock()
        defer { self.condition.unlock() }
        return self.finishMessage
    }

    // MARK: The waiting thread's side

    /// What ``take(waitingAtMost:)`` hands over.
    struct Batch {
        var events: [Event]
        /// libcurl's count of body bytes, or `-1` before its first report.
        var received: Int64
        /// Set once the transfer ended (after its last event).
        var finished: CURLcode?
        /// Set when the transfer was paused and may go on now: the caller asks the engine to.
        var resume: Bool
        /// When the transfer took its connection, once it had one.
        var connectedAt: ContinuousClock.Instant?
    }

    /// Waits up to `seconds` for events or the end, and takes what is there.
    func take(waitingAtMost seconds: Double) -> Batch {
        self.condition.lock()
        defer { self.condition.unlock() }
        if self.events.isEmpty, self.finished == nil { self.condition.wait(seconds: seconds) }
        let events = self.events
        self.events = []
        self.queuedBytes = 0
        let resume = self.paused
        self.paused = false
        return Batch(
            events: events,
            received: self.received,
            finished: self.finished,
            resume: resume,
            connectedAt: self.connectedAt
        )
    }

    /// Notes that the transfer has its connection now, its request about to go out (on the
    /// engine's thread).
    func noteConnected() {
        self.condition.lock()
        defer { self.condition.unlock() }
        if self.connectedAt == nil { self.connectedAt = .now }
    }

    /// Stops the transfer at its next callback; queued and later events are dropped.
    func abort() {
        self.condition.lock()
        defer { self.condition.unlock() }
        self.aborted = true
        self.events = []
    }
}
