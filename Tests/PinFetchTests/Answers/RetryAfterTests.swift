import Foundation
import Testing

@testable import PinFetch

/// `Retry-After` (RFC 9110 §10.2.3).
struct RetryAfterTests {
    static let date = "Sun, 06 Nov 1994 08:49:37 GMT"
    static let now = Date(timeIntervalSince1970: 784_111_777)

    @Test(arguments: [("120", 120.0), ("0", 0), (" 5 ", 5), ("3600", 3600), ("0000000007", 7)])
    func `delay-seconds are taken as they are`(value: String, seconds: Double) {
        #expect(RetryAfter.seconds(value, date: nil, now: Self.now) == seconds)
        #expect(RetryAfter.seconds(value, date: Self.date, now: Self.now) == seconds)
    }

    @Test(arguments: [
        ("Sun, 06 Nov 1994 08:50:37 GMT", 60.0),
        ("Sunday, 06-Nov-94 08:49:47 GMT", 10),
        ("Sun Nov  6 09:49:37 1994", 3600),
        ("Sun, 06 Nov 1994 08:49:37 GMT", 0),
        ("Sun, 06 Nov 1994 08:00:00 GMT", 0),
    ])
    func `an HTTP-date is relative to the response's Date`(value: String, seconds: Double) {
        // The machine's clock is a day off: the Date header decides.
        let skewed = Self.now.addingTimeInterval(86_400)
        #expect(RetryAfter.seconds(value, date: Self.date, now: skewed) == seconds)
    }

    @Test func `an HTTP-date without a usable Date header is relative to now`() {
        let value = "Sun, 06 Nov 1994 08:51:37 GMT"
        #expect(RetryAfter.seconds(value, date: nil, now: Self.now) == 120)
        #expect(RetryAfter.seconds(value, date: "garbage", now: Self.now) == 120)
    }

    @Test(arguments: ["", "-1", "1.5", "soon", "+5", "5s", "2/29/24 11:29 AM"])
    func `anything else is nil`(value: String) {
        #expect(RetryAfter.seconds(value, date: Self.date, now: Self.now) == nil)
    }
}
