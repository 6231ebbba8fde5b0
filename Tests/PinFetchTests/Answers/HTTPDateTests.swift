import Foundation
import Testing

@testable import PinFetch

/// HTTP-dates (RFC 9110 §5.6.7): the three forms a recipient must accept, and what is not one.
struct HTTPDateTests {
    /// 1994-11-06T08:49:37Z, the RFC's own example.
    static let example: Int64 = 784_111_777

    @Test(arguments: [
        "Sun, 06 Nov 1994 08:49:37 GMT",
        "Sunday, 06-Nov-94 08:49:37 GMT",
        "Sun Nov  6 08:49:37 1994",
        "Sun Nov 06 08:49:37 1994",
    ])
    func `the three RFC 9110 forms give the same instant`(text: String) {
        #expect(HTTPDate.parse(text) == Self.example)
    }

    @Test(arguments: [
        ("Thu, 01 Jan 1970 00:00:00 GMT", Int64(0)),
        ("Wed, 31 Dec 1969 23:59:59 GMT", -1),
        ("Thu, 29 Feb 2024 00:00:00 GMT", 1_709_164_800),
        ("Tue, 29 Feb 2000 12:00:00 GMT", 951_825_600),
        ("Thu, 01 Jan 2026 00:00:00 GMT", 1_767_225_600),
        ("Fri, 31 Dec 9999 23:59:59 GMT", 253_402_300_799),
        ("Thursday, 01-Jan-26 00:00:00 GMT", 1_767_225_600),
        ("Thu Feb 29 00:00:00 2024", 1_709_164_800),
    ])
    func `HTTP-dates convert to seconds since the epoch`(text: String, seconds: Int64) {
        #expect(HTTPDate.parse(text) == seconds)
    }

    @Test(arguments: [
        "2/29/24 11:29 AM",
        "",
        " ",
        "Mon, 32 Jan 2024 00:00:00 GMT",
        "Mon, 00 Jan 2024 00:00:00 GMT",
        "Fri, 30 Feb 2024 00:00:00 GMT",
        "Thu, 29 Feb 2023 00:00:00 GMT",
        "Thu, 29 Feb 1900 00:00:00 GMT",
        "Thu, 31 Apr 2024 00:00:00 GMT",
        "Thu, 01 Jan 1970 25:00:00 GMT",
        "Thu, 01 Jan 1970 24:00:00 GMT",
        "Thu, 01 Jan 1970 00:60:00 GMT",
        "Thu, 01 Jan 1970 00:00:61 GMT",
        "Thu, 01 Jan 1970 0:00:00 GMT",
        "Thu, 01 Jan 1970 00:00 GMT",
        "Sun, 06 Nov 1994 08:49:37 PST",
        "Sun, 06 Nov 1994 08:49:37 UTC",
        "Sun, 06 Nov 1994 08:49:37 +0000",
        "Sun, 06 Nov 1994 08:49:37",
        "Sun, 06 Foo 1994 08:49:37 GMT",
        "Sun, 6 Nov 1994 08:49:37 GMT",
        "Sun, 06 Nov 94 08:49:37 GMT",
        "Xyz, 06 Nov 1994 08:49:37 GMT",
        "Sunday, 06 Nov 1994 08:49:37 GMT",
        "Sun, 06-Nov-94 08:49:37 GMT",
        "Sunday, 06-Nov-1994 08:49:37 GMT",
        "Sunday, 06-Nov-94 08:49:37 PST",
        "Sunday, 06-Nov-+4 08:49:37 GMT",
        "Sunday, 6-Nov-94 08:49:37 GMT",
        "Sun Nov  6 08:49:37 94",
        "Sun Nov 106 08:49:37 1994",
        "Sun Nov  6 08:49:37 1994 GMT",
        "Sun, 06 Nov 1899 08:49:37 GMT",
        "Sun, 06 Nov 1994 08:49:37 GMT extra",
        "1994-11-06T08:49:37Z",
        "784111777",
    ])
    func `anything that is not an HTTP-date is nil`(text: String) {
        #expect(HTTPDate.parse(text) == nil)
    }

    @Test(arguments: [(94, 1994), (75, 2075), (76, 2076), (77, 1977), (26, 2026), (0, 2000)])
    func `an RFC 850 two-digit year more than 50 years ahead is in the past century`(yy: Int, year: Int) {
        let text = "Sunday, 01-Jan-\(yy < 10 ? "0" : "")\(yy) 00:00:00 GMT"
        let expected = HTTPDate.parse("Sun, 01 Jan \(year) 00:00:00 GMT")
        #expect(expected != nil)
        #expect(HTTPDate.parse(text, currentYear: 2026) == expected)
    }
}
