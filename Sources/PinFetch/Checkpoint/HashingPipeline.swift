import Dispatch
import Foundation

/// Hashes body bytes on its own thread while the transfer thread receives and writes them, and
/// takes checkpoints on a third, so neither hashing nor `fsync` holds up the network.
///
/// The transfer thread writes each piece to `<dest>.part` itself, then ``submit(_:)`` copies it
/// into one of a fixed set of buffers (memory stays flat; when all are in use the transfer
/// thread waits, so a slow disk or CPU slows the transfer instead of growing the heap). The
/// hashing thread feeds them to the digest in order. Because bytes are written before they are
/// hashed, the durable data always reaches at least the hashed offset: a checkpoint of
/// (hashed offset, hash state) taken after an `fsync` never describes bytes that are not durable.
///
/// `@unchecked Sendable`: the buffers and counters are guarded by `condition`; `digest` belongs
/// to the hashing thread between ``init`` and the return of ``finish()``.
final class HashingPipeline: @unchecked Sendable {
    /// Takes a checkpoint for `offset` with the digest `state` there; runs off the hashing thread.
    typealias Checkpoint = @Sendable (_ offset: Int64, _ state: [UInt8]) throws(PinFetchError) -> Void

    private let digest: RunningDigest
    private let checkpoint: Checkpoint?
    private let checkpointInterval: Int64
    private let checkpointPeriod: Double
    private let condition = NSCondition()
    private let checkpoints = DispatchQueue(label: "pinfetch.checkpoint")
    private let storage: UnsafeMutableRawPointer
    private let bufferSize: Int

    // Guarded by `condition`.
    private var free: [Int]
    private var filled: [(index: Int, count: Int)] = []
    private var closed = false
    private var workerDone = false
    private var checkpointInFlight = false
    private var failure: PinFetchError?

    // Owned by the transfer thread.
    private var staging: Int?
    private var stagingCount = 0

    /// - Parameters:
    ///   - digest: The running digest, already at `offset` bytes.
    ///   - offset: The representation offset of the first byte to come.
    ///   - bufferSize: Bytes per buffer; `bufferCount` of them are allocated once.
    ///   - checkpointInterval: Bytes hashed between two checkpoints.
    ///   - checkpointPeriod: Seconds between two checkpoints while bytes arrive.
    ///   - checkpoint: Writes a checkpoint, or `nil` when the partial cannot be resumed.
    init(
        digest: RunningDigest,
        offset: Int64,
        bufferSize: Int = 1 << 20,
        bufferCount: Int = 4,
        checkpointInterval: Int64,
        checkpointPeriod: Double,
        checkpoint: Checkpoint?
    ) {
        self.digest = digest
        self.bufferSize = bufferSize
        self.storage = .allocate(byteCount: bufferSize * bufferCount, alignment: 64)
        self.free = Array(0..<bufferCount)
        self.checkpoint = checkpoint
        self.checkpointInterval = checkpointInterval
        self.checkpointPeriod = checkpointPeriod
        let thread = Thread { [self] in self.hashLoop(offset: offset) }
        thread.name = "pinfetch.hash"
        thread.start()
    }

    deinit { self.storage.deallocate() }

    /// The first failure of a checkpoint, if any; the transfer should stop.
    var error: PinFetchError? {
        self.condition.lock()
        defer { self.condition.unlock() }
        return self.failure
    }

    /// Copies `bytes` for hashing; waits while every buffer is in use.
    func submit(_ bytes: UnsafeRawBufferPointer) {
        var remaining = bytes
        while !remaining.isEmpty {
            let index = self.staging ?? self.takeFreeBuffer()
            self.staging = index
            let count = min(remaining.count, self.bufferSize - self.stagingCount)
            (self.storage + index * self.bufferSize + self.stagingCount).copyMemory(
                from: remaining.baseAddress!,
                byteCount: count
            )
            self.stagingCount += count
            remaining = UnsafeRawBufferPointer(rebasing: remaining[count...])
            if self.stagingCount == self.bufferSize { self.flushStaging() }
        }
    }

    /// Hands over the last partial buffer, waits until every byte is hashed and the last
    /// checkpoint is written, and returns the first checkpoint failure. Call once.
    func finish() -> PinFetchError? {
        self.flushStaging()
        self.condition.lock()
        self.closed = true
        self.condition.broadcast()
        while !self.workerDone { self.condition.wait() }
        self.condition.unlock()
        self.checkpoints.sync {}  // the checkpoint in flight, if any
        return self.error
    }

    private func takeFreeBuffer() -> Int {
        self.condition.lock()
        defer { self.condition.unlock() }
        while self.free.isEmpty { self.condition.wait() }
        return self.free.removeLast()
    }

    /// Hands a partly filled buffer to the hashing thread now (the transfer thread calls it when
    /// no byte came since its last look: a stall), so the bytes before a stall get hashed and
    /// checkpointed instead of waiting for the buffer to fill.
    func flush() { self.flushStaging() }

    private func flushStaging() {
        guard let index = self.staging else { return }
        self.condition.lock()
        self.filled.append((index, self.stagingCount))
        self.condition.broadcast()
        self.condition.unlock()
        self.staging = nil
        self.stagingCount = 0
    }

    private func hashLoop(offset start: Int64) {
        var offset = start
        var lastCheckpoint = start
        var lastCheckpointTime = Date()
        while true {
            self.condition.lock()
            // Waiting for bytes: a stalled transfer still gets its checkpoint once the period
            // has passed, so what arrived before the stall survives a kill during it.
            var stalledCheckpointDue = false
            while self.filled.isEmpty && !self.closed {
                let canCheckpoint =
                    self.checkpoint != nil && offset > lastCheckpoint && !self.checkpointInFlight
                    && self.failure == nil
                guard canCheckpoint else {
                    self.condition.wait()
                    continue
                }
                let deadline = lastCheckpointTime.addingTimeInterval(self.checkpointPeriod)
                if Date() >= deadline {
                    stalledCheckpointDue = true
                    break
                }
                _ = self.condition.wait(until: deadline)
            }
            if stalledCheckpointDue {
                self.checkpointInFlight = true
                self.condition.unlock()
                self.scheduleCheckpoint(at: offset)
                lastCheckpoint = offset
                lastCheckpointTime = Date()
                continue
            }
            guard !self.filled.isEmpty else {
                self.workerDone = true
                self.condition.broadcast()
                self.condition.unlock()
                return
            }
            let (index, count) = self.filled.removeFirst()
            self.condition.unlock()

            self.digest.update(UnsafeRawBufferPointer(start: self.storage + index * self.bufferSize, count: count))
            offset += Int64(count)

            self.condition.lock()
            self.free.append(index)
            let due =
                self.checkpoint != nil && !self.checkpointInFlight && self.failure == nil
                && (offset - lastCheckpoint >= self.checkpointInterval
                    || Date().timeIntervalSince(lastCheckpointTime) >= self.checkpointPeriod)
            if due { self.checkpointInFlight = true }
            self.condition.broadcast()
            self.condition.unlock()

            if due {
                self.scheduleCheckpoint(at: offset)
                lastCheckpoint = offset
                lastCheckpointTime = Date()
            }
        }
    }

    /// Hands the digest's state after `offset` bytes to the checkpoint queue (the hashing thread
    /// owns the digest, and `checkpointInFlight` was set under the lock).
    private func scheduleCheckpoint(at offset: Int64) {
        guard let checkpoint = self.checkpoint else { return }
        let state = self.digest.serializedState()
        self.checkpoints.async { [self] in
            var failure: PinFetchError?
            do throws(PinFetchError) { try checkpoint(offset, state) } catch { failure = error }
            self.condition.lock()
            self.checkpointInFlight = false
            if self.failure == nil { self.failure = failure }
            self.condition.broadcast()  // a stalled hashing thread may be waiting to take the next
            self.condition.unlock()
        }
    }
}
