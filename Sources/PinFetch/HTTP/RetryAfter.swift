import FoundationEssentials
@preconcurrency import Glibc

/// `Retry-After` (RFC 9110 §10.2.3): delay-seconds or an HTTP-date.
enum RetryAfter {
    /// Seconds to wait, or `nil` when `value` is neither form. An HTTP-date is taken relative
    /// to the response's `Date` when given (clock skew), else to this machine's clock.
    static func seconds(_ value: String, date: String?, now: Date = Date()) -> Double? {
        let text = value.trimmingWhitespace()
        if !text.isEmpty, text.count <= 10, text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) {
            return Double(text)
        }
        guard let when = HTTPDate.parse(text) else { return nil }
        let reference = date.flatMap { HTTPDate.parse($0) } ?? Int64(now.timeIntervalSince1970)
        return Double(max(0, when - reference))
    }
}
