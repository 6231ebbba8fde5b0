@preconcurrency import Glibc

/// Feeds the bytes of a segmented download to the hash in order: fetchers deliver
/// pieces out of order, each span after it was written to the partial; the span at the hashed
/// prefix goes to the ``HashingPipeline`` at once, a span ahead of it is kept in memory until the
/// prefix reaches it. Past ``memoryBound`` bytes kept, a span ahead is left on disk and read back
/// when the prefix reaches it (counted in ``rehashedBytes``): a lagging piece costs a re-read of
/// what passed it, never unbounded memory.
///
/// `@unchecked Sendable`: every field is guarded by `lock`; delivering holds it while the
/// pipeline takes the bytes, so a slow hash slows every fetcher (back-pressure, as one stream).
final class SegmentAssembler: @unchecked Sendable {
    private let lock = Condition()
    private let pipeline: HashingPipeline
    private let partial: PartialFile
    /// Bytes at most kept in memory ahead of the prefix.
    let memoryBound: Int
    /// Bytes from 0 the hash has been given.
    private var prefix: Int64
    /// Spans ahead of the prefix: their bytes in a block, or `nil` for bytes only on disk. Keyed
    /// by offset.
    private var ahead: [Int64: (count: Int, block: UnsafeMutableRawPointer?)] = [:]
    /// Bytes of the blocks in use (each counts whole).
    private var kept = 0
    private var delivered: Int64 = 0
    /// Blocks of ``blockSize`` bytes, made as needed and used again: a fresh allocation for every
    /// span cost a page fault per 4 KiB (a third more system time than one stream).
    private var freeBlocks: [UnsafeMutableRawPointer] = []
    /// Where a kept span whose block has room ends → that span's offset: the next span of the
    /// same piece fills the block on (a slow connection hands over pieces of 16 KiB).
    private var openEnds: [Int64: Int64] = [:]
    private var blockCount = 0
    /// Bytes per block: the most a transfer hands over at once (``TransferChannel/joinUpTo``).
    static let blockSize = 256 << 10
    /// The spans ahead of the prefix, delivered or found on disk, merged, each with its CRC-32:
    /// what a checkpoint may record.
    private var written = CheckedSpans()
    private var reread: Int64 = 0
    private var peak = 0

    /// - Parameters:
    ///   - pipeline: Hashes from `prefix` on.
    ///   - partial: Where every delivered span was written, to read back what was not kept.
    ///   - prefix: Bytes already hashed (from byte 0).
    ///   - memoryBound: Bytes at most kept ahead of the prefix (``FetchOptions``: 96 MiB).
    ///   - onDisk: Spans past `prefix` an earlier run wrote (a resumed segmented download), their
    ///     checksums confirmed: read back when the prefix reaches them. Apart from each other and
    ///     from what is delivered.
    init(
        pipeline: HashingPipeline,
        partial: PartialFile,
        prefix: Int64,
        memoryBound: Int = 96 << 20,
        onDisk: [CheckedSpans.Span] = []
    ) {
        self.pipeline = pipeline
        self.partial = partial
        self.prefix = prefix
        self.memoryBound = memoryBound
        for span in onDisk where span.range.lowerBound >= prefix && !span.range.isEmpty {
            self.ahead[span.range.lowerBound] = (Int(span.range.count), nil)
            self.written.insert(span.range, checksum: span.checksum)
        }
    }

    deinit {
        for (_, span) in self.ahead { if let block = span.block { self.freeBlocks.append(block) } }
        for block in self.freeBlocks { block.deallocate() }
    }

    /// The spans written ahead that begin at or past `offset`, with their checksums (nearest
    /// first, at most ``CheckedSpans/recordLimit``).
    func written(beyond offset: Int64) -> [CheckedSpans.Span] {
        self.locked { self.written.beyond(offset) }
    }

    /// Bytes from 0 handed to the hash.
    var hashedPrefix: Int64 { self.locked { self.prefix } }

    /// Bytes delivered so far (the rate a ``SegmentRamp`` watches).
    var deliveredBytes: Int64 { self.locked { self.delivered } }

    /// Bytes read back from the partial because they were not kept.
    var rehashedBytes: Int64 { self.locked { self.reread } }

    /// The most bytes kept ahead of the prefix at once.
    var peakKeptBytes: Int { self.locked { self.peak } }

    private func locked<T>(_ body: () -> T) -> T {
        self.lock.lock()
        defer { self.lock.unlock() }
        return body()
    }

    /// Takes `bytes`, already written to the partial at `offset`; spans never overlap.
    /// - Throws: ``PinFetchError/Code/fileIO`` when a span left on disk cannot be read back.
    func deliver(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(PinFetchError) {
        guard !bytes.isEmpty else { return }
        // Bytes at the prefix go to the hash and need no checksum; the others' is taken outside
        // the lock, on the fetcher's own thread (if the prefix reaches them meanwhile, unused).
        let ahead = self.locked { offset != self.prefix }
        let checksum = ahead ? SpanChecksum.of(bytes) : 0
        self.lock.lock()
        defer { self.lock.unlock() }
        self.delivered += Int64(bytes.count)
        if offset == self.prefix {
            self.pipeline.submit(bytes)
            self.prefix += Int64(bytes.count)
            try self.drain()
        } else {
            self.written.insert(offset..<(offset + Int64(bytes.count)), checksum: checksum)
            self.keep(bytes, at: offset)
        }
    }

    /// Hands the spans that now join the prefix to the hash. Under `lock`.
    private func drain() throws(PinFetchError) {
        while let span = self.ahead.removeValue(forKey: self.prefix) {
            self.openEnds[self.prefix + Int64(span.count)] = nil
            if let block = span.block {
                self.pipeline.submit(UnsafeRawBufferPointer(start: block, count: span.count))
                self.freeBlocks.append(block)
                self.kept -= Self.blockSize
            } else {
                try self.readBack(span.count)
            }
            self.prefix += Int64(span.count)
        }
        self.written.removeAll(before: self.prefix)
    }

    /// Keeps a span ahead of the prefix in blocks (filling on the block of the span it continues),
    /// or notes it as on disk only past the memory bound. Under `lock`.
    private func keep(_ bytes: UnsafeRawBufferPointer, at offset: Int64) {
        var start = 0
        while start < bytes.count {
            let at = offset + Int64(start)
            if let key = self.openEnds.removeValue(forKey: at), let span = self.ahead[key], let block = span.block {
                let count = min(Self.blockSize - span.count, bytes.count - start)
                (block + span.count).copyMemory(from: bytes.baseAddress! + start, byteCount: count)
                self.ahead[key] = (span.count + count, block)
                if span.count + count < Self.blockSize { self.openEnds[at + Int64(count)] = key }
                start += count
                continue
            }
            let count = min(Self.blockSize, bytes.count - start)
            let block = self.takeBlock()
            block?.copyMemory(from: bytes.baseAddress! + start, byteCount: count)
            self.ahead[at] = (count, block)
            if block != nil, count < Self.blockSize { self.openEnds[at + Int64(count)] = at }
            start += count
        }
    }

    /// A block for a span ahead, or `nil` when the memory bound is reached. Under `lock`.
    private func takeBlock() -> UnsafeMutableRawPointer? {
        guard self.kept + Self.blockSize <= self.memoryBound else { return nil }
        self.kept += Self.blockSize
        self.peak = max(self.peak, self.kept)
        if let block = self.freeBlocks.popLast() { return block }
        self.blockCount += 1
        return .allocate(byteCount: Self.blockSize, alignment: 64)
    }

    /// Reads `count` bytes at the prefix back from the partial into the hash. Under `lock`.
    private func readBack(_ count: Int) throws(PinFetchError) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: min(count, 1 << 20), alignment: 64)
        defer { buffer.deallocate() }
        var done = 0
        while done < count {
            let want = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<min(buffer.count, count - done)])
            let got = try self.partial.read(into: want, at: self.prefix + Int64(done))
            guard got > 0 else {
                throw PinFetchError(.fileIO, "\(self.partial.path) is shorter than the pieces written to it")
            }
            self.pipeline.submit(UnsafeRawBufferPointer(rebasing: buffer[0..<got]))
            done += got
        }
        self.reread += Int64(count)
    }
}
