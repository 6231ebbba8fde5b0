import PinFetch

/// One option as the command line gave it: how it was spelled (`-j` or `--jobs`: messages name
/// it so) and its value (empty for a flag). Its methods read the value as the option takes it.
struct OptionUse: Sendable {
    /// The spelling given, without any `=value`.
    let spelling: String
    /// The value given, or the empty string for a flag.
    let value: String

    /// The value, unless it is empty.
    /// - Parameter needs: What the message says the option needs (`"a path"`).
    func nonEmpty(needs: String) throws(ArgumentError) -> String {
        guard !self.value.isEmpty else { throw .emptyValue(option: self.spelling, needs: needs) }
        return self.value
    }

    /// The value as a whole number in `range`.
    /// - Parameter expected: What the message says the option takes (`"a whole number from 1 to 64"`).
    func wholeNumber(in range: ClosedRange<Int>, expected: String) throws(ArgumentError) -> Int {
        guard let number = Int(self.value), range.contains(number) else {
            throw .badValue(option: self.spelling, expected: expected, given: self.value)
        }
        return number
    }

    /// The value as a number of seconds (``Arguments/seconds(_:for:positive:)``).
    func seconds(positive: Bool = false) throws(ArgumentError) -> Double {
        try Arguments.seconds(self.value, for: self.spelling, positive: positive)
    }

    /// The value as a number of bytes (``Arguments/size(_:for:)``).
    func size() throws(ArgumentError) -> Int64 { try Arguments.size(self.value, for: self.spelling) }

    /// The value as the library reads it (a pin, a template, a shard); its refusal, as
    /// ``ArgumentError/malformed(_:)``.
    func read<Value>(_ read: (String) throws(PinFetchError) -> Value) throws(ArgumentError) -> Value {
        do throws(PinFetchError) {
            return try read(self.value)
        } catch {
            throw ArgumentError(error)
        }
    }
}
