extension PartialFile {
    /// Feeds bytes `start..<end` of the file to `digest`, read in pieces of 1 MiB.
    /// - Parameter isCancelled: Asked before each piece: a signal must not wait for gigabytes.
    /// - Throws: ``PinFetchError/Code/fileIO`` when they cannot be read (the file is shorter);
    ///   ``PinFetchError/Code/cancelled`` when `isCancelled` said so.
    func hash(
        from start: Int64,
        to end: Int64,
        into digest: RunningDigest,
        isCancelled: () -> Bool = { false }
    ) throws(PinFetchError) {
        try self.read(from: start, to: end, isCancelled: isCancelled) { digest.update($0) }
    }

    /// The CRC-32 of bytes `span` of the file (``SpanChecksum``), read in pieces of 1 MiB.
    /// - Throws: as ``hash(from:to:into:isCancelled:)``.
    func checksum(of span: Range<Int64>, isCancelled: () -> Bool = { false }) throws(PinFetchError) -> UInt32 {
        var crc: UInt32 = 0
        try self.read(from: span.lowerBound, to: span.upperBound, isCancelled: isCancelled) {
            crc = SpanChecksum.update(crc, with: $0)
        }
        return crc
    }

    /// Hands bytes `start..<end` of the file to `body` in order, in pieces of 1 MiB at most.
    private func read(
        from start: Int64,
        to end: Int64,
        isCancelled: () -> Bool,
        _ body: (UnsafeRawBufferPointer) -> Void
    ) throws(PinFetchError) {
        let size = Int(max(1, min(1 << 20, end - start)))
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 16)
        defer { buffer.deallocate() }
        var position = start
        while position < end {
            guard !isCancelled() else {
                throw PinFetchError(.cancelled, "\(self.path): cancelled while hashing it again, at byte \(position)")
            }
            let slice = UnsafeMutableRawBufferPointer(
                rebasing: buffer[..<Int(min(Int64(buffer.count), end - position))]
            )
            let count = try self.read(into: slice, at: position)
            guard count > 0 else { throw PinFetchError(.fileIO, "\(self.path) ended at byte \(position)") }
            body(UnsafeRawBufferPointer(rebasing: slice[..<count]))
            position += Int64(count)
        }
    }

    /// SHA-256 of the ``Checkpoint/tailLength(before:)`` bytes before `offset` (64 KiB at most).
    /// - Throws: ``PinFetchError/Code/fileIO`` when they cannot be read (the file is shorter).
    func tailDigest(before offset: Int64) throws(PinFetchError) -> [UInt8] {
        let digest = RunningDigest(algorithm: .sha256)
        try self.hash(from: offset - Checkpoint.tailLength(before: offset), to: offset, into: digest)
        return digest.finalize()
    }
}
