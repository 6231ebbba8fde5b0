// libFuzzer target for the URL parser, redirect resolution and URL redaction (built by
// .ci/fuzz, not by SwiftPM): a URL that passes is normalized once and for all, names the origin
// it is sent to, and never shows its password. The input is a URL; when it holds a line feed,
// also a base URL and a `Location` value. A byte 0x01 stands for U+0301 (a combining accent), so
// that one mutation joins a delimiter and the mark into one Swift `Character`.
@testable import PinFetchFuzzParsers

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzURL(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size).flatMap { $0 == 0x01 ? [0xCC, 0x81] : [$0] }
    let text = String(decoding: bytes, as: UTF8.self)
    let base = try! HTTPURL("https://user:secret@example.com:8443/dir/file.bin?q=1")
    checkRedaction(text)
    if let url = try? HTTPURL(text) {
        check(url)
        checkResolving(url, location: url.given)
    }
    checkResolving(base, location: text)
    let lines = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false)
    if lines.count == 2, let url = try? HTTPURL(String(lines[0])) {
        checkResolving(url, location: String(lines[1]))
    }
    return 0
}

/// What ``HTTPURL`` promises of a value it made.
private func check(_ url: HTTPURL) {
    let text = url.text
    require(url.scheme == "http" || url.scheme == "https", "scheme \(url.scheme)")
    require(text.utf8.starts(with: (url.scheme + "://").utf8), "text does not start with its scheme")
    require((1...65_535).contains(url.port), "port \(url.port)")
    require(url.origin == "\(url.scheme)://\(url.host):\(url.port)", "origin \(url.origin)")
    require(!url.host.isEmpty && url.host == url.host.lowercased(), "host \(url.host)")
    require(url.given == url.fragment.map { text + "#" + $0 } ?? text)
    require(!text.utf8.contains(UInt8(ascii: "#")), "a fragment left in the text: \(text)")
    // Nothing that cannot appear in a URL: controls, space, the unsafe ASCII and non-ASCII bytes,
    // and '%' only as the start of '%XX'. (An IPv6 literal keeps its brackets.)
    let bytes = Array(text.utf8)
    for (index, byte) in bytes.enumerated() {
        require(byte > 0x20 && byte < 0x7F, "byte \(byte) in \(text)")
        require(!Array(" \"<>\\^`{|}".utf8).contains(byte), "an unsafe character in \(text)")
        if byte == UInt8(ascii: "%") {
            require(
                index + 2 < bytes.count && isHexDigit(bytes[index + 1]) && isHexDigit(bytes[index + 2]),
                "a bare % in \(text)"
            )
        }
    }
    // Normalizing is idempotent: the text (and the text with the fragment) parse to this value.
    // (An `s3://` URL's text is its endpoint's URL: parsed again it names no object.)
    for (typed, given) in [(url.given, url), (text, url.withoutFragment)] {
        var expected = given
        expected.s3 = nil
        do {
            let again = try HTTPURL(typed)
            require(again == expected, "\(typed) parses to \(again.given) (host \(again.host), not \(url.host))")
        } catch {
            fatalError("the normalized \(typed) does not parse: \(error.message)")
        }
    }
    require(url.isSameOrigin(as: url.withoutFragment))

    // The path segments are the text's, split at '/', each percent-decoded where that works.
    let afterScheme = bytes[(url.scheme.utf8.count + 3)...]
    let authorityEnd = afterScheme.firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") } ?? bytes.endIndex
    let path = bytes[authorityEnd...].prefix { $0 != UInt8(ascii: "?") }
    let segments = url.pathSegments
    if path.isEmpty {
        require(segments.isEmpty, "segments \(segments) of an empty path")
    } else {
        let raw = path.dropFirst().split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        require(segments.count == raw.count, "\(segments.count) segments in \(text)")
        for (segment, written) in zip(segments, raw) where !written.contains(UInt8(ascii: "%")) {
            require(segment.utf8.elementsEqual(written), "segment \(segment) of \(text)")
        }
    }

    checkRedacted(url)
}

/// ``HTTPURL/redacted``: the user information's password, or a user name given alone, is `***`;
/// the rest of the authority is as in the wire text (an internationalized host as typed).
private func checkRedacted(_ url: HTTPURL) {
    if let object = url.s3 {  // shown as given: s3://BUCKET/KEY, which holds no secret
        require(url.redacted == object.text, "\(url.redacted) is not \(object.text)")
        return
    }
    let text = Array(url.wireText.utf8)
    let redacted = url.redacted
    let start = url.scheme.utf8.count + 3
    let authorityEnd = text[start...].firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") } ?? text.endIndex
    let authority = text[start..<authorityEnd]
    checkHiddenValues(redacted)
    guard let at = authority.lastIndex(of: UInt8(ascii: "@")) else {
        require(redacted.utf8.starts(with: text[..<authorityEnd]), "\(redacted) changed the authority")
        return
    }
    let userInformation = text[start..<at]
    let shown: [UInt8]
    var password: ArraySlice<UInt8> = []
    if let colon = userInformation.firstIndex(of: UInt8(ascii: ":")) {
        shown = Array(text[..<colon]) + Array(":***".utf8)
        password = text[(colon + 1)..<at]
    } else {
        shown = Array(text[..<start]) + Array("***".utf8)
    }
    require(
        redacted.utf8.starts(with: shown + text[at..<authorityEnd]),
        "\(redacted) does not hide the user information of the URL"
    )
    // And the password shows nowhere else, unless the URL holds it outside its user information.
    let elsewhere = String(decoding: shown + text[at...], as: UTF8.self)
    let secret = String(decoding: password, as: UTF8.self)
    if !secret.isEmpty && !elsewhere.contains(secret) {
        require(!redacted.contains(secret), "\(redacted) shows the password")
    }
}

/// In a redacted URL, every query or fragment parameter with a secret name has the value `***`:
/// the query after the first `?`, the fragment after the first `#`, parameters split on `&` and
/// `;`, the name ending at the first `=`.
private func checkHiddenValues(_ redacted: String) {
    let bytes = Array(redacted.utf8)
    let hash = bytes.firstIndex(of: UInt8(ascii: "#")) ?? bytes.endIndex
    var parts = [bytes[hash...].dropFirst()]
    if let question = bytes[..<hash].firstIndex(of: UInt8(ascii: "?")) { parts.append(bytes[(question + 1)..<hash]) }
    for part in parts {
        for parameter in part.split(whereSeparator: { $0 == UInt8(ascii: "&") || $0 == UInt8(ascii: ";") }) {
            guard let equals = parameter.firstIndex(of: UInt8(ascii: "=")),
                Redaction.isSecretName(String(decoding: parameter[..<equals], as: UTF8.self))
            else { continue }
            require(
                parameter[(equals + 1)...].elementsEqual("***".utf8),
                "\(String(decoding: parameter, as: UTF8.self)) shows in \(redacted)"
            )
        }
    }
}

/// ``Redaction`` on any text: secret parameters are hidden, and whatever is between `://` and the
/// last `@` of a possibly malformed URL.
private func checkRedaction(_ text: String) {
    checkHiddenValues(Redaction.url(text))
    let malformed = Redaction.malformedURL(text)
    if let slashes = malformed.firstRange(of: "://"), let at = malformed[slashes.upperBound...].lastIndex(of: "@") {
        require(malformed[slashes.upperBound..<at] == "***", "\(malformed) shows its user information")
    }
    _ = Redaction.text(text)
}

/// A redirect from `url` to `location` gives a valid URL without a fragment; a relative
/// reference (no scheme, no `//` authority) keeps the origin.
private func checkResolving(_ url: HTTPURL, location: String) {
    guard let next = url.resolving(location: location) else { return }
    check(next)
    require(next.fragment == nil, "a fragment kept from \(location)")
    let reference = location.utf8.prefix { $0 != UInt8(ascii: "#") }
    if !reference.starts(with: "//".utf8) && !hasScheme(reference) {
        require(
            next.isSameOrigin(as: url),
            "the relative \(location) leads from \(url.origin) to another origin, \(next.origin): \(next.text)"
        )
    }
    if let absolute = try? HTTPURL(location) {
        require(next == absolute.withoutFragment, "the absolute \(location) resolves to \(next.text)")
    }
}

/// RFC 3986 §3.1: a letter, then letters, digits, `+`, `-` or `.`, then `:`.
private func hasScheme(_ reference: Substring.UTF8View) -> Bool {
    guard let colon = reference.firstIndex(of: UInt8(ascii: ":")), let first = reference.first,
        isLetter(first)
    else { return false }
    return reference[..<colon].allSatisfy { isLetter($0) || (0x30...0x39).contains($0) || "+-.".utf8.contains($0) }
}

private func isLetter(_ byte: UInt8) -> Bool { (0x61...0x7A).contains(byte | 0x20) }

private func isHexDigit(_ byte: UInt8) -> Bool {
    (0x30...0x39).contains(byte) || (0x41...0x46).contains(byte) || (0x61...0x66).contains(byte)
}

extension HTTPURL {
    /// This URL without its fragment (the same value when it has none).
    fileprivate var withoutFragment: HTTPURL {
        guard self.fragment != nil else { return self }
        do { return try HTTPURL(self.text) } catch { fatalError("the text \(self.text) does not parse") }
    }
}

/// `precondition`, but its message shows in an optimized build too.
private func require(_ condition: Bool, _ message: @autoclosure () -> String = "", line: UInt = #line) {
    if !condition { fatalError(message(), line: line) }
}
