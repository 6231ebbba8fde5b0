import FoundationEssentials

/// Keeps the first `limit` bytes of an answer's body: a small answer read whole (STS's keys,
/// a registry's token); a longer one is stopped at the limit (``overLimit``).
final class BoundedAnswer: TransferDelegate {
    private let limit: Int
    private let cancelled: () -> Bool
    private(set) var body: [UInt8] = []

    init(limit: Int, isCancelled: @escaping () -> Bool) {
        self.limit = limit
        self.cancelled = isCancelled
    }

    override var isCancelled: Bool { self.cancelled() }
    /// Set when the body ran past the limit: the transfer was stopped there.
    private(set) var overLimit = false

    override func receive(body: UnsafeRawBufferPointer) -> Bool {
        guard self.body.count + body.count <= self.limit else {
            self.overLimit = true
            return false
        }
        self.body += body
        return true
    }
    override func progress(received: Int64) -> Bool { !self.cancelled() }
}
