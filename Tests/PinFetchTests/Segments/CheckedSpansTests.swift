import Testing

@testable import PinFetch

/// Spans written ahead of the hash keep the CRC-32 of their bytes as they merge: the checksum of
/// a merged span is the one of its bytes taken at once, in whatever order its parts came.
struct CheckedSpansTests {
    static let bytes = pseudoRandomBytes(64 << 10, seed: 7)

    static func checksum(_ range: Range<Int64>) -> UInt32 {
        Self.bytes[Int(range.lowerBound)..<Int(range.upperBound)].withUnsafeBytes { SpanChecksum.of($0) }
    }

    static func inserting(_ parts: [Range<Int64>]) -> CheckedSpans {
        var spans = CheckedSpans()
        for part in parts { spans.insert(part, checksum: Self.checksum(part)) }
        return spans
    }

    @Test func `zlib's CRC-32 is the IEEE one`() {
        #expect(Array("123456789".utf8).withUnsafeBytes { SpanChecksum.of($0) } == 0xCBF4_3926)
        #expect(Array("123456789".utf8).withUnsafeBytes { SpanChecksum.of($0) } == CRC32.checksum("123456789".utf8))
    }

    @Test(
        arguments: [
            [0..<100, 100..<300, 300..<4096],  // in order
            [300..<4096, 100..<300, 0..<100],  // backwards
            [0..<100, 300..<4096, 100..<300],  // the middle last: joins both sides
        ] as [[Range<Int64>]]
    )
    func `parts that touch merge into one span with the checksum of all its bytes`(parts: [Range<Int64>]) {
        let spans = Self.inserting(parts)
        #expect(spans.spans == [CheckedSpans.Span(range: 0..<4096, checksum: Self.checksum(0..<4096))])
    }

    @Test func `parts apart stay apart, each with its own checksum`() {
        let spans = Self.inserting([5000..<6000, 100..<200, 200..<300, 7000..<9000])
        #expect(spans.ranges == [100..<300, 5000..<6000, 7000..<9000])
        #expect(spans.spans.allSatisfy { $0.checksum == Self.checksum($0.range) })
        #expect(spans.count == 200 + 1000 + 2000)
    }

    @Test func `a part written again over a span replaces it`() {
        var spans = Self.inserting([100..<300])
        spans.insert(200..<400, checksum: Self.checksum(200..<400))
        #expect(spans.spans == [CheckedSpans.Span(range: 200..<400, checksum: Self.checksum(200..<400))])
    }

    @Test func `spans the hash took in go; a span that began before an offset is never listed past it`() {
        var spans = Self.inserting([100..<300, 5000..<6000])
        #expect(spans.beyond(200).map(\.range) == [5000..<6000])
        #expect(spans.beyond(100).map(\.range) == [100..<300, 5000..<6000])
        #expect(spans.beyond(0, limit: 1).map(\.range) == [100..<300])
        spans.removeAll(before: 300)
        #expect(spans.ranges == [5000..<6000])
    }
}
