// libFuzzer target for Repr-Digest / Content-Digest (built by .ci/fuzz, not by SwiftPM).
@testable import PinFetchFuzzParsers

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDigestFields(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    for (algorithm, digest) in DigestFields.parse(text) {
        precondition(
            digest.count == algorithm.digestLength || digest == ResponseHead.contradiction,
            "a digest of the wrong length"
        )
    }
    return 0
}
