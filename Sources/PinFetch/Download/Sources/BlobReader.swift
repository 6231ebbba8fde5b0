import FoundationEssentials

/// Reads a remote cache blob into a file beside the destination, hashing it as it comes.
///
/// A cache costs seconds, then the mirrors are asked: a blob larger than the room left beside
/// the destination is not taken (it would fill the disk from a cache), and after the first
/// ``FetchOptions/remoteCacheTimeout`` seconds a blob must keep up with ``slowestRate``: by
/// `timeout + t` seconds after its head, at least `t` seconds' worth of bytes at that rate (or
/// all of it) must have come. A blob that trickles just above the stall floor is so given up
/// seconds after the timeout, whatever length it announced (a rule by the announced length
/// alone let `Content-Length: 10^9` at 40 kB/s hold the fetch for 16 minutes). A blob over
/// ``checkedAbove`` bytes is taken only when its length is the origin's (its `HEAD`): a cache
/// that announces 10 GB for a pinned file would otherwise fill the disk at loopback speed.
final class BlobReader: TransferDelegate {
    /// Bytes per second a blob must keep up with, after the first timeout's worth of seconds.
    static let slowestRate: Int64 = 1 << 20
    /// Bytes above which a blob's length is compared with the origin's.
    static let checkedAbove: Int64 = 16 << 20

    /// What the origin said of the file's length.
    enum Origin {
        /// Not asked yet: a blob over ``checkedAbove`` stops after its head (``needsOrigin``).
        case notAsked
        /// Asked: its `HEAD`'s length, `nil` when it gave none.
        case asked(length: Int64?)
    }

    let partial: PartialFile
    let digest: RunningDigest
    let limit: Int64?
    /// Seconds of grace before the blob must keep up with ``slowestRate``.
    let timeout: Double
    let origin: Origin
    /// Set when the blob is over ``checkedAbove`` and the origin was not asked yet.
    private(set) var needsOrigin = false
    private(set) var written: Int64 = 0
    private(set) var overLimit = false
    /// Set when the blob fell behind ``slowestRate`` after the grace.
    private(set) var tooSlow = false
    /// When the blob's head came.
    private var start: ContinuousClock.Instant?
    /// Why an answer was not taken as a blob, if it was not.
    private(set) var refusal: String?
    private(set) var localFailure: PinFetchError?
    /// The first ``S3ErrorBody/limit`` bytes of an answer other than `200`, when
    /// ``readsErrorBody`` (a bucket's `<Error><Code>`).
    private(set) var errorBody: [UInt8]?
    /// Whether to read the body of an answer other than `200` (``errorBody``).
    var readsErrorBody = false
    private let cancelled: @Sendable () -> Bool

    init(
        partial: PartialFile,
        algorithm: HashAlgorithm,
        limit: Int64?,
        timeout: Double,
        origin: Origin,
        cancelled: @escaping @Sendable () -> Bool
    ) {
        self.partial = partial
        self.digest = RunningDigest(algorithm: algorithm)
        self.limit = limit
        self.timeout = timeout
        self.origin = origin
        self.cancelled = cancelled
    }

    override func receive(head: ResponseHead) -> Bool {
        guard head.status == 200 else {
            guard self.readsErrorBody else { return false }
            self.errorBody = []
            return true
        }
        guard !head.hasContentCoding else {
            self.refusal = "a blob with a Content-Encoding"
            return false
        }
        // A content-addressed store knows its blob's size: an answer without one could run on
        // forever (and fill the disk), so it is not taken.
        guard let length = head.contentLength else {
            self.refusal =
                head.framingError.map { "a blob whose framing is broken (\($0))" }
                ?? "a blob without a Content-Length"
            return false
        }
        if let limit = self.limit, length > limit {
            self.overLimit = true
            return false
        }
        if let free = self.partial.freeBytes(), length > free {
            self.refusal = "a blob of \(length) bytes, more than the \(free) free beside the destination"
            return false
        }
        if length > Self.checkedAbove {
            switch self.origin {
            case .notAsked:
                self.needsOrigin = true
                return false
            case .asked(let known?) where known != length:
                self.refusal = "a blob of \(length) bytes, where the origin announces \(known)"
                return false
            case .asked: break
            }
        }
        self.start = .now
        return true
    }

    override func progress(received: Int64) -> Bool {
        guard let start = self.start else { return true }
        let elapsed = ContinuousClock.now - start
        let late = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18 - self.timeout
        guard late > 0, Double(self.written) < late * Double(Self.slowestRate) else { return true }
        self.tooSlow = true
        return false
    }

    override func receive(body: UnsafeRawBufferPointer) -> Bool {
        if let error = self.errorBody {
            self.errorBody = error + body.prefix(max(0, S3ErrorBody.limit - error.count))
            return error.count + body.count < S3ErrorBody.limit
        }
        if let limit = self.limit, self.written + Int64(body.count) > limit {
            self.overLimit = true
            return false
        }
        do throws(PinFetchError) {
            try self.partial.write(body, at: self.written)
        } catch {
            self.localFailure = error
            return false
        }
        self.digest.update(body)
        self.written += Int64(body.count)
        return true
    }

    override var isCancelled: Bool { self.cancelled() }
}
