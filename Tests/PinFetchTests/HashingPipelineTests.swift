import Foundation
import Synchronization
import Testing

@_spi(CLI) @testable import PinFetch

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

    @Test func `light checkpoints every 2 MiB, a durable one at its interval, each with the state at its offset`() {
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
        #expect(durable == [8 << 20])
        #expect(light.count >= 4, "\(light)")  // one may be skipped while the one before is in flight
        #expect(light == light.sorted() && !light.contains(8 << 20))
        #expect(zip([0] + light, light).allSatisfy { $1 - $0 <= 4 << 20 }, "\(light)")
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
}
