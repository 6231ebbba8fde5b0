// libFuzzer target for the HTTP-date parser (built by .ci/fuzz, not by SwiftPM).
@testable import PinFetchFuzzParsers

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTPDate(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    if let seconds = HTTPDate.parse(text) {
        precondition(seconds >= -2_208_988_800, "before 1900")  // years below 1900 are rejected
    }
    return 0
}
