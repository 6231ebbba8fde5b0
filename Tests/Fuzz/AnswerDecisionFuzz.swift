// libFuzzer target for the answer decision (built by .ci/fuzz, not by SwiftPM). The first bytes
// choose the context (offset asked for, a known validator and total, a pin); the rest are the
// response head's lines. Whatever the head says, a decision never writes outside what was asked.
@testable import PinFetchFuzzParsers

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAnswerDecision(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size >= 3 else { return 0 }
    let bytes = UnsafeBufferPointer(start: data, count: size)
    let flags = bytes[0]
    let offset = Int64(bytes[1]) * 100
    var context = AnswerContext(pinned: flags & 1 != 0)
    if flags & 2 != 0, offset > 0 { context.requestedOffset = offset }
    if flags & 4 != 0 { context.validator = Validator(entityTag: #""v1""#, lastModified: nil) }
    if flags & 8 != 0 { context.totalLength = Int64(bytes[2]) * 1000 }
    if flags & 16 != 0, context.requestedOffset == nil {
        context.condition = Validator(entityTag: #""v1""#, lastModified: nil)
    }
    let text = String(decoding: bytes[3...], as: UTF8.self)
    var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
    guard let statusLine = lines.first, var head = ResponseHead(statusLine: "HTTP/1.1 " + statusLine) else { return 0 }
    lines.removeFirst()
    for line in lines { head.add(line: line) }

    switch AnswerDecision.decide(head, context) {
    case .append(let skip, let end, let total):
        // Only a ranged request is appended to, from at most the offset, and never past the total.
        let asked = context.requestedOffset ?? -1
        precondition(asked > 0, "append without Range")
        precondition(skip >= 0 && skip <= asked, "skip outside the range")
        if let end { precondition(end > asked, "append that ends before the offset") }
        if let end, let total { precondition(end <= total, "append past the total") }
        if let known = context.totalLength, let total { precondition(known == total, "append to another length") }
        precondition(!head.hasContentCoding, "append of a coded body")
    case .replace(let end, let total):
        if let end, let total { precondition(end <= total, "replace past the total") }
        precondition(head.status == 200 || head.status == 206, "replace from a \(head.status)")
    case .replaceExpecting(let length):
        precondition(head.status == 200 && length == context.totalLength, "replaceExpecting without a known total")
    case .finalize:
        precondition(head.status == 416 && context.requestedOffset != nil, "finalize without a 416 to a range")
    case .unchanged:
        precondition(head.status == 304 && context.condition != nil, "unchanged without a 304 to a condition")
    case .restart:
        // A request without Range is asked again only without its condition.
        precondition(context.requestedOffset != nil || context.condition != nil, "restart of a request without Range")
    case .retry, .fail:
        break
    }
    return 0
}
