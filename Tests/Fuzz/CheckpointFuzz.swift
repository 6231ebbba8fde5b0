// libFuzzer target for the checkpoint record (built by .ci/fuzz, not by SwiftPM).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCheckpoint(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let checkpoint = Checkpoint(decoding: bytes) else { return 0 }
    precondition(checkpoint.offset >= 0 && checkpoint.hashState.count == checkpoint.hashStateSize)
    if let total = checkpoint.totalLength { precondition(total >= checkpoint.offset) }
    precondition(Checkpoint(decoding: checkpoint.encoded()) == checkpoint, "a record does not round-trip")
    return 0
}
