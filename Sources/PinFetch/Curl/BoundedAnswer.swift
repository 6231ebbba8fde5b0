import FoundationEssentials

/// Keeps the first `limit` bytes of an answer's body: a small answer read whole (STS's keys,
/// a registry's token); what is past the limit is dropped, not an error.
final class BoundedAnswer: TransferDelegate {
    private let limit: Int
    private let cancelled: () -> Bool
    private(set) var body: [UInt8] = []

    init(limit: Int, isCancelled: @escaping () -> Bool) {
        self.limit = limit
        self.cancelled = isCancelled
    }

    override var isCancelled: Bool { self.cancelled() }
    override func receive(body: UnsafeRawBufferPointer) -> Bool {
        self.body += body.prefix(max(0, self.limit - self.body.count))
        return true
    }
    override func progress(received: Int64) -> Bool { !self.cancelled() }
}
