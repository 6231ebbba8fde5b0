import Foundation
import Testing

@testable import PinFetch

/// `Content-Range` (RFC 9110 §14.4): ranges, unsatisfied ranges and 64-bit lengths.
struct ContentRangeTests {
    struct Valid: Sendable, CustomTestStringConvertible {
        var value: String
        var first: Int64?
        var last: Int64?
        var completeLength: Int64?
        var testDescription: String { "'\(self.value)'" }
    }

    static let valid = [
        Valid(value: "bytes 0-0/1", first: 0, last: 0, completeLength: 1),
        Valid(value: "bytes 397312-1048575/1048576", first: 397_312, last: 1_048_575, completeLength: 1_048_576),
        Valid(value: "bytes 0-99/*", first: 0, last: 99, completeLength: nil),
        Valid(value: "BYTES 5-9/10", first: 5, last: 9, completeLength: 10),
        Valid(value: " bytes 1-2/3 ", first: 1, last: 2, completeLength: 3),
        Valid(value: "bytes */1048576", first: nil, last: nil, completeLength: 1_048_576),
        Valid(value: "bytes */0", first: nil, last: nil, completeLength: 0),
        Valid(
            value: "bytes 4294967296-8589934591/8589934592",
            first: 4_294_967_296,
            last: 8_589_934_591,
            completeLength: 8_589_934_592
        ),
        Valid(
            value: "bytes 0-4294967296/4294967297",
            first: 0,
            last: 4_294_967_296,
            completeLength: 4_294_967_297
        ),
        Valid(
            value: "bytes 999999999999999997-999999999999999998/999999999999999999",
            first: 999_999_999_999_999_997,
            last: 999_999_999_999_999_998,
            completeLength: 999_999_999_999_999_999
        ),
    ]

    @Test(arguments: Self.valid)
    func `valid Content-Range values parse`(valid: Valid) throws {
        let range = try #require(ContentRange(valid.value))
        #expect(range.first == valid.first)
        #expect(range.last == valid.last)
        #expect(range.completeLength == valid.completeLength)
        if let first = valid.first, let last = valid.last {
            #expect(range.count == last - first + 1)
        } else {
            #expect(range.count == nil)
        }
    }

    @Test(arguments: [
        "",
        "bytes",
        "bytes ",
        "bytes 5-3/10",
        "bytes 0-10/10",
        "bytes 0-0/0",
        "bytes 10-10/10",
        "0-1/2",
        "items 0-1/2",
        "bytes=0-1/2",
        "bytes\t0-1/2",
        "bytes -1-5/10",
        "bytes 0--5/10",
        "bytes 0-5/-10",
        "bytes +1-5/10",
        "bytes 0-1/+2",
        "bytes 0-1",
        "bytes 0-/10",
        "bytes -5/10",
        "bytes 1-2-3/10",
        "bytes 0-1/2/3",
        "bytes 0 - 1/2",
        "bytes 0-1 /2",
        "bytes 0-1/ 2",
        "bytes 0-1/2 3",
        "bytes 0-1/2x",
        "bytes 0x0-0x1/0x2",
        "bytes */*",
        "bytes *",
        "bytes */",
        "bytes 0-9/1000000000000000000",  // 19 digits
        "bytes 0-9223372036854775806/9223372036854775807",
        "bytes 0-1/99999999999999999999999",
        "bytes 0-1/\u{0662}",  // ARABIC-INDIC DIGIT TWO
    ])
    func `malformed Content-Range values are rejected`(value: String) {
        #expect(ContentRange(value) == nil)
    }
}
