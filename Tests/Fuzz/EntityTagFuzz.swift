// libFuzzer target for ETag and validator handling (built by .ci/fuzz, not by SwiftPM).
@testable import PinFetchFuzzParsers

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzEntityTag(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let parts = text.split(separator: "\n", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
    let validator = Validator(
        entityTag: parts.first,
        lastModified: parts.count > 1 ? parts[1] : nil,
        date: parts.count > 2 ? parts[2] : nil
    )
    if let tag = validator.entityTag {
        precondition(Validator.isWellFormedEntityTag(tag))
        if validator.hasStrongEntityTag { precondition(validator.ifRangeValue == tag) }
    }
    if let value = validator.ifRangeValue { precondition(!value.hasPrefix("W/"), "a weak validator in If-Range") }
    _ = validator.matches(validator)
    return 0
}
