/// Output names that stay inside a directory, and file names taken from `Content-Disposition`.
///
/// Output names from a manifest or `Content-Disposition` stay inside `-P DIR`
/// (<doc:Architecture#Many-files>). Both functions are lexical: pure string work on Unicode scalars and UTF-8 bytes, with
/// no file system access and no C import, so they can be fuzzed on their own. A symbolic link
/// inside the directory that points elsewhere is not seen here.
///
/// Paths are split on the byte `/`, never on `Character`s: `"../\u{301}x"` is one grapheme
/// `/\u{301}` to `String`, but two segments (`..` and `\u{301}x`) to the kernel.
package enum SafeFileName {
    /// The longest path segment in bytes of UTF-8: `NAME_MAX` (255) on Linux.
    package static let maximumSegmentBytes = 255
    /// The longest file name in bytes of UTF-8: 255 less the 15 of `.part.state.tmp`, the longest
    /// sidecar suffix (``Sidecars``), so every sidecar of the file fits in `NAME_MAX` too.
    package static let maximumNameBytes = SafeFileName.maximumSegmentBytes - ".part.state.tmp".utf8.count

    /// Why a file name of `bytes` bytes is refused.
    package static func tooLong(_ bytes: Int) -> String {
        "is \(bytes) bytes long: with the sidecars pinfetch keeps beside it (NAME.part.state.tmp) it "
            + "would pass the file system's 255-byte limit; use a name of at most \(Self.maximumNameBytes) bytes"
    }

    /// Resolves an output path from a manifest inside `directory`.
    ///
    /// Relative paths with subfolders are allowed (`dists/a.tar.gz` → `<directory>/dists/a.tar.gz`);
    /// `.` segments and repeated `/` are dropped (`./a//b` → `a/b`). Nothing is created or checked
    /// on disk.
    ///
    /// - Parameters:
    ///   - output: The name as written in the manifest.
    ///   - directory: The `-P DIR` directory; an empty string means `.`.
    /// - Returns: `directory` joined with the cleaned relative path by one `/`.
    /// - Throws: ``PinFetchError/Code/usage`` (exit 2) naming the value (at most 100 characters,
    ///   control characters escaped) when it is empty, `.` or `..`, absolute, has a `..` segment,
    ///   a backslash, a control character (C0, DEL or C1) or a bidirectional override, ends in
    ///   `/`, has a segment longer than 255 bytes, or a file name (the last segment) longer than
    ///   ``maximumNameBytes``.
    package static func resolve(_ output: String, in directory: String) throws(PinFetchError) -> String {
        func refuse(_ reason: String) -> PinFetchError {
            PinFetchError(.usage, "output name \(Self.quoted(output)) \(reason)")
        }
        let bytes = Array(output.utf8)
        guard !bytes.isEmpty else { throw refuse("is empty") }
        if output.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            throw refuse("contains a control character")
        }
        if output.unicodeScalars.contains(where: Self.isBidirectionalControl) {
            throw refuse("contains a bidirectional override (it would show the name other than it is)")
        }
        if bytes.contains(UInt8(ascii: "\\")) { throw refuse("contains a backslash") }
        if bytes.first == UInt8(ascii: "/") {
            throw refuse("is an absolute path; output names stay inside the directory")
        }
        var segments: [ArraySlice<UInt8>] = []
        for segment in bytes.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true) {
            if segment.elementsEqual(".".utf8) { continue }
            if segment.elementsEqual("..".utf8) {
                throw refuse("has a '..' segment; output names stay inside the directory")
            }
            if segment.count > Self.maximumSegmentBytes {
                throw refuse("has a segment longer than \(Self.maximumSegmentBytes) bytes")
            }
            segments.append(segment)
        }
        guard !segments.isEmpty else { throw refuse("names no file") }
        if let name = segments.last, name.count > Self.maximumNameBytes {
            throw refuse(Self.tooLong(name.count))
        }
        if bytes.last == UInt8(ascii: "/") { throw refuse("names a directory, not a file") }
        let relative = String(decoding: Array(segments.joined(separator: [UInt8(ascii: "/")])), as: UTF8.self)
        let base = directory.isEmpty ? "." : directory
        return base.utf8.last == UInt8(ascii: "/") ? base + relative : base + "/" + relative
    }

    /// A safe base name from a `Content-Disposition` header value (RFC 6266 §4).
    ///
    /// Prefers `filename*` (RFC 8187 §3.2: `charset'[language]'percent-encoded`, charset `UTF-8` or
    /// `ISO-8859-1`, case-insensitive) over `filename` (an RFC 9110 §5.6.4 quoted-string, or a
    /// token); a `filename*` that does not decode (bad percent-encoding, invalid UTF-8, another
    /// charset) or leaves no usable name falls back to `filename`. Parameter names are
    /// case-insensitive and the first occurrence counts. In a quoted-string only `\"` and `\\` are
    /// unescaped; other backslashes stay, so `"..\..\win.ini"` (what many servers send, RFC 6266
    /// Appendix D) is still cut at its `\` separators. An unterminated quoted-string ends parsing.
    ///
    /// The name is reduced to a base name: the part after the last `/` or `\`, without control
    /// characters (Unicode category Cc) or bidirectional overrides and isolates
    /// (U+202A–U+202E, U+2066–U+2069), without leading dots and spaces, trimmed of white space.
    ///
    /// - Parameter headerValue: The field value, e.g. `attachment; filename="a.tar.gz"`.
    /// - Returns: The base name, or `nil` when none is given or nothing usable remains (empty,
    ///   or longer than 255 bytes of UTF-8); the caller then falls back to the URL's name.
    package static func fromContentDisposition(_ headerValue: String) -> String? {
        let parameters = Self.dispositionParameters(Array(headerValue.unicodeScalars))
        if let extended = parameters["filename*"], let decoded = Self.decodeExtendedValue(extended),
            let name = Self.baseName(decoded)
        {
            return name
        }
        if let plain = parameters["filename"] { return Self.baseName(plain) }
        return nil
    }

    /// `'value'` for a one-line error message: at most 100 Unicode scalars (then `…`), control,
    /// line-separator and bidirectional control characters as `\xNN` or `\u{NNNN}`, and a
    /// backslash as `\\`.
    package static func quoted(_ value: some StringProtocol) -> String {
        var out = "'"
        var count = 0
        for scalar in value.unicodeScalars {
            if count == 100 {
                out += "…"
                break
            }
            count += 1
            let category = scalar.properties.generalCategory
            if scalar.value < 0x80, category == .control {
                let hex = String(scalar.value, radix: 16, uppercase: true)
                out += "\\x" + (hex.count < 2 ? "0" + hex : hex)
            } else if category == .control || category == .lineSeparator || category == .paragraphSeparator
                || Self.isBidirectionalControl(scalar)
            {
                out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            } else if scalar == "\\" {
                out += "\\\\"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out + "'"
    }

    // MARK: - Content-Disposition

    /// The parameters of a disposition, names lower-cased, values unquoted; first occurrence wins.
    /// A first segment with `=` in it is taken as a parameter (a header without a disposition type).
    private static func dispositionParameters(_ scalars: [Unicode.Scalar]) -> [String: String] {
        var parameters: [String: String] = [:]
        var index = 0
        let count = scalars.count
        func isSpace(_ scalar: Unicode.Scalar) -> Bool { scalar == " " || scalar == "\t" }
        let firstSemicolon = scalars.firstIndex(of: ";") ?? count
        if !scalars[..<firstSemicolon].contains("=") { index = firstSemicolon }  // skip the type
        while index < count {
            while index < count, isSpace(scalars[index]) || scalars[index] == ";" { index += 1 }
            guard index < count else { break }
            var name = String.UnicodeScalarView()
            while index < count, scalars[index] != "=", scalars[index] != ";" {
                name.append(scalars[index])
                index += 1
            }
            guard index < count, scalars[index] == "=" else { continue }  // a parameter without a value
            index += 1
            while index < count, isSpace(scalars[index]) { index += 1 }
            var value = String.UnicodeScalarView()
            if index < count, scalars[index] == "\"" {
                index += 1
                var closed = false
                while index < count {
                    let scalar = scalars[index]
                    if scalar == "\"" {
                        closed = true
                        index += 1
                        break
                    }
                    if scalar == "\\", index + 1 < count, scalars[index + 1] == "\"" || scalars[index + 1] == "\\" {
                        value.append(scalars[index + 1])
                        index += 2
                        continue
                    }
                    value.append(scalar)
                    index += 1
                }
                guard closed else { break }  // malformed: the rest of the header is not trusted
                while index < count, scalars[index] != ";" { index += 1 }  // junk after the quote
            } else {
                while index < count, scalars[index] != ";" {
                    value.append(scalars[index])
                    index += 1
                }
                while let last = value.last, isSpace(last) { value.removeLast() }
            }
            let key = String(name).trimmingSpaces().lowercased()
            if !key.isEmpty, parameters[key] == nil { parameters[key] = String(value) }
        }
        return parameters
    }

    /// Decodes an RFC 8187 ext-value (`UTF-8''na%C3%AFve`, `iso-8859-1'en'%A3`); `nil` for another
    /// charset, a missing `'`, a `%` not followed by two hex digits, or bytes that are not UTF-8.
    /// Surrounding double quotes (not allowed, but sent) are removed first.
    private static func decodeExtendedValue(_ value: String) -> String? {
        var scalars = Array(value.unicodeScalars)
        if scalars.count >= 2, scalars.first == "\"", scalars.last == "\"" {
            scalars = Array(scalars.dropFirst().dropLast())
        }
        guard let firstQuote = scalars.firstIndex(of: "'"),
            let secondQuote = scalars[(firstQuote + 1)...].firstIndex(of: "'")
        else { return nil }
        let charset = String(String.UnicodeScalarView(scalars[..<firstQuote])).lowercased()
        let isUTF8 = charset == "utf-8"
        guard isUTF8 || charset == "iso-8859-1" else { return nil }
        var bytes: [UInt8] = []
        var index = secondQuote + 1
        while index < scalars.count {
            let scalar = scalars[index]
            if scalar == "%" {
                guard index + 2 < scalars.count, let high = Self.hexValue(scalars[index + 1]),
                    let low = Self.hexValue(scalars[index + 2])
                else { return nil }
                bytes.append(high << 4 | low)
                index += 3
                continue
            }
            if isUTF8 {
                bytes.append(contentsOf: String(scalar).utf8)
            } else {
                guard scalar.value <= 0xFF else { return nil }
                bytes.append(UInt8(scalar.value))
            }
            index += 1
        }
        if isUTF8 { return String(validating: bytes, as: UTF8.self) }
        var text = String.UnicodeScalarView()
        for byte in bytes { text.append(Unicode.Scalar(byte)) }  // ISO-8859-1 is the first 256 code points
        return String(text)
    }

    private static func hexValue(_ scalar: Unicode.Scalar) -> UInt8? {
        switch scalar {
        case "0"..."9": UInt8(scalar.value - 0x30)
        case "a"..."f": UInt8(scalar.value - 0x61 + 10)
        case "A"..."F": UInt8(scalar.value - 0x41 + 10)
        default: nil
        }
    }

    /// Bidirectional embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069) and the
    /// directional marks (U+200E, U+200F, U+061C): a name holding one is displayed other than
    /// it is (`exe.txt` shown for `txt.exe`).
    package static func isBidirectionalControl(_ scalar: Unicode.Scalar) -> Bool {
        (0x202A...0x202E).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value)
            || scalar.value == 0x200E || scalar.value == 0x200F || scalar.value == 0x061C
    }

    /// The safe base name of `name`, or `nil` (see ``fromContentDisposition(_:)``).
    private static func baseName(_ name: String) -> String? {
        var scalars = Array(name.unicodeScalars).filter { scalar in
            scalar.properties.generalCategory != .control && !Self.isBidirectionalControl(scalar)
        }
        if let separator = scalars.lastIndex(where: { $0 == "/" || $0 == "\\" }) {
            scalars = Array(scalars[(separator + 1)...])
        }
        let lead = scalars.prefix(while: { $0 == "." || $0.properties.isWhitespace }).count
        scalars.removeFirst(lead)
        while let last = scalars.last, last.properties.isWhitespace { scalars.removeLast() }
        let result = String(String.UnicodeScalarView(scalars))
        guard !result.isEmpty, result.utf8.count <= Self.maximumNameBytes else { return nil }
        return result
    }
}

extension String {
    /// The string without leading and trailing spaces and tabs.
    fileprivate func trimmingSpaces() -> String {
        let scalars = self.unicodeScalars
        guard let first = scalars.firstIndex(where: { $0 != " " && $0 != "\t" }) else { return "" }
        let last = scalars.lastIndex(where: { $0 != " " && $0 != "\t" })!
        return String(scalars[first...last])
    }
}
