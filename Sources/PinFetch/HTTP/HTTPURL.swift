import FoundationEssentials
@preconcurrency import Glibc

/// One absolute `http` or `https` URL, built and validated once at the boundary (an argument, an
/// input file, a `Location` header), so later code never parses URL text again.
///
/// Normalizing percent-encodes, as UTF-8 `%XX` with upper-case hex, what cannot appear in a URL
/// (RFC 3986 §2), as curl, wget and browsers do: space, `"`, `<`, `>`, `\`, `^`, `` ` ``, `{`, `|`,
/// `}` and every non-ASCII character; in the user information, path and query also `[` and `]`
/// (an IPv6 host literal such as `[::1]` keeps them); and a `%` that does not start `%XX`, which
/// becomes `%25`. Existing `%XX` escapes are kept as typed, so nothing is encoded twice. The
/// scheme is lower-cased; the host, port and user information are otherwise kept as typed.
/// The fragment is split off into ``fragment``: it is never sent (RFC 9110 §4.2.4).
///
/// Two values are equal when their ``text`` and ``fragment`` are; compare origins with
/// `(scheme, host, port)`.
package struct HTTPURL: Hashable, Sendable, CustomStringConvertible {
    /// The normalized absolute URL that requests use, without the fragment.
    package let text: String
    /// What followed the first `#`, as typed (not decoded), or `nil` when there was no `#`.
    package let fragment: String?
    /// `http` or `https`, lower-cased.
    package let scheme: String
    /// The host, lower-cased and percent-encoded as in ``text``; an IPv6 literal keeps its
    /// brackets (`[::1]`), as in the `Host` header.
    package let host: String
    /// The port, 1...65535: the one in the URL, else 80 for `http` and 443 for `https`.
    package let port: Int
    /// ``text`` as handed to libcurl: an internationalized host name (`bücher.example`, kept
    /// percent-encoded in ``text``) goes as UTF-8, which libcurl turns into its IDNA form
    /// (`xn--bcher-kva.example`, RFC 5891) for DNS, TLS and `Host`, as curl does. A host whose
    /// decoded bytes would hold anything but letters, digits, `-`, `.` and non-ASCII stays
    /// encoded (libcurl refuses it): a `%2F` or `%40` never becomes a delimiter on the wire.
    /// libidn2 reads the name in the process's `LC_CTYPE`: it must be a UTF-8 one (the
    /// `pinfetch` command sets `C.UTF-8`).
    package let wireText: String
    /// The object this URL reaches when it was given as `s3://BUCKET/KEY` (its requests are
    /// signed, ``S3CredentialChain``); `nil` for an `http`/`https` URL.
    package var s3: S3Location? = nil
    /// The registry blob or manifest this URL reaches when it was given as `oci://…@sha256:HEX`
    /// or `oci://…:TAG` (a digest is its pin; its requests carry the registry's token); `nil`
    /// otherwise.
    package var oci: OCILocation? = nil

    package var description: String { self.text }

    /// ``text`` with its ``fragment``: what was given, normalized.
    package var given: String { self.fragment.map { self.text + "#" + $0 } ?? self.text }

    /// The longest URL taken, in bytes (8 KiB, as many servers' request-line limit).
    static let maximumLength = 8192

    /// The URL of a registry's blob or manifest, shown (``redacted``) in its `oci://` form.
    /// - Throws: ``PinFetchError/Code/usage`` for a registry host no URL takes.
    package init(registry location: OCILocation) throws(PinFetchError) {
        self = try HTTPURL(location.url)
        self.oci = location
    }

    /// Validates and normalizes a URL typed by a user.
    ///
    /// - Parameter text: An absolute `http` or `https` URL, e.g. `https://example.com/my file.bin#x`.
    /// - Throws: ``PinFetchError`` with ``PinFetchError/Code/usage`` (exit 2) for a URL longer
    ///   than ``maximumLength`` bytes (its start shown, escaped), a control
    ///   character (U+0000–U+001F, U+007F–U+009F, shown escaped), white space at either end, a
    ///   scheme other than `http`/`https`, no host, a host with a character no host name has, a
    ///   bracketed host that is no IPv6 address (RFC 3986 §3.2.2, RFC 6874 zones allowed), a host
    ///   beginning with a combining mark or a format character, a port outside 1...65535, or a
    ///   result Foundation cannot parse ("malformed URL").
    package init(_ text: String) throws(PinFetchError) {
        if S3Location.names(text) {
            self = try Self.objectStore(text, S3Configuration.process)
            return
        }
        if OCILocation.names(text) {
            self = try HTTPURL(registry: try OCILocation(text))
            return
        }
        // What messages show: secrets as `***`, control characters escaped, at most 200 characters.
        let shown = String(
            Redaction.malformedURL(String(text.unicodeScalars.prefix(4096))).unicodeScalars.map(Self.escaped)
                .joined().prefix(200)
        )
        guard text.utf8.count <= Self.maximumLength else {
            throw PinFetchError(.usage, "URL is longer than 8 KiB (\(text.utf8.count) bytes): '\(shown.prefix(100))…'")
        }
        guard !text.unicodeScalars.contains(where: Self.isControl) else {
            throw PinFetchError(.usage, "URL has a control character: '\(shown)'")
        }
        if let first = text.first, let last = text.last, first.isWhitespace || last.isWhitespace {
            throw PinFetchError(.usage, "URL begins or ends with white space: '\(shown)'")
        }
        let malformed = PinFetchError(.usage, "malformed URL '\(shown)'")
        let hash = text.firstIndex(ofASCII: "#")
        let target = text[..<(hash ?? text.endIndex)]
        guard let colon = Self.schemeEnd(target) else {
            // `example.com/file`: a host name without its scheme, as a browser's address bar takes it.
            let host = target.prefix { $0 != "/" && $0 != "?" }
            if !target.contains("://"), host.contains(".") || host.hasPrefix("localhost"), !host.hasPrefix(".") {
                throw PinFetchError(.usage, "malformed URL '\(shown)': no scheme (did you mean 'https://\(shown)'?)")
            }
            throw malformed
        }
        let scheme = target[..<colon].lowercased()
        guard scheme == "http" || scheme == "https" else {
            // `example.com:8080/file`: a host and port, not a scheme.
            let afterColon = target[target.index(afterASCII: colon)...]
            if scheme.contains(".") || scheme == "localhost", afterColon.first?.isASCII == true,
                afterColon.first?.isNumber == true
            {
                throw PinFetchError(.usage, "malformed URL '\(shown)': no scheme (did you mean 'https://\(shown)'?)")
            }
            throw PinFetchError(.usage, "unsupported URL scheme '\(scheme)' (use http or https)")
        }
        let noHost = PinFetchError(.usage, "URL has no host: '\(shown)'")
        let hierarchy = target[target.index(afterASCII: colon)...]
        guard hierarchy.hasPrefix("//") else { throw noHost }
        let afterSlashes = hierarchy.dropFirst(2)
        let authorityEnd =
            afterSlashes.utf8.firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") }
            ?? afterSlashes.endIndex
        let authority = afterSlashes[..<authorityEnd]
        let at = authority.lastIndex(ofASCII: "@")  // "u:p@q@h": the last "@" ends the user information
        let hostAndPort = at.map { authority[authority.index(afterASCII: $0)...] } ?? authority
        let isLiteral = hostAndPort.hasPrefix("[")
        let hostEnd: Substring.Index
        if isLiteral {
            guard let close = hostAndPort.firstIndex(ofASCII: "]") else { throw malformed }
            hostEnd = hostAndPort.index(afterASCII: close)
        } else {
            hostEnd = hostAndPort.firstIndex(ofASCII: ":") ?? hostAndPort.endIndex
        }
        let rawHost = hostAndPort[..<hostEnd]
        let portPart = hostAndPort[hostEnd...]
        guard !rawHost.isEmpty else { throw noHost }
        guard portPart.isEmpty || portPart.first == ":" else { throw malformed }
        guard isLiteral || !rawHost.utf8.contains(where: { Self.isUnsafe($0) || $0 == 0x5B || $0 == 0x5D }) else {
            throw PinFetchError(.usage, "URL host has a character no host name has: '\(shown)'")
        }
        // A label cannot begin with a combining mark or a format character (IDNA, RFC 5891
        // §4.2.3.2): such a host is a delimiter's mark cut off ("@\u{301}h"), never a name.
        if let first = rawHost.unicodeScalars.first, Self.isMarkOrFormat(first) {
            throw PinFetchError(
                .usage,
                "URL host begins with a combining mark or an invisible format character: '\(shown)'"
            )
        }
        guard !isLiteral || Self.isIPv6Literal(rawHost.utf8.dropFirst().dropLast()) else {
            throw PinFetchError(.usage, "URL host is not an IPv6 address in brackets: '\(shown)'")
        }
        let portText = portPart.dropFirst()
        var port = scheme == "https" ? 443 : 80
        if !portText.isEmpty {  // "http://h:/" is allowed: an empty port is the default (RFC 3986 §3.2.3)
            guard portText.allSatisfy({ ("0"..."9").contains($0) }), let number = Int(portText),
                (1...65_535).contains(number)
            else {
                // Not the port's text: it may be part of a password holding an unencoded '/'.
                throw PinFetchError(.usage, "URL port is not a number in 1...65535: '\(shown)'")
            }
            port = number
        }
        let host = isLiteral ? String(rawHost) : Self.encoded(rawHost, brackets: false)
        var normalized = scheme + "://"
        if let at { normalized += Self.encoded(authority[..<at], brackets: true, at: true) + "@" }
        normalized += host + portPart + Self.encoded(afterSlashes[authorityEnd...], brackets: true)
        guard let components = URLComponents(string: normalized), components.host?.isEmpty == false,
            URL(string: normalized) != nil
        else { throw malformed }
        self.text = normalized
        self.wireText =
            Self.decodedHost(host).map { decoded in
                var wire = scheme + "://"
                if let at { wire += Self.encoded(authority[..<at], brackets: true, at: true) + "@" }
                return wire + decoded + portPart + Self.encoded(afterSlashes[authorityEnd...], brackets: true)
            } ?? normalized
        self.fragment = hash.map { String(text[text.index(afterASCII: $0)...]) }
        self.scheme = scheme
        self.host = host.lowercased()
        self.port = port
    }

    /// `host` with its `%XX` escapes decoded, when it has some and they decode to UTF-8 that
    /// holds no ASCII but letters, digits, `-` and `.`; else `nil`.
    private static func decodedHost(_ host: String) -> String? {
        guard host.utf8.contains(UInt8(ascii: "%")), let decoded = Text.percentDecoded(host) else { return nil }
        let allowed = decoded.utf8.allSatisfy { byte in
            byte >= 0x80 || (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte)
                || (0x61...0x7A).contains(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
        }
        return allowed && decoded.utf8.contains { $0 >= 0x80 } ? decoded : nil
    }

    /// The target of a redirect: `location` (a `Location` header value, RFC 9110 §10.2.2, which
    /// may be relative) encoded like ``init(_:)`` and resolved against this URL (RFC 3986 §5.2).
    ///
    /// The fragment of `location` is dropped. Whether an `https` to `http` step is allowed is
    /// for the caller to decide.
    /// - Returns: The absolute URL, or `nil` when `location` has a control character or does not
    ///   resolve to an `http`/`https` URL with a host (an `s3://` one included).
    func resolving(location: String) -> HTTPURL? {
        // An `s3://` Location is no HTTP URL: a server never chooses an object to be signed for.
        guard !location.unicodeScalars.contains(where: Self.isControl), !S3Location.names(location),
            !OCILocation.names(location)
        else { return nil }
        let reference = location[..<(location.firstIndex(ofASCII: "#") ?? location.endIndex)]
        if Self.schemeEnd(reference) != nil { return try? HTTPURL(String(reference)) }
        if reference.hasPrefix("//") { return try? HTTPURL(self.scheme + ":" + reference) }
        if reference.isEmpty { return try? HTTPURL(self.text) }  // Foundation: URL(string: "") is nil
        // Encoded first: Foundation encodes a raw space itself, but then turns "%2B" into "%252B".
        guard let base = URL(string: self.text),
            let resolved = URL(string: Self.encoded(reference, brackets: true), relativeTo: base)
        else { return nil }
        return try? HTTPURL(resolved.absoluteURL.absoluteString)
    }

    /// `true` when `other` has the same origin (RFC 6454): scheme, host and port, the default
    /// port filled in (`http://a.example` and `HTTP://A.example:80` are one origin).
    func isSameOrigin(as other: HTTPURL) -> Bool { self.origin == other.origin }

    /// The origin as `scheme://host:port`, the port always written out.
    package var origin: String { "\(self.scheme)://\(self.host):\(self.port)" }

    /// The URL as messages, logs and `--json` show it: its secrets replaced by `***`
    /// (``Redaction/url(_:)``, <doc:CommandLine#Files>: secrets are never shown nor written to a
    /// sidecar), an internationalized host as typed (``wireText``'s UTF-8, not its `%XX`).
    /// An `s3://` URL is shown as given (``S3Location/text``): its signature is no part of it.
    package var redacted: String { self.s3?.text ?? self.oci?.text ?? Redaction.url(self.wireText) }

    /// The segments of the path, each percent-decoded (kept as written where that fails):
    /// `https://h/a/my%20file?q` gives `["a", "my file"]`; `[]` for an empty path.
    package var pathSegments: [String] {
        let afterScheme = self.text.dropFirst(self.scheme.utf8.count + 3)
        let end = afterScheme.firstIndex(ofASCII: "?") ?? afterScheme.endIndex
        guard let slash = afterScheme[..<end].firstIndex(ofASCII: "/") else { return [] }
        return afterScheme[afterScheme.index(afterASCII: slash)..<end].utf8
            .split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
            .map { Text.percentDecoded(Substring($0)) ?? String(Substring($0)) }
    }

    // MARK: - Parts

    /// The index of the `:` ending a scheme (RFC 3986 §3.1: a letter, then letters, digits, `+`,
    /// `-` or `.`), or `nil` when `text` does not begin with one (a relative reference).
    private static func schemeEnd(_ text: Substring) -> Substring.Index? {
        guard let colon = text.firstIndex(ofASCII: ":"), let first = text.first, first.isASCII, first.isLetter else {
            return nil
        }
        let isSchemeCharacter = { (c: Character) in c.isASCII && (c.isLetter || c.isNumber || "+-.".contains(c)) }
        return text[..<colon].allSatisfy(isSchemeCharacter) ? colon : nil
    }

    /// Whether `address` (between `[` and `]`) has the characters of an IPv6 address, then
    /// perhaps a zone (RFC 6874: `%25` and unreserved characters): hex digits, `:` and `.` (an
    /// IPv4 tail). Which of those is a valid address is libcurl's to say; a `%` or a delimiter
    /// elsewhere would leave the URL's text ambiguous.
    private static func isIPv6Literal(_ address: Substring.UTF8View.SubSequence) -> Bool {
        let zone = address.firstRange(of: "%25".utf8)
        let digits = address[..<(zone?.lowerBound ?? address.endIndex)]
        let isAddressCharacter = { (byte: UInt8) in
            isHexDigit(byte) || byte == UInt8(ascii: ":") || byte == UInt8(ascii: ".")
        }
        guard digits.contains(UInt8(ascii: ":")), digits.allSatisfy(isAddressCharacter) else { return false }
        guard let zone else { return true }
        let name = address[zone.upperBound...]
        return !name.isEmpty && name.allSatisfy { isHexDigit($0) || isLetter($0) || "-._~".utf8.contains($0) }
    }

    private static func isLetter(_ byte: UInt8) -> Bool { (0x61...0x7A).contains(byte | 0x20) }

    /// Whether `host` begins with a combining mark or a format character, which no label may
    /// (IDNA, RFC 5891 §4.2.3.2): a delimiter's mark cut off, never a name. For the command
    /// line's `--proxy`, checked as URL hosts are.
    package static func beginsWithMarkOrFormat(_ host: Substring) -> Bool {
        host.unicodeScalars.first.map(Self.isMarkOrFormat) ?? false
    }

    private static func isMarkOrFormat(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .spacingMark, .enclosingMark, .format: true
        default: false
        }
    }

    /// C0 controls, DEL and C1 controls: never valid in a URL, and unsafe to echo.
    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    /// `scalar`, or its Swift escape (`\u{7}`) when it is a control character.
    private static func escaped(_ scalar: Unicode.Scalar) -> String {
        Self.isControl(scalar) ? "\\u{\(String(scalar.value, radix: 16, uppercase: true))}" : String(scalar)
    }

    /// ASCII bytes that cannot appear anywhere in a URL: space `"` `<` `>` `\` `^` `` ` `` `{` `|` `}`.
    private static func isUnsafe(_ byte: UInt8) -> Bool {
        [0x20, 0x22, 0x3C, 0x3E, 0x5C, 0x5E, 0x60, 0x7B, 0x7C, 0x7D].contains(byte)
    }

    /// `part` with unsafe and non-ASCII bytes, `[` `]` when `brackets`, `@` when `at`, and a `%`
    /// not starting `%XX` percent-encoded; an existing `%XX` is kept as it is.
    private static func encoded(_ part: Substring, brackets: Bool, at: Bool = false) -> String {
        let bytes = Array(part.utf8)
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count)
        for (index, byte) in bytes.enumerated() {
            let isEscape =
                byte == 0x25 && index + 2 < bytes.count && Self.isHexDigit(bytes[index + 1])
                && Self.isHexDigit(bytes[index + 2])
            let needsEncoding =
                byte >= 0x80 || Self.isUnsafe(byte) || (byte == 0x25 && !isEscape)
                || (brackets && (byte == 0x5B || byte == 0x5D)) || (at && byte == 0x40)
            guard needsEncoding else {
                result.append(byte)
                continue
            }
            result += [0x25, Self.hexDigits[Int(byte >> 4)], Self.hexDigits[Int(byte & 0x0F)]]
        }
        return String(decoding: result, as: UTF8.self)
    }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x46).contains(byte) || (0x61...0x66).contains(byte)
    }
}
