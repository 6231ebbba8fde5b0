@preconcurrency import Glibc

/// Feeds the bytes of a segmented download to the hash in order (issue 14): fetchers deliver
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
    /// Spans ahead of the prefix: kept bytes, or `nil` for bytes only on disk. Keyed by offset.
    private var ahead: [Int64: (count: Int, bytes: [UInt8]?)] = [:]
    private var kept = 0
    /// Every span delivered or found on disk, merged: what a checkpoint may record.
    private var written = WrittenSpans()
    private var reread: Int64 = 0
    private var peak = 0

    /// - Parameters:
    ///   - pipeline: Hashes from `prefix` on.
    ///   - partial: Where every delivered span was written, to read back what was not kept.
    ///   - prefix: Bytes already hashed (from byte 0).
    ///   - memoryBound: Bytes at most kept ahead of the prefix (issue 14: 128 MiB).
    ///   - onDisk: Spans past `prefix` a earlier run wrote (a resumed segmented download): read
    ///     back when the prefix reaches them. Apart from each other and from what is delivered.
    init(
        pipeline: HashingPipeline,
        partial: PartialFile,
        prefix: Int64,
        memoryBound: Int = 128 << 20,
        onDisk: [Range<Int64>] = []
    ) {
        self.pipeline = pipeline
        self.partial = partial
        self.prefix = prefix
        self.memoryBound = memoryBound
        for span in onDisk where span.lowerBound >= prefix && !span.isEmpty {
            self.ahead[span.lowerBound] = (Int(span.count), nil)
            self.written.insert(span)
        }
    }

    /// The written spans at or past `offset` (nearest first, at most ``WrittenSpans/recordLimit``).
    func written(beyond offset: Int64) -> [Range<Int64>] {
        self.locked { self.written.beyond(offset) }
    }

    /// Bytes from 0 handed to the hash.
    var hashedPrefix: Int64 { self.locked { self.prefix } }

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
        self.lock.lock()
        defer { self.lock.unlock() }
        self.written.insert(offset..<(offset + Int64(bytes.count)))
        if offset == self.prefix {
            self.pipeline.submit(bytes)
            self.prefix += Int64(bytes.count)
            try self.drain()
        } else if self.kept + bytes.count <= self.memoryBound {
            self.ahead[offset] = (bytes.count, Array(bytes))
            self.kept += bytes.count
            self.peak = max(self.peak, self.kept)
        } else {
            self.ahead[offset] = (bytes.count, nil)
        }
    }

    /// Hands the spans that now join the prefix to the hash. Under `lock`.
    private func drain() throws(PinFetchError) {
        while let span = self.ahead.removeValue(forKey: self.prefix) {
            if let bytes = span.bytes {
                bytes.withUnsafeBytes { self.pipeline.submit($0) }
                self.kept -= span.count
            } else {
                try self.readBack(span.count)
            }
            self.prefix += Int64(span.count)
        }
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
