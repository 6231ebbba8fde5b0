import Foundation
import Testing

@testable import PinFetch

/// The pieces of a segmented download: who fetches what, and that bytes delivered out
/// of order reach the hash in order, from memory while it lasts and from disk past its bound.
struct SegmentPlanTests {
    @Test func `fetchers take the first open piece, in order, and a released piece comes back first`() {
        var plan = SegmentPlan(length: 10 * 100 + 7, pieceSize: 100)
        #expect(plan.pieces.count == 11)
        #expect(plan.range(of: 10) == 1000..<1007)
        let claimed = (0..<3).map { plan.claimNext(for: $0) }
        #expect(claimed == [0, 1, 2])
        let taken = plan.claim(1, for: 0)
        #expect(!taken)  // fetcher 1 has it: the stream of 0 stops at its end
        plan.release(1)  // fetcher 1 failed
        let again = plan.claimNext(for: 3)
        #expect(again == 1)
        plan.markWritten(0)
        plan.release(0)  // a written piece stays written
        #expect(plan.pieces[0] == .written)
        let next = plan.claim(3, for: 2)
        #expect(next)
        #expect(plan.piece(at: 399) == 3 && plan.piece(at: 400) == 4)
        for index in 1..<11 { plan.markWritten(index) }
        #expect(plan.isComplete)
        let none = plan.claimNext(for: 0)
        #expect(none == nil)
    }

    @Test func `connections double while they bring their share, up to the maximum`() {
        // A server holding each connection to 20 MiB/s: 1, 2, 4, then 8 connections.
        var ramp = SegmentRamp(maximum: 7)
        var steps: [SegmentRamp.Step] = []
        var connections: [Int] = []
        for _ in 0..<5 {
            steps.append(ramp.next(rate: Double(ramp.allowed + 1) * 20))
            connections.append(ramp.allowed + 1)
        }
        #expect(steps == [.add, .add, .add, .hold, .hold])
        #expect(connections == [2, 4, 8, 8, 8])
        #expect(ramp.isSettled)
    }

    @Test func `a lead held back upstream brings every connection at once`() {
        // A server holding each connection to 20: 8 connections at 20 stay under a hash of 1000.
        var capped = SegmentRamp(maximum: 7, hashRate: 1000)
        #expect(capped.next(rate: 20) == .add && capped.allowed == 7)
        #expect(capped.next(rate: 150) == .hold && capped.isSettled && capped.allowed == 7)
        // A server whose cap is shared by all connections: they bring nothing and go.
        var shared = SegmentRamp(maximum: 7, hashRate: 1000)
        #expect(shared.next(rate: 20) == .add && shared.allowed == 7)
        #expect(shared.next(rate: 25) == .remove && shared.isSettled && shared.allowed == 0)
        // A lead near what the hash takes: the connections double, as without a hash rate.
        var fast = SegmentRamp(maximum: 7, hashRate: 1000)
        #expect(fast.next(rate: 400) == .add && fast.allowed == 1)
        #expect(fast.next(rate: 410) == .remove && fast.allowed == 0)
    }

    @Test func `a step that brings too little is taken back, and the ramp stops`() {
        var flat = SegmentRamp(maximum: 7)
        #expect(flat.next(rate: 1000) == .add)
        #expect(flat.next(rate: 1010) == .remove)  // the hash or the CPU sets the pace
        #expect(flat.isSettled && flat.allowed == 0)
        #expect(flat.next(rate: 5000) == .hold)
        var half = SegmentRamp(maximum: 7)
        #expect(half.next(rate: 1000) == .add)  // 2 connections
        #expect(half.next(rate: 1900) == .add)  // 4
        #expect(half.next(rate: 2400) == .remove)  // less than half of what 2 more would bring
        #expect(half.isSettled && half.allowed == 1)
        var three = SegmentRamp(maximum: 2)
        #expect(three.next(rate: 10) == .add && three.allowed == 1)
        #expect(three.next(rate: 20) == .add && three.allowed == 2)  // capped at the maximum
        #expect(three.next(rate: 28) == .hold && three.isSettled)
        var burst = SegmentRamp(maximum: 7)  // the lead measured during a server's first-second burst
        #expect(burst.next(rate: 1000) == .add)
        #expect(burst.next(rate: 1300) == .add && burst.allowed == 3)
        var none = SegmentRamp(maximum: 0)
        #expect(none.next(rate: 5) == .hold && none.allowed == 0)
    }

    @Test func `pieces wholly before a resumed prefix are written already`() {
        let plan = SegmentPlan(length: 1000, pieceSize: 100, writtenUpTo: 250)
        #expect(plan.pieces[0] == .written && plan.pieces[1] == .written && plan.pieces[2] == .open)
        #expect(SegmentPlan(length: 1000, pieceSize: 100, writtenUpTo: 1000).isComplete)
    }

    /// Writes `spans` of `content` to a partial in the order given and delivers each; returns the
    /// digest, the bytes read back and the most kept in memory.
    private func assemble(
        _ content: [UInt8],
        spans: [Range<Int>],
        memoryBound: Int,
        in directory: String
    ) throws -> (digest: String, reread: Int64, peak: Int) {
        let partial = try PartialFile(path: directory + "/f.part")
        let digest = RunningDigest(algorithm: .sha256)
        let pipeline = HashingPipeline(
            digest: digest,
            offset: 0,
            bufferSize: 64 << 10,
            cadence: HashingPipeline.Cadence(FetchOptions()),
            checkpoint: nil
        )
        let assembler = SegmentAssembler(pipeline: pipeline, partial: partial, prefix: 0, memoryBound: memoryBound)
        for span in spans {
            try content[span].withUnsafeBytes { bytes in
                try partial.write(bytes, at: Int64(span.lowerBound))
                try assembler.deliver(bytes, at: Int64(span.lowerBound))
            }
        }
        #expect(assembler.hashedPrefix == Int64(content.count))
        #expect(pipeline.finish() == nil)
        return (Pin.hex(digest.finalize()), assembler.rehashedBytes, assembler.peakKeptBytes)
    }

    @Test func `pieces delivered out of order are hashed in order, from memory`() async throws {
        let content = pseudoRandomBytes(1 << 20, seed: 14)
        // Four pieces of 256 KiB in 16 KiB spans, interleaved as four connections deliver them.
        let spans = (0..<16).flatMap { step in
            [3, 1, 2, 0].map { piece in
                (piece * (256 << 10) + step * (16 << 10))..<(piece * (256 << 10) + (step + 1) * (16 << 10))
            }
        }
        try await withTemporaryDirectory { directory in
            let result = try self.assemble(content, spans: spans, memoryBound: 1 << 20, in: directory)
            #expect(result.digest == Fixtures.sha256(content))
            #expect(result.reread == 0)
            #expect(result.peak > 0 && result.peak <= 768 << 10)
        }
    }

    @Test func `past the memory bound a span ahead is read back from the partial, and only that`() async throws {
        let content = pseudoRandomBytes(2 << 20, seed: 15)
        let half = 1 << 20
        // The second half comes first (a lagging first piece), 64 KiB at a time; two blocks of
        // 256 KiB fit in memory, and the spans fill them in order.
        let spans = stride(from: half, to: 2 << 20, by: 64 << 10).map { $0..<($0 + (64 << 10)) } + [0..<half]
        try await withTemporaryDirectory { directory in
            let result = try self.assemble(content, spans: spans, memoryBound: 512 << 10, in: directory)
            #expect(result.digest == Fixtures.sha256(content))
            #expect(result.reread == Int64(half - (512 << 10)))
            #expect(result.peak == 512 << 10)
        }
    }
}
