import FoundationEssentials
@preconcurrency import Glibc

/// A `--noproxy` / `no_proxy` list, in curl's form: `*` alone (every host), or entries
/// separated by commas (and spaces), each a host name or domain (`example.com` and
/// `.example.com` both match `example.com` and its subdomains), or an IPv4 or IPv6 address with
/// an optional prefix length (`10.0.0.0/8`, `::1`, `[::1]`, `fe80::/10`; a malformed one, such as
/// `10.0.0.0/8x` or `::1/129`, matches nothing).
///
/// libcurl 7.88 matches the list itself, but compares an IPv6 address as text (so
/// `0:0:0:0:0:0:0:1`, `::0:1`, `::1/128` and `[::1]` miss `http://[::1]/`) and a name with
/// non-ASCII letters not as typed. Each request's host is therefore matched here too
/// (``bypasses(host:)``): addresses by their bytes, names by their lower-cased Unicode form (an
/// `xn--` label decoded, ``Punycode``, so `bücher.example` and `xn--bcher-kva.example` are one
/// name either way round); a match sends the request without a proxy. libcurl is never left to
/// match the list itself (each request gets `CURLOPT_NOPROXY` `*` or empty): its own reading
/// would take `10.0.0.0/8x` for `/8`.
package struct ProxyBypassList: Sendable, Hashable {
    private let entries: [Entry]

    private enum Entry: Hashable {
        case everyHost
        /// Lower-cased, without a leading or trailing dot.
        case name(String)
        /// The address's bytes (4 or 16) and how many leading bits must match.
        case address([UInt8], bits: Int)
    }

    package init(_ list: String) {
        // `*` means every host only as the whole list, as curl reads it (in `a,*` it is a name).
        guard list.trimmingWhitespace() != "*" else {
            self.entries = [.everyHost]
            return
        }
        var entries: [Entry] = []
        for token in list.split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\t" }) {
            let entry = String(token)
            if let address = Self.address(entry) {
                entries.append(address)
            } else {
                let name = Self.trimmingDots(Punycode.unicodeName(entry).lowercased())
                if !name.isEmpty { entries.append(.name(name)) }
            }
        }
        self.entries = entries
    }

    /// Whether a request to `host` (``HTTPURL/host``: lower-cased, percent-encoded, an IPv6
    /// literal in brackets) goes without a proxy.
    package func bypasses(host: String) -> Bool {
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        let address = Self.bytes(of: bare)
        let name = Self.trimmingDots(Punycode.unicodeName(Text.percentDecoded(bare) ?? bare).lowercased())
        return self.entries.contains { entry in
            switch entry {
            case .everyHost: true
            case .name(let suffix): address == nil && (name == suffix || name.hasSuffix("." + suffix))
            case .address(let network, let bits): address.map { Self.prefix($0, of: network, bits: bits) } ?? false
            }
        }
    }

    /// The host of a normalized absolute URL (``HTTPURL/text``): between `://` and the path,
    /// after any user information, without the port; an IPv6 literal keeps its brackets.
    static func host(ofURL url: String) -> String {
        let rest = url.firstRange(of: "://").map { url[$0.upperBound...] } ?? Substring(url)
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        var host = authority.lastIndex(of: "@").map { authority[authority.index(after: $0)...] } ?? authority
        if host.hasPrefix("["), let close = host.firstIndex(of: "]") {
            host = host[...close]
        } else if let colon = host.firstIndex(of: ":") {
            host = host[..<colon]
        }
        return String(host)
    }

    /// An address entry (`::1`, `[::1]`, `10.0.0.0/8`, `[fe80::]/10`, `[::1]:8080`), or `nil`
    /// (then a name, which matches no address: so does a malformed prefix length).
    private static func address(_ entry: String) -> Entry? {
        var text = Substring(entry)
        var bits: Int?
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            let rest = text[text.index(after: close)...]
            text = text[text.index(after: text.startIndex)..<close]
            if rest.hasPrefix("/") {  // a port (`:8080`) means nothing here
                guard let number = Self.prefixLength(rest.dropFirst()) else { return nil }
                bits = number
            }
        } else if let slash = text.firstIndex(of: "/") {
            guard let number = Self.prefixLength(text[text.index(after: slash)...]) else { return nil }
            bits = number
            text = text[..<slash]
        }
        guard let bytes = Self.bytes(of: String(text)) else { return nil }
        let width = bytes.count * 8
        let length = bits ?? width
        guard (0...width).contains(length) else { return nil }
        return .address(bytes, bits: length)
    }

    /// A prefix length: decimal digits only (`Int` would take `+8`).
    private static func prefixLength(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.count <= 3, text.allSatisfy({ ("0"..."9").contains($0) }) else { return nil }
        return Int(text)
    }

    /// The bytes of an IPv4 (dotted quad) or IPv6 address in any of its spellings, or `nil`.
    private static func bytes(of text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 { return withUnsafeBytes(of: &v6) { Array($0) } }
        return nil
    }

    /// Whether the first `bits` bits of `address` are those of `network` (of the same family).
    private static func prefix(_ address: [UInt8], of network: [UInt8], bits: Int) -> Bool {
        guard address.count == network.count else { return false }
        let whole = bits / 8
        guard address[..<whole] == network[..<whole] else { return false }
        let rest = bits % 8
        guard rest > 0 else { return true }
        let mask = UInt8(0xFF) << (8 - rest)
        return address[whole] & mask == network[whole] & mask
    }

    private static func trimmingDots(_ name: String) -> String {
        var trimmed = Substring(name)
        while trimmed.hasPrefix(".") { trimmed = trimmed.dropFirst() }
        while trimmed.hasSuffix(".") { trimmed = trimmed.dropLast() }
        return String(trimmed)
    }
}
