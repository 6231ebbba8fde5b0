import Foundation
import Synchronization
import Testing

@testable import PinFetch

/// When the hashing pipeline takes each kind of checkpoint, and that each one's state is the
/// digest of exactly the bytes before its offset.
struct HashingPipelineTests {
    /// The checkpoints a pipeline asked for, in order.
    final class Recorder: Sendable {
        let taken = Mutex<[(kind: CheckpointWriter.Kind, offset: Int64, state: [UInt8])]>([])

        var checkpoint: HashingPipeline.Checkpoint {
            { kind, offset, state in self.taken.withLock { $0.append((kind, offset, state)) } }
        }

        func offsets(_ kind: CheckpointWriter.Kind) -> [Int64] {
            self.taken.withLock { $0.filter { $0.kind == kind }.map(\.offset) }
        }
    }

    static func cadence(
        durable: (Int64, Double) = (64 << 20, 100),
        light: (Int64, Double) = (2 << 20, 100)
    ) -> HashingPipeline.Cadence {
        var options = FetchOptions()
        (options.durableCheckpointInterval, options.durableCheckpointPeriod) = durable
        (options.lightCheckpointInterval, options.lightCheckpointPeriod) = light
        return HashingPipeline.Cadence(options)
    }

    /// How often light checkpoints come depends on how soon the one before finishes (one of a
    /// kind at a time), so only what holds on a loaded machine is asserted here; the rule itself
    /// is ``CheckpointClock``'s, tested below.
    @Test func `checkpoints while bytes stream: one durable at its interval, each with the state at its offset`() {
        let block = pseudoRandomBytes(1 << 20, seed: 0x7069_7065)
        var content: [UInt8] = []
        for index in 0..<12 { content += block + [UInt8(index)] }
        let recorder = Recorder()
        let pipeline = HashingPipeline(
            digest: RunningDigest(algorithm: .sha256),
            offset: 0,
            bufferSize: 256 << 10,
            cadence: Self.cadence(durable: (8 << 20, 100)),
            checkpoint: recorder.checkpoint
        )
        for start in stride(from: 0, to: content.count, by: 64 << 10) {
            content[start..<min(content.count, start + (64 << 10))].withUnsafeBytes { pipeline.submit($0) }
        }
        #expect(pipeline.finish() == nil)
        let light = recorder.offsets(.light)
        let durable = recorder.offsets(.durable)
        #expect(durable.count == 1 && durable.allSatisfy { (8 << 20)..<((8 << 20) + (256 << 10)) ~= $0 }, "\(durable)")
        #expect(!light.isEmpty && light == light.sorted() && !light.contains(where: durable.contains), "\(light)")
        for (_, offset, state) in recorder.taken.withLock({ $0 }) {
            let digest = RunningDigest(algorithm: .sha256, restoring: state, offset: offset)
            #expect(digest.map { Pin.hex($0.finalize()) } == Fixtures.sha256(Array(content[..<Int(offset)])))
        }
    }

    @Test func `with no byte coming, a partly filled buffer is hashed and checkpointed, once`() async throws {
        let recorder = Recorder()
        let pipeline = HashingPipeline(
            digest: RunningDigest(algorithm: .sha256),
            offset: 1000,
            bufferSize: 256 << 10,
            cadence: Self.cadence(light: (2 << 20, 0.2)),
            checkpoint: recorder.checkpoint
        )
        pseudoRandomBytes(5000).withUnsafeBytes { pipeline.submit($0) }  // a partly filled buffer, then nothing
        try await Task.sleep(for: .milliseconds(700))
        #expect(recorder.offsets(.light) == [6000])  // nothing new after it: no second one
        #expect(recorder.offsets(.durable).isEmpty)
        #expect(pipeline.finish() == nil)
    }

    @Test func `a failed checkpoint is reported and no other is taken`() {
        let calls = Mutex(0)
        let pipeline = HashingPipeline(
            digest: RunningDigest(algorithm: .sha256),
            offset: 0,
            bufferSize: 64 << 10,
            cadence: Self.cadence(light: (64 << 10, 100)),
            checkpoint: { _, _, _ throws(PinFetchError) in
                calls.withLock { $0 += 1 }
                throw PinFetchError(.fileIO, "cannot write x.part.state: No space left on device")
            }
        )
        let content = pseudoRandomBytes(1 << 20)
        content.withUnsafeBytes { pipeline.submit($0) }
        #expect(pipeline.finish()?.code == .fileIO)
        #expect(calls.withLock { $0 } == 1)
    }

    @Test func `a light checkpoint comes due at its interval, its period, or when idle after its spacing`() {
        let start = Date(timeIntervalSince1970: 1000)
        let clock = CheckpointClock(interval: 2 << 20, period: 0.5, idleSpacing: 0.025, mark: (4 << 20, start))
        let soon = start.addingTimeInterval(0.01)
        let later = start.addingTimeInterval(0.03)
        #expect(!clock.isDue(at: 4 << 20, now: start.addingTimeInterval(9), idle: true))  // nothing new
        #expect(!clock.isDue(at: (6 << 20) - 1, now: soon, idle: false))
        #expect(clock.isDue(at: 6 << 20, now: soon, idle: false))  // the interval
        #expect(clock.isDue(at: (4 << 20) + 1, now: start.addingTimeInterval(0.5), idle: false))  // the period
        #expect(!clock.isDue(at: (4 << 20) + 1, now: later, idle: false))
        #expect(!clock.isDue(at: (4 << 20) + 1, now: soon, idle: true))  // idle, but too soon
        #expect(clock.isDue(at: (4 << 20) + 1, now: later, idle: true))
        let durable = CheckpointClock(interval: 64 << 20, period: 10, mark: (0, start))
        #expect(!durable.isDue(at: 1, now: start.addingTimeInterval(9), idle: true))  // no idle rule
        #expect(durable.isDue(at: 1, now: start.addingTimeInterval(10), idle: false))
    }
}
