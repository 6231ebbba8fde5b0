import Dispatch
import FoundationEssentials
@preconcurrency import Glibc

/// Hashes body bytes on its own thread while the transfer thread receives and writes them, and
/// takes checkpoints on two more (one per kind: a slow `fsync` never holds up a light
/// checkpoint), so neither hashing nor `fsync` holds up the network.
///
/// The transfer thread writes each piece to `<dest>.part` itself, then ``submit(_:)`` copies it
/// into one of a fixed set of buffers (memory stays flat; when all are in use the transfer
/// thread waits, so a slow disk or CPU slows the transfer instead of growing the heap). The
/// hashing thread feeds them to the digest in order, full ones at once and a partly filled one
/// once it has waited 25 ms (a slow body, a stall, the end of a burst), so what was written is
/// soon covered by a checkpoint. Because bytes are written before they are
/// hashed, the durable data always reaches at least the hashed offset: a checkpoint of
/// (hashed offset, hash state) taken after an `fsync` never describes bytes that are not durable,
/// and a light one never describes bytes that were not written.
///
/// `@unchecked Sendable`: the buffers and counters are guarded by `condition`; `digest` belongs
/// to the hashing thread between ``init`` and the return of ``finish()``.
final class HashingPipeline: @unchecked Sendable {
    /// Takes a checkpoint of a kind for `offset` with the digest `state` there; runs off the
    /// hashing thread, at most one of each kind at a time.
    typealias Checkpoint =
        @Sendable (_ kind: CheckpointWriter.Kind, _ offset: Int64, _ state: [UInt8]) throws(PinFetchError) -> Void

    /// How often checkpoints are taken (``FetchOptions``: bytes and seconds for each kind).
    struct Cadence: Sendable {
        var durableInterval: Int64
        var durablePeriod: Double
        var lightInterval: Int64
        var lightPeriod: Double

        init(_ options: FetchOptions) {
            self.durableInterval = options.durableCheckpointInterval
            self.durablePeriod = options.durableCheckpointPeriod
            self.lightInterval = options.lightCheckpointInterval
            self.lightPeriod = options.lightCheckpointPeriod
        }
    }

    private let digest: RunningDigest
    /// Fed the same bytes as `digest`, when a store's MD5 is cross-checked.
    private let crossCheck: CrossCheckDigest?
    private let checkpoint: Checkpoint?
    private let condition = Condition()
    private let durableQueue = DispatchQueue(label: "pinfetch.checkpoint.durable")
    private let lightQueue = DispatchQueue(label: "pinfetch.checkpoint.light")
    private let storage: UnsafeMutableRawPointer
    private let bufferSize: Int

    // Guarded by `condition`.
    private var free: [Int]
    private var filled: [(index: Int, count: Int)] = []
    private var closed = false
    private var workerDone = false
    private var durable: CheckpointClock
    private var light: CheckpointClock
    private var failure: PinFetchError?
    private var waited = Duration.zero

    /// The buffer the transfer thread is filling: its index, bytes in it, and when its first
    /// byte came. The hashing thread takes it over once it has waited ``stagingAge`` seconds, so
    /// the bytes of a slow or stalled body, or of the end of a burst, are hashed and checkpointed.
    private var staging: (index: Int, count: Int, since: Date)?
    /// Seconds the hashing thread leaves a partly filled buffer to the transfer thread.
    private let stagingAge = 0.025

    /// - Parameters:
    ///   - digest: The running digest, already at `offset` bytes.
    ///   - crossCheck: A second digest fed the same bytes, or `nil`.
    ///   - offset: The representation offset of the first byte to come.
    ///   - bufferSize: Bytes per buffer; `bufferCount` of them are allocated once.
    ///   - cadence: When each kind of checkpoint comes due.
    ///   - checkpoint: Writes a checkpoint, or `nil` when the partial cannot be resumed.
    init(
        digest: RunningDigest,
        crossCheck: CrossCheckDigest? = nil,
        offset: Int64,
        bufferSize: Int = 1 << 20,
        bufferCount: Int = 3,
        cadence: Cadence,
        checkpoint: Checkpoint?
    ) {
        self.digest = digest
        self.crossCheck = crossCheck
        self.bufferSize = bufferSize
        self.storage = .allocate(byteCount: bufferSize * bufferCount, alignment: 64)
        self.free = Array(0..<bufferCount)
        self.checkpoint = checkpoint
        let now = Date()
        self.durable = CheckpointClock(
            interval: cadence.durableInterval,
            period: cadence.durablePeriod,
            mark: (offset, now)
        )
        self.light = CheckpointClock(
            interval: cadence.lightInterval,
            period: cadence.lightPeriod,
            idleSpacing: 0.025,
            mark: (offset, now)
        )
        Threads.runPooled { [self] in self.hashLoop(offset: offset) }
    }

    deinit { self.storage.deallocate() }

    /// How long ``submit(_:)`` has waited for the hash to free a buffer, in all: when it grows as
    /// fast as time, hashing, not the network, sets the pace.
    var waitedForHashing: Duration {
        self.condition.lock()
        defer { self.condition.unlock() }
        return self.waited
    }

    /// The first failure of a checkpoint, if any; the transfer should stop.
    var error: PinFetchError? {
        self.condition.lock()
        defer { self.condition.unlock() }
        return self.failure
    }

    /// Copies `bytes` for hashing; waits while every buffer is in use.
    func submit(_ bytes: UnsafeRawBufferPointer) {
        var remaining = bytes
        self.condition.lock()
        defer { self.condition.unlock() }
        while !remaining.isEmpty {
            if self.staging == nil {
                if self.free.isEmpty {
                    let started = ContinuousClock.now
                    while self.free.isEmpty { self.condition.wait() }
                    self.waited += ContinuousClock.now - started
                }
                self.staging = (self.free.removeLast(), 0, Date())
                self.condition.broadcast()  // the hashing thread times its take-over from now
            }
            let (index, filled, since) = self.staging!
            let count = min(remaining.count, self.bufferSize - filled)
            (self.storage + index * self.bufferSize + filled).copyMemory(from: remaining.baseAddress!, byteCount: count)
            self.staging = (index, filled + count, since)
            remaining = UnsafeRawBufferPointer(rebasing: remaining[count...])
            if filled + count == self.bufferSize { self.handOverStaging() }
        }
    }

    /// Hands over the last partial buffer, waits until every byte is hashed and the last
    /// checkpoint is written, and returns the first checkpoint failure. Call once.
    func finish() -> PinFetchError? {
        self.condition.lock()
        self.handOverStaging()
        self.closed = true
        self.condition.broadcast()
        while !self.workerDone { self.condition.wait() }
        self.condition.unlock()
        self.durableQueue.sync {}  // the checkpoints in flight, if any
        self.lightQueue.sync {}
        return self.error
    }

    /// Queues the buffer being filled for hashing, if it holds any byte. Under `condition`.
    private func handOverStaging() {
        guard let (index, count, _) = self.staging else { return }
        self.staging = nil
        guard count > 0 else { return self.free.append(index) }
        self.filled.append((index, count))
        self.condition.broadcast()
    }

    private func hashLoop(offset start: Int64) {
        var offset = start
        while true {
            self.condition.lock()
            // Waiting for bytes: a checkpoint still comes due once its period has passed, so what
            // arrived before a stall survives a kill during it.
            var due: CheckpointWriter.Kind?
            while self.filled.isEmpty && !self.closed {
                let now = Date()
                if let staging = self.staging, now.timeIntervalSince(staging.since) >= self.stagingAge {
                    self.handOverStaging()
                    break
                }
                due = self.takeDueCheckpoint(at: offset, now: now, idle: true)
                guard due == nil else { break }
                let handOver = self.staging.map { $0.since.addingTimeInterval(self.stagingAge) }
                if let deadline = [self.nextDeadline(at: offset), handOver].compactMap({ $0 }).min() {
                    self.condition.wait(seconds: deadline.timeIntervalSinceNow)
                } else {
                    self.condition.wait()
                }
            }
            if let due {
                self.condition.unlock()
                self.schedule(due, at: offset)
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

            let bytes = UnsafeRawBufferPointer(start: self.storage + index * self.bufferSize, count: count)
            self.digest.update(bytes)
            self.crossCheck?.update(bytes)
            offset += Int64(count)

            self.condition.lock()
            self.free.append(index)
            due = self.takeDueCheckpoint(at: offset, now: Date(), idle: self.filled.isEmpty)
            self.condition.broadcast()
            self.condition.unlock()
            if let due { self.schedule(due, at: offset) }
        }
    }

    /// The checkpoint due at `offset`, marked in flight, if any. A durable one makes a light one
    /// at the same offset pointless; a light one does not wait for a slow durable one. Under
    /// `condition`.
    private func takeDueCheckpoint(at offset: Int64, now: Date, idle: Bool) -> CheckpointWriter.Kind? {
        guard self.checkpoint != nil, self.failure == nil else { return nil }
        if !self.durable.inFlight, self.durable.isDue(at: offset, now: now, idle: idle) {
            self.durable.taken(at: offset, now: now)
            self.light.mark = (offset, now)
            return .durable
        }
        if !self.light.inFlight, offset > self.durable.mark.offset, self.light.isDue(at: offset, now: now, idle: idle) {
            self.light.taken(at: offset, now: now)
            return .light
        }
        return nil
    }

    /// When the next checkpoint comes due if no byte arrives, or `nil` for none. Under `condition`.
    private func nextDeadline(at offset: Int64) -> Date? {
        guard self.checkpoint != nil, self.failure == nil else { return nil }
        return [self.durable, self.light].filter { !$0.inFlight && offset > $0.mark.offset }
            .map { $0.mark.time.addingTimeInterval(min($0.period, $0.idleSpacing ?? $0.period)) }.min()
    }

    /// Hands the digest's state after `offset` bytes to the kind's queue (the hashing thread owns
    /// the digest; the kind was marked in flight under the lock).
    private func schedule(_ kind: CheckpointWriter.Kind, at offset: Int64) {
        guard let checkpoint = self.checkpoint else { return }
        let state = self.digest.serializedState()
        (kind == .durable ? self.durableQueue : self.lightQueue).async { [self] in
            var failure: PinFetchError?
            do throws(PinFetchError) { try checkpoint(kind, offset, state) } catch { failure = error }
            self.condition.lock()
            if kind == .durable { self.durable.inFlight = false } else { self.light.inFlight = false }
            if self.failure == nil { self.failure = failure }
            self.condition.broadcast()  // a stalled hashing thread may be waiting to take the next
            self.condition.unlock()
        }
    }
}

/// When one kind of checkpoint comes due: `interval` bytes or `period` seconds after the last,
/// or, with an `idleSpacing`, as soon as the hashing thread has caught up with the transfer and
/// that many seconds have passed. A body that arrives in bursts (a throttling server) is then
/// covered between them, whatever the interval, at a bounded cost.
struct CheckpointClock {
    let interval: Int64
    let period: Double
    var idleSpacing: Double? = nil
    /// Where and when the last one of this kind was taken.
    var mark: (offset: Int64, time: Date)
    var inFlight = false

    func isDue(at offset: Int64, now: Date, idle: Bool) -> Bool {
        guard offset > self.mark.offset else { return false }
        let elapsed = now.timeIntervalSince(self.mark.time)
        return offset - self.mark.offset >= self.interval || elapsed >= self.period
            || (idle && self.idleSpacing.map { elapsed >= $0 } == true)
    }

    mutating func taken(at offset: Int64, now: Date) {
        self.mark = (offset, now)
        self.inFlight = true
    }
}
