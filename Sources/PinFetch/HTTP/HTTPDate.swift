import FoundationEssentials
@preconcurrency import Glibc

/// Parses HTTP-dates (RFC 9110 §5.6.7) into seconds since 1970-01-01T00:00:00Z.
///
/// Accepts the three forms a recipient must: IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`),
/// obsolete RFC 850 (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime (`Sun Nov  6 08:49:37 1994`).
/// Anything else (`2/29/24 11:29 AM`, empty, out-of-range fields) is `nil`. Pure Swift, no C
/// imports, so the fuzz target can compile it on its own.
enum HTTPDate {
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
    private static let shortDays = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
    private static let longDays = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]

    /// Seconds since the Unix epoch, or `nil` when `text` is not an HTTP-date.
    /// - Parameter currentYear: The year two-digit RFC 850 years are read against.
    static func parse(_ text: some StringProtocol, currentYear: Int = HTTPDate.currentYear) -> Int64? {
        let fields = text.split(separator: " ", omittingEmptySubsequences: true).map { $0.lowercased() }
        guard let first = fields.first, fields.count >= 4, fields.count <= 6 else { return nil }
        if first.hasSuffix(",") {
            let day = String(first.dropLast())
            if Self.shortDays.contains(day), fields.count == 6, fields[5] == "gmt" {
                // IMF-fixdate: day-name "," SP 2DIGIT SP month SP 4DIGIT SP time SP "GMT"
                guard fields[1].count == 2, fields[3].count == 4 else { return nil }
                return Self.make(day: fields[1], month: fields[2], year: fields[3], time: fields[4])
            }
            if Self.longDays.contains(day), fields.count == 4, fields[3] == "gmt" {
                // rfc850-date: day-name-l "," SP 2DIGIT "-" month "-" 2DIGIT SP time SP "GMT"
                let parts = fields[1].split(separator: "-", omittingEmptySubsequences: false)
                guard parts.count == 3, parts[0].count == 2, parts[2].count == 2, let yy = Self.number(parts[2]) else {
                    return nil
                }
                // RFC 9110 §5.6.7: a two-digit year that appears more than 50 years in the future
                // is the most recent past year with the same last two digits.
                var year = currentYear / 100 * 100 + yy
                if year > currentYear + 50 { year -= 100 }
                return Self.make(day: String(parts[0]), month: String(parts[1]), year: String(year), time: fields[2])
            }
            return nil
        }
        // asctime-date: day-name SP month SP ( 2DIGIT / ( SP DIGIT ) ) SP time SP 4DIGIT
        guard Self.shortDays.contains(first), fields.count == 5, fields[4].count == 4 else { return nil }
        guard fields[2].count <= 2 else { return nil }
        return Self.make(day: fields[2], month: fields[1], year: fields[4], time: fields[3])
    }

    private static func make(day: String, month: String, year: String, time: String) -> Int64? {
        guard let month = Self.months.firstIndex(of: month).map({ $0 + 1 }),
            let day = Self.number(day), let year = Self.number(year), (1...31).contains(day), year >= 1900
        else { return nil }
        let clock = time.split(separator: ":", omittingEmptySubsequences: false)
        guard clock.count == 3, clock.allSatisfy({ $0.count == 2 }),
            let hour = Self.number(clock[0]), let minute = Self.number(clock[1]), let second = Self.number(clock[2]),
            hour < 24, minute < 60, second <= 60
        else { return nil }
        guard day <= Self.daysIn(month: month, year: year) else { return nil }
        let days = Self.daysFromCivil(year: year, month: month, day: day)
        return days * 86_400 + Int64(hour * 3600 + minute * 60 + second)
    }

    /// This machine's current UTC year.
    static var currentYear: Int {
        Int(Date().timeIntervalSince1970 / 86_400 / 365.2425) + 1970
    }

    private static func number(_ text: some StringProtocol) -> Int? {
        guard !text.isEmpty, text.count <= 4, text.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int(text)
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 in the proleptic Gregorian calendar (H. Hinnant's algorithm).
    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let m = Int64(month)
        let dayOfYear = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + Int64(day) - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
