// libFuzzer target for the Content-Range parser (built by .ci/fuzz, not by SwiftPM).
@testable import PinFetchFuzzParsers

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzContentRange(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    guard let range = ContentRange(text) else { return 0 }
    if let first = range.first, let last = range.last {
        precondition(first >= 0 && first <= last, "range out of order")
        if let total = range.completeLength { precondition(last < total, "range past the complete length") }
        precondition(range.count == last - first + 1)
    } else {
        precondition(range.first == nil && range.last == nil && range.completeLength != nil)
    }
    return 0
}
