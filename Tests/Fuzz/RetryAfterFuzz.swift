// libFuzzer target for Retry-After (built by .ci/fuzz, not by SwiftPM).
import Foundation

@testable import PinFetchFuzzParsers

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRetryAfter(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let parts = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
    if let seconds = RetryAfter.seconds(
        parts[0],
        date: parts.count > 1 ? parts[1] : nil,
        now: Date(timeIntervalSince1970: 0)
    ) {
        precondition(seconds >= 0 && seconds.isFinite)
    }
    return 0
}
