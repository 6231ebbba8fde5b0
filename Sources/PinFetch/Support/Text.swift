/// Small text functions the library and the command line share, so that neither needs
/// Foundation's string extensions (FoundationEssentials only, no ICU).
package enum Text {
    /// `value` as people write a number of seconds: `30`, `0.5`, `2.25` (no grouping, no
    /// locale).
    package static func number(_ value: Double) -> String {
        if value.isFinite, value == value.rounded(), abs(value) < 1e15 { return "\(Int64(value))" }
        return "\(value)"
    }

    /// `value` rounded to `places` decimals (0...9), as `%.Nf` writes it: `fixed(1.25, 1)` is
    /// `1.3`, `fixed(2, 1)` is `2.0`.
    package static func fixed(_ value: Double, places: Int) -> String {
        guard value.isFinite else { return "\(value)" }
        var scale: Int64 = 1
        for _ in 0..<min(max(places, 0), 9) { scale *= 10 }
        let scaled = (abs(value) * Double(scale)).rounded()
        guard scaled < 9e18 else { return "\(value)" }
        let units = Int64(scaled)
        let sign = value < 0 && units != 0 ? "-" : ""
        guard places > 0 else { return sign + "\(units)" }
        let fraction = String(units % scale)
        return sign + "\(units / scale)." + String(repeating: "0", count: places - fraction.count) + fraction
    }

    /// `text` with each `%XX` decoded and the bytes read as UTF-8; `nil` for a `%` not followed
    /// by two hex digits, or bytes that are not UTF-8 (as Foundation's `removingPercentEncoding`).
    package static func percentDecoded(_ text: some StringProtocol) -> String? {
        var bytes: [UInt8] = []
        var input = Array(text.utf8)[...]
        while let byte = input.popFirst() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard input.count >= 2, let high = Self.hexValue(input.removeFirst()),
                let low = Self.hexValue(input.removeFirst())
            else { return nil }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// The last component of `path`: what follows its last `/`, trailing slashes ignored
    /// (`a/b/` gives `b`, `/` gives `/`), as `NSString.lastPathComponent`.
    package static func lastPathComponent(_ path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        guard trimmed != "/", let slash = trimmed.lastIndex(of: "/") else { return String(trimmed) }
        return String(trimmed[trimmed.index(after: slash)...])
    }

    /// `directory` and `name` joined by one `/`.
    package static func path(_ directory: String, _ name: String) -> String {
        directory.isEmpty ? name : directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }
}

extension StringProtocol {
    /// Drops leading and trailing SP, HTAB, CR and LF (note `"\r\n"` is one `Character`).
    package func trimmingWhitespace() -> SubSequence {
        func isSpace(_ c: Character) -> Bool { c == " " || c == "\t" || c == "\r" || c == "\n" || c == "\r\n" }
        var text = self[...]
        while let c = text.first, isSpace(c) { text = text.dropFirst() }
        while let c = text.last, isSpace(c) { text = text.dropLast() }
        return text
    }
}

extension StringProtocol {
    /// The index of the first `ascii` character, found among the text's bytes, so that a
    /// combining mark after it does not hide it: `"#\u{301}"` is one `Character`, unequal to
    /// `"#"`, and `firstIndex(of: "#")` misses it. The index is on a scalar boundary.
    package func firstIndex(ofASCII ascii: Unicode.Scalar) -> Index? {
        precondition(ascii.isASCII)
        return self.utf8.firstIndex(of: UInt8(ascii.value))
    }

    /// The index of the last `ascii` character, found as ``firstIndex(ofASCII:)`` finds the first.
    package func lastIndex(ofASCII ascii: Unicode.Scalar) -> Index? {
        precondition(ascii.isASCII)
        var last: Index?
        var index = self.utf8.startIndex
        while let found = self.utf8[index...].firstIndex(of: UInt8(ascii.value)) {
            last = found
            index = self.utf8.index(after: found)
        }
        return last
    }

    /// The index just after the ASCII character at `index`: a combining mark after it starts
    /// the rest, where `index(after:)` would step over the whole `Character`.
    package func index(afterASCII index: Index) -> Index { self.utf8.index(after: index) }
}

extension Text {
    /// `value` with every byte outside RFC 3986's unreserved set percent-encoded.
    static func percentEncoded(_ value: String) -> String {
        var encoded = ""
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = String(byte, radix: 16, uppercase: true)
                encoded += (hex.count < 2 ? "%0" : "%") + hex
            }
        }
        return encoded
    }
}
