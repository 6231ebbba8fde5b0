/// Punycode (RFC 3492): the ASCII form an internationalized label takes after `xn--` (IDNA,
/// RFC 5891). Only decoding is needed here: a host name written `xn--bcher-kva.example` is
/// compared with a name typed `bücher.example` in their Unicode forms (``ProxyBypassList``).
///
/// Pure Swift, table-tested with RFC 3492 §7.1's samples.
enum Punycode {
    private static let base = 36
    private static let tMin = 1
    private static let tMax = 26
    private static let skew = 38
    private static let damp = 700
    private static let initialBias = 72
    private static let initialN = 128

    /// `name` with each `xn--` label (any case) decoded, the others as they are; a label that is
    /// not valid Punycode stays as written.
    static func unicodeName(_ name: String) -> String {
        name.split(separator: ".", omittingEmptySubsequences: false).map { label -> String in
            guard label.count > 4, label.prefix(4).lowercased() == "xn--" else { return String(label) }
            return Self.decode(label.dropFirst(4)) ?? String(label)
        }.joined(separator: ".")
    }

    /// The Unicode text of a Punycode string (what follows `xn--`), or `nil` when it is not valid
    /// Punycode (RFC 3492 §6.2): a byte that is not a letter, digit or `-`, a digit sequence cut
    /// off, an overflow, or a code point that is not a Unicode scalar.
    static func decode(_ encoded: Substring) -> String? {
        let input = Array(encoded.utf8)
        guard input.allSatisfy({ $0 < 0x80 }) else { return nil }
        var output: [UInt32] = []
        var position = 0
        if let delimiter = input.lastIndex(of: UInt8(ascii: "-")) {
            output = input[..<delimiter].map { UInt32($0) }
            position = delimiter + 1
        }
        var n = Self.initialN
        var i = 0
        var bias = Self.initialBias
        while position < input.count {
            let old = i
            var weight = 1
            var k = Self.base
            while true {
                guard position < input.count, let digit = Self.digit(input[position]) else { return nil }
                position += 1
                let (step, overflowStep) = digit.multipliedReportingOverflow(by: weight)
                let (next, overflowSum) = i.addingReportingOverflow(step)
                guard !overflowStep, !overflowSum, next < Int(Int32.max) else { return nil }
                i = next
                let t = k <= bias ? Self.tMin : (k >= bias + Self.tMax ? Self.tMax : k - bias)
                if digit < t { break }
                weight *= Self.base - t
                guard weight < Int(Int32.max) else { return nil }
                k += Self.base
            }
            let count = output.count + 1
            bias = Self.adapt(i - old, count: count, first: old == 0)
            n += i / count
            i %= count
            guard n < 0x11_0000 else { return nil }
            output.insert(UInt32(n), at: i)
            i += 1
        }
        var text = ""
        for value in output {
            guard let scalar = Unicode.Scalar(value) else { return nil }
            text.unicodeScalars.append(scalar)
        }
        return text
    }

    /// The value of a Punycode digit: `a`–`z` (or `A`–`Z`) are 0–25, `0`–`9` are 26–35.
    private static func digit(_ byte: UInt8) -> Int? {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"): Int(byte - UInt8(ascii: "a"))
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): Int(byte - UInt8(ascii: "A"))
        case UInt8(ascii: "0")...UInt8(ascii: "9"): Int(byte - UInt8(ascii: "0")) + 26
        default: nil
        }
    }

    /// The bias adaptation of RFC 3492 §6.1.
    private static func adapt(_ delta: Int, count: Int, first: Bool) -> Int {
        var delta = first ? delta / Self.damp : delta / 2
        delta += delta / count
        var k = 0
        while delta > ((Self.base - Self.tMin) * Self.tMax) / 2 {
            delta /= Self.base - Self.tMin
            k += Self.base
        }
        return k + ((Self.base - Self.tMin + 1) * delta) / (delta + Self.skew)
    }
}
