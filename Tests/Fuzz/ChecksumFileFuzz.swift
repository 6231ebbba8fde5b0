// libFuzzer target for the checksum-file parser and its lookups (built by .ci/fuzz, not by
// SwiftPM): every entry is a well-formed digest from a checksum line, a lookup only ever answers
// as documented, and the line forms, encodings and line ends it documents read alike. A byte 0x01
// stands for U+0301 (a combining accent), so that one mutation joins a `/` and the mark into one
// Swift `Character`.
@testable import PinFetchFuzzParsers

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzChecksumFile(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size).flatMap { $0 == 0x01 ? [0xCC, 0x81] : [$0] }
    _ = ChecksumFile.isClearSigned(bytes)
    let parsed = try? ChecksumFile(parsing: bytes)
    checkEncodings(of: bytes, parsed: parsed)
    guard let file = parsed else { return 0 }
    check(file, lineCount: lineCount(ChecksumFile.decodedText(bytes)))
    if !hasByteOrderMark(bytes) { checkSourceLines(of: file, in: bytes) }
    checkLookups(file, names: lookupNames(file, bytes))
    checkRoundTrip(file)
    return 0
}

/// What ``ChecksumFile/init(parsing:)`` promises of a file it accepts.
private func check(_ file: ChecksumFile, lineCount: Int) {
    require(!file.entries.isEmpty || file.bareDigest != nil || !file.unsupportedEntries.isEmpty, "no checksum line")
    if let bare = file.bareDigest {
        require(file.entries.isEmpty, "a bare digest beside entries")
        require(bare.digest.count == bare.algorithm.digestLength)
    }
    var previous = 0
    for entry in file.entries {
        require(entry.pin.digest.count == entry.pin.algorithm.digestLength, "a digest of the wrong length")
        require(!entry.name.isEmpty, "an entry without a name, line \(entry.line)")
        require(entry.line > previous && entry.line <= lineCount, "line \(entry.line) after \(previous)")
        previous = entry.line
    }
    for line in file.undecodableLines { require(line >= 1 && line <= lineCount, "undecodable line \(line)") }
    for entry in file.unsupportedEntries { require(entry.line >= 1 && entry.line <= lineCount) }
}

/// The number of lines of decoded text, as the parser counts them (a final line feed ends the last).
private func lineCount(_ text: [UInt8]) -> Int {
    let count = text.split(separator: 0x0A, omittingEmptySubsequences: false).count
    return text.last == 0x0A ? count - 1 : count
}

private func hasByteOrderMark(_ bytes: [UInt8]) -> Bool {
    bytes.starts(with: [0xEF, 0xBB, 0xBF]) || bytes.starts(with: [0xFF, 0xFE]) || bytes.starts(with: [0xFE, 0xFF])
}

/// No entry comes from a blank line, a `#` comment or a line that starts with white space.
private func checkSourceLines(of file: ChecksumFile, in bytes: [UInt8]) {
    let lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false)
    for entry in file.entries {
        let line = lines[entry.line - 1]
        require(!line.isEmpty, "an entry from an empty line \(entry.line)")
        require(![0x20, 0x09, UInt8(ascii: "#")].contains(line.first!), "an entry from line \(entry.line)")
    }
}

/// The same text with a UTF-8 byte order mark, as UTF-16 LE and BE with theirs, and with CRLF
/// line ends parses to the same file.
private func checkEncodings(of bytes: [UInt8], parsed: ChecksumFile?) {
    guard !hasByteOrderMark(bytes), let text = String(validating: bytes, as: UTF8.self) else { return }
    let units = Array(text.utf16)
    var variants: [(String, [UInt8])] = [
        ("a UTF-8 byte order mark", [0xEF, 0xBB, 0xBF] + bytes),
        ("UTF-16 LE", [0xFF, 0xFE] + units.flatMap { [UInt8(truncatingIfNeeded: $0), UInt8($0 >> 8)] }),
        ("UTF-16 BE", [0xFE, 0xFF] + units.flatMap { [UInt8($0 >> 8), UInt8(truncatingIfNeeded: $0)] }),
    ]
    if !bytes.contains(0x0D) {
        variants.append(("CRLF", bytes.flatMap { $0 == 0x0A ? [0x0D, 0x0A] : [$0] }))
    }
    for (name, variant) in variants where variant.count <= ChecksumFile.maximumSize {
        let other = try? ChecksumFile(parsing: variant)
        require(same(parsed, other), "with \(name) the file reads otherwise")
    }
}

private func same(_ a: ChecksumFile?, _ b: ChecksumFile?) -> Bool {
    guard let a, let b else { return a == nil && b == nil }
    return a.entries == b.entries && a.bareDigest == b.bareDigest && a.unsupportedEntries == b.unsupportedEntries
        && a.undecodableLines == b.undecodableLines
}

/// Names to look up: each entry's, with and without `./`, its last component, and the input's
/// first line.
private func lookupNames(_ file: ChecksumFile, _ bytes: [UInt8]) -> [[UInt8]] {
    var names = file.entries.prefix(16).flatMap { entry in
        let name = Array(entry.name.utf8)
        return [name, withoutDotSlash(name), lastComponent(name)]
    }
    names.append(Array(bytes.prefix { $0 != 0x0A }))
    names.append(Array("tool".utf8))
    return names
}

/// Both lookups answer as their documentation says, computed here on the names' bytes.
private func checkLookups(_ file: ChecksumFile, names: [[UInt8]]) {
    for name in names {
        let text = String(decoding: name, as: UTF8.self)
        guard Array(text.utf8) == name else { continue }
        let expected = expectedPin(file.entries, bare: file.bareDigest, for: name)
        require(
            (try? file.pin(for: text)) == expected,
            "pin(for: \(text)) is not \(expected?.description ?? "an error")"
        )
        let segments = name.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).map(Array.init)
        for path in [segments, [Array("pub".utf8)] + segments, [lastComponent(name)]] {
            let urlPath = path.map { String(decoding: $0, as: UTF8.self) }
            let fileName = urlPath.last ?? text
            let expected = expectedPin(file, forURLPath: path, fileName: Array(fileName.utf8))
            require(
                (try? file.pin(forURLPath: urlPath, fileName: fileName)) == expected,
                "pin(forURLPath: \(urlPath), fileName: \(fileName)) is not \(expected?.description ?? "an error")"
            )
        }
    }
}

/// ``ChecksumFile/pin(for:)``: the entries whose name, or name without leading `./`, is `name`;
/// else those whose last component after `/` or `\` is; else the bare digest. `nil` for none, or
/// for two digests of one algorithm.
private func expectedPin(_ entries: [ChecksumFile.Entry], bare: Pin?, for name: [UInt8]) -> Pin? {
    let exact = entries.filter { Array($0.name.utf8) == name || withoutDotSlash(Array($0.name.utf8)) == name }
    let matches = exact.isEmpty ? entries.filter { lastComponent(Array($0.name.utf8)) == name } : exact
    return matches.isEmpty ? bare : strongest(matches)
}

/// ``ChecksumFile/pin(forURLPath:fileName:)``: the entries whose name (without leading `./`),
/// split at `/`, is the longest suffix of the URL's path; else ``expectedPin(_:bare:for:)`` of
/// `fileName` among the entries whose last component is not the URL's file name.
private func expectedPin(_ file: ChecksumFile, forURLPath path: [[UInt8]], fileName: [UInt8]) -> Pin? {
    var best: [ChecksumFile.Entry] = []
    var bestLength = 0
    for entry in file.entries {
        let segments = withoutDotSlash(Array(entry.name.utf8)).split(
            separator: UInt8(ascii: "/"),
            omittingEmptySubsequences: false
        )
        guard !segments.contains(where: \.isEmpty), segments.count <= path.count,
            zip(segments.reversed(), path.reversed()).allSatisfy({ $0.elementsEqual($1) })
        else { continue }
        if segments.count > bestLength {
            (best, bestLength) = ([entry], segments.count)
        } else if segments.count == bestLength {
            best.append(entry)
        }
    }
    if !best.isEmpty { return strongest(best) }
    guard let urlName = path.last, !urlName.isEmpty else {
        return expectedPin(file.entries, bare: file.bareDigest, for: fileName)
    }
    let others = file.entries.filter { lastComponent(Array($0.name.utf8)) != urlName }
    return expectedPin(others, bare: file.bareDigest, for: fileName)
}

/// The digest of the strongest algorithm, or `nil` when two of one algorithm differ.
private func strongest(_ entries: [ChecksumFile.Entry]) -> Pin? {
    let conflict = entries.contains { entry in
        entries.contains { $0.pin.algorithm == entry.pin.algorithm && $0.pin != entry.pin }
    }
    guard !conflict else { return nil }
    return entries.max { $0.pin.algorithm.digestLength < $1.pin.algorithm.digestLength }?.pin
}

private func withoutDotSlash(_ name: [UInt8]) -> [UInt8] {
    var name = name[...]
    while name.starts(with: "./".utf8) { name = name.dropFirst(2) }
    return Array(name)
}

/// What follows the last `/` or `\`.
private func lastComponent(_ name: [UInt8]) -> [UInt8] {
    guard let separator = name.lastIndex(where: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "\\") }) else {
        return name
    }
    return Array(name[(separator + 1)...])
}

/// The entries written back as `sha256sum` writes them, GNU and `--tag` style (names with a
/// backslash, CR or LF escaped), read back as the same names and digests.
private func checkRoundTrip(_ file: ChecksumFile) {
    guard !file.entries.isEmpty, !(file.entries.count == 1 && file.entries[0].name == "-") else { return }
    for tagged in [false, true] {
        var text: [UInt8] = []
        for entry in file.entries {
            let (escaped, name) = escaped(entry.name)
            if escaped { text.append(UInt8(ascii: "\\")) }
            let tag = entry.pin.algorithm.rawValue.uppercased()
            // MD5 and SHA-1 are taken only tagged (spelled out), so they are written so both times.
            let asTagged = tagged || entry.pin.algorithm.isWeak
            text +=
                Array((asTagged ? "\(tag) (\(name)) = \(entry.pin.hex)" : "\(entry.pin.hex)  \(name)").utf8) + [0x0A]
        }
        guard text.count <= ChecksumFile.maximumSize else { return }
        do {
            let again = try ChecksumFile(parsing: text)
            require(
                again.entries.map(\.name) == file.entries.map(\.name),
                "names do not round-trip (tagged: \(tagged))"
            )
            require(again.entries.map(\.pin) == file.entries.map(\.pin), "digests do not round-trip")
            require(again.entries.map(\.line) == Array(1...file.entries.count))
        } catch {
            fatalError("the entries written back do not parse (tagged: \(tagged)): \(error.message)")
        }
    }
}

/// `name` with `\`, LF and CR escaped as coreutils does, and whether any was.
private func escaped(_ name: String) -> (Bool, String) {
    guard name.utf8.contains(where: { $0 == UInt8(ascii: "\\") || $0 == 0x0A || $0 == 0x0D }) else {
        return (false, name)
    }
    var out: [UInt8] = []
    for byte in name.utf8 {
        switch byte {
        case UInt8(ascii: "\\"): out += Array("\\\\".utf8)
        case 0x0A: out += Array("\\n".utf8)
        case 0x0D: out += Array("\\r".utf8)
        default: out.append(byte)
        }
    }
    return (true, String(decoding: out, as: UTF8.self))
}

/// `precondition`, but its message shows in an optimized build too.
private func require(_ condition: Bool, _ message: @autoclosure () -> String = "", line: UInt = #line) {
    if !condition { fatalError(message(), line: line) }
}
