// libFuzzer target for WWW-Authenticate challenges and oci:// URLs (built by .ci/fuzz, not by SwiftPM).
import Foundation

@testable import PinFetchFuzzParsers

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzChallenge(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    for challenge in AuthenticationChallenge.parse(text) {
        precondition(!challenge.scheme.isEmpty && challenge.scheme == challenge.scheme.lowercased())
    }
    if let blob = try? OCILocation("oci://" + text) {
        precondition(blob.digestHex.utf8.count == 64 && !blob.repository.isEmpty)
        precondition((try? OCILocation(blob.text)) == blob)
    }
    return 0
}
