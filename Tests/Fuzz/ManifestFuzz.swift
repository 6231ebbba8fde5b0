// libFuzzer target for the manifest parser, a checksum file under base URLs as a manifest, and
// `--shard` (built by .ci/fuzz, not by SwiftPM). The input is read as a manifest, as a checksum
// file (whose first line may be a base URL) and, by its start, as a `--shard` argument. A byte
// 0x01 stands for U+0301 (a combining accent), so that one mutation joins a delimiter and the mark
// into one Swift `Character`.
@testable import PinFetchFuzzParsers

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzManifest(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size).flatMap { $0 == 0x01 ? [0xCC, 0x81] : [$0] }
    let text = String(decoding: bytes, as: UTF8.self)
    let manifest = try? Manifest(parsing: text)
    if let manifest {
        check(manifest)
        checkShards(manifest)
    }
    checkLineEnds(text, parsed: manifest)

    if let checksumFile = try? ChecksumFile(parsing: bytes) {
        let firstLine = String(decoding: bytes.prefix { $0 != 0x0A && $0 != 0x0D }, as: UTF8.self)
        for bases in [["https://example.com/rel/"], [firstLine, "http://mirror.example/pub?sig=x"]] {
            guard let fromFile = try? Manifest(checksumFile: checksumFile, baseURLs: bases) else { continue }
            check(fromFile, from: checksumFile, bases: bases)
            checkShards(fromFile)
        }
    }

    let argument = String(decoding: bytes.prefix(24), as: UTF8.self)
    if let (k, n) = try? parseShard(argument) {
        require(n >= 1 && k >= 0 && k < n, "--shard \(argument) gave \(k)/\(n)")
        require(argument.utf8.allSatisfy { (0x30...0x39).contains($0) || $0 == UInt8(ascii: "/") })
        let again = try? parseShard("\(k)/\(n)")
        require(again?.k == k && again?.n == n, "\(k)/\(n) does not parse back")
    }
    return 0
}

/// What ``Manifest/init(parsing:)`` promises: each line is one entry of one or more `http`/`https`,
/// `s3` or `oci` mirrors, an optional well-formed pin and an output name that is neither a URL, a comment nor a
/// checksum.
private func check(_ manifest: Manifest) {
    var previous = 0
    for entry in manifest.entries {
        require(!entry.mirrors.isEmpty, "an entry without a mirror on line \(entry.line)")
        for mirror in entry.mirrors {
            require(isHTTPURL(mirror), "mirror \(mirror) on line \(entry.line)")
            require(
                !mirror.utf8.contains(where: { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A }),
                "white space in \(mirror)"
            )
        }
        require(entry.line > previous, "line \(entry.line) after \(previous)")
        previous = entry.line
        if let pin = entry.pin {
            require(pin.digest.count == pin.algorithm.digestLength, "a digest of the wrong length")
        }
        if let output = entry.output {
            require(!output.isEmpty && !output.hasPrefix("#"), "output \(output) on line \(entry.line)")
            require(!isHTTPURL(output), "a URL as output name on line \(entry.line)")
            require(
                !output.utf8.contains(where: { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A }),
                "white space in \(output)"
            )
            require((try? Pin(parsing: output)) == nil, "a checksum \(output) taken for the output name")
        }
    }
}

/// `http://` or `https://` (scheme in any case) and more.
private func isHTTPURL(_ text: String) -> Bool {
    let lower = String(decoding: text.utf8.prefix(8).map { (0x41...0x5A).contains($0) ? $0 | 0x20 : $0 }, as: UTF8.self)
    return (lower.hasPrefix("http://") && text.utf8.count > 7) || (lower.hasPrefix("https://") && text.utf8.count > 8)
        || (lower.hasPrefix("s3://") && text.utf8.count > 5) || (lower.hasPrefix("oci://") && text.utf8.count > 6)
}

/// The same manifest with CRLF line ends, a note after each line, or a byte order mark, reads
/// the same (or fails the same way).
private func checkLineEnds(_ text: String, parsed: Manifest?) {
    guard !text.utf8.contains(0x0D), !text.utf8.starts(with: [0xEF, 0xBB, 0xBF]) else { return }
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
    for variant in [
        lines.joined(separator: "\r\n"), lines.map { $0 + " # note" }.joined(separator: "\r\n"), "\u{FEFF}" + text,
    ] {
        let other = try? Manifest(parsing: variant)
        require(other?.entries == parsed?.entries, "entries change with CRLF, a comment or a BOM")
        require(other?.hashedMirrors == parsed?.hashedMirrors, "hashed mirrors change with CRLF, a comment or a BOM")
    }
}

/// Shards 0..<n of a manifest hold each entry once, in order: entry i is in shard i % n.
private func checkShards(_ manifest: Manifest) {
    for n in [1, 2, 3, 7, manifest.entries.count + 1] {
        let shards = (0..<n).map { manifest.shard($0, of: n) }
        require(shards.map(\.entries.count).reduce(0, +) == manifest.entries.count, "shards of \(n) lose entries")
        var merged: [Manifest.Entry] = []
        for index in manifest.entries.indices {
            let shard = shards[index % n].entries
            merged.append(shard[index / n])
        }
        require(merged == manifest.entries, "shards of \(n) are not in manifest order")
        require(shards.allSatisfy { $0.hashedMirrors == manifest.hashedMirrors }, "a shard drops the hashed mirrors")
    }
}

/// What ``Manifest/init(checksumFile:baseURLs:)`` promises: each name once, relative, in file
/// order, pinned to its digest (the SHA-512 one when it has both), fetched from every base in
/// order, and saved under its name; no name is the directory of another.
private func check(_ manifest: Manifest, from file: ChecksumFile, bases: [String]) {
    require(!manifest.entries.isEmpty, "a manifest without entries from a checksum file")
    var seen = Set<[UInt8]>()
    var lastLine = 0
    for entry in manifest.entries {
        guard let name = entry.output, let pin = entry.pin else { fatalError("an entry without output or pin") }
        require(seen.insert(Array(name.utf8)).inserted, "\(name) twice")
        require(entry.line > lastLine, "entries out of file order")
        lastLine = entry.line
        let segments = name.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        require(
            !segments.contains { $0.isEmpty || $0.elementsEqual(".".utf8) || $0.elementsEqual("..".utf8) },
            "name \(name) is not a relative path"
        )
        require(!name.utf8.starts(with: "./".utf8), "name \(name) keeps its ./")
        require((try? file.pin(for: name)) == pin, "\(name) is pinned to \(pin), not to its digest in the file")
        require(entry.mirrors.count == bases.count, "\(entry.mirrors.count) mirrors for \(bases.count) bases")
        for (mirror, base) in zip(entry.mirrors, bases) {
            let question = base.utf8.firstIndex(of: UInt8(ascii: "?")) ?? base.utf8.endIndex
            let path = Array(base.utf8[..<question])
            let query = Array(base.utf8[question...])
            let prefix = path.last == UInt8(ascii: "/") ? path : path + [UInt8(ascii: "/")]
            let bytes = Array(mirror.utf8)
            require(bytes.starts(with: prefix) && bytes.count >= prefix.count + query.count, "\(mirror) from \(base)")
            require(bytes.suffix(query.count).elementsEqual(query), "\(mirror) loses the query of \(base)")
            let encoded = bytes[prefix.count..<(bytes.count - query.count)]
            require(isEncodedPath(encoded), "\(mirror) holds a byte a path cannot")
            let decoded = Text.percentDecoded(String(decoding: encoded, as: UTF8.self))
            require(decoded?.utf8.elementsEqual(name.utf8) == true, "\(mirror) names another file")
        }
    }
    for entry in manifest.entries {
        var prefix = Substring(entry.output!)
        while let slash = prefix.utf8.lastIndex(of: UInt8(ascii: "/")) {
            prefix = prefix[..<slash]
            require(!seen.contains(Array(prefix.utf8)), "\(prefix) is a file and the directory of \(entry.output!)")
        }
    }
}

/// RFC 3986 `pchar`s, `/` and `%XX` only.
private func isEncodedPath(_ bytes: ArraySlice<UInt8>) -> Bool {
    let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:@/".utf8)
    var index = bytes.startIndex
    while index < bytes.endIndex {
        if bytes[index] == UInt8(ascii: "%") {
            guard index + 2 < bytes.endIndex, isHexDigit(bytes[index + 1]), isHexDigit(bytes[index + 2]) else {
                return false
            }
            index += 3
        } else {
            guard allowed.contains(bytes[index]) else { return false }
            index += 1
        }
    }
    return true
}

private func isHexDigit(_ byte: UInt8) -> Bool {
    (0x30...0x39).contains(byte) || (0x41...0x46).contains(byte) || (0x61...0x66).contains(byte)
}

/// `precondition`, but its message shows in an optimized build too.
private func require(_ condition: Bool, _ message: @autoclosure () -> String = "", line: UInt = #line) {
    if !condition { fatalError(message(), line: line) }
}
