import Testing

@testable import PinFetch

/// `HTTPURL`: what a typed URL and a redirect's `Location` become (RFC 3986 §2 and §5.2,
/// RFC 9110 §4.2.4 and §10.2.2).
struct HTTPURLTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var label: String
        var input: String
        var expected: String
        var testDescription: String { self.label }
    }

    static let normalized: [Case] = [
        Case(
            label: "plain URL unchanged",
            input: "https://example.com/a/b.bin",
            expected: "https://example.com/a/b.bin"
        ),
        Case(
            label: "raw space in the path",
            input: "http://host/dir/my file.bin",
            expected: "http://host/dir/my%20file.bin"
        ),
        Case(label: "existing escape kept", input: "http://h/a%2Bb", expected: "http://h/a%2Bb"),
        Case(label: "lower-case escape kept", input: "http://h/a%2bb", expected: "http://h/a%2bb"),
        Case(label: "escape kept beside a space", input: "http://h/a%2Bb c", expected: "http://h/a%2Bb%20c"),
        Case(label: "lone %", input: "http://h/%", expected: "http://h/%25"),
        Case(label: "% before non-hex", input: "http://h/%zz", expected: "http://h/%25zz"),
        Case(label: "% with one hex digit at the end", input: "http://h/a%4", expected: "http://h/a%254"),
        Case(label: "brackets in path and query", input: "http://h/[x]?a=[b]", expected: "http://h/%5Bx%5D?a=%5Bb%5D"),
        Case(label: "IPv6 host kept", input: "http://[::1]:8080/a b", expected: "http://[::1]:8080/a%20b"),
        Case(label: "non-ASCII path", input: "http://h/\u{FC}", expected: "http://h/%C3%BC"),
        Case(label: "space in the query", input: "http://h/x?q=a b", expected: "http://h/x?q=a%20b"),
        Case(
            label: "characters never allowed",
            input: #"http://h/"<>\^`{|}"#,
            expected: "http://h/%22%3C%3E%5C%5E%60%7B%7C%7D"
        ),
        Case(label: "userinfo kept", input: "http://user:pass@h/x", expected: "http://user:pass@h/x"),
        Case(label: "an @ inside the userinfo", input: "http://u:p@q@h/x", expected: "http://u:p%40q@h/x"),
        Case(label: "scheme lower-cased", input: "HTTPS://Example.com/X", expected: "https://Example.com/X"),
        Case(label: "fragment dropped", input: "http://h/x.bin#sha256=ab", expected: "http://h/x.bin"),
        Case(label: "no path", input: "http://h", expected: "http://h"),
        Case(label: "empty port", input: "http://h:/x", expected: "http://h:/x"),
        Case(label: "port 65535", input: "http://h:65535/x", expected: "http://h:65535/x"),
    ]

    @Test(arguments: Self.normalized)
    func `a typed URL is normalized`(url: Case) throws {
        let result = try HTTPURL(url.input)
        #expect(result.text == url.expected)
        #expect(result.description == url.expected)
        #expect(try HTTPURL(result.text) == HTTPURL(url.expected))  // normalizing twice changes nothing
    }

    @Test func `the fragment is kept as typed`() throws {
        #expect(try HTTPURL("http://h/x.bin#sha256=AB%20c").fragment == "sha256=AB%20c")
        #expect(try HTTPURL("http://h/x.bin#").fragment == "")
        #expect(try HTTPURL("http://h/x.bin").fragment == nil)
        #expect(try HTTPURL("http://h/a#b#c").fragment == "b#c")
    }

    @Test(arguments: [
        "http://h/a\u{7}b", "http://h/a\tb", "http://h/a\nb", "http://h/\u{0}", "http://h/a\u{7F}b",  // C0, DEL
        "http://h/a\u{85}b",  // C1
        "ftp://h/x", "mailto:x@y", "http:///x", "http://", "http:/x", "http:x", "http://user@/x",  // scheme, host
        "http://h:0/x", "http://h:70000/x", "http://h:99999999999999999999/x", "http://h:+80/x", "http://h:x/",
        " http://h/x", "http://h/x ", "\u{A0}http://h/x",  // white space at either end
        "", "h/x", "//h/x", "http://[::1/x", "http://[::1]x/",  // malformed
        "http://a b/x", "http://a<b/x", "http://a[b/x",  // no host name has these
    ])
    func `bad URLs are usage errors`(text: String) {
        let error = #expect(throws: PinFetchError.self) { try HTTPURL(text) }
        #expect(error?.code == .usage)
        #expect(error?.message.isEmpty == false)
        #expect(error?.message.contains("\n") == false)
        #expect(error?.message.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) } == false)
        // A job of such a URL fails with the same words, and the same code.
        let job = FetchJob(mirrors: [text], destination: "x")
        #expect(throws: PinFetchError.self) { try job.urls.get() }
        #expect(job.urls == .failure(error ?? PinFetchError(.generic, "")))
    }

    @Test func `error messages name what is wrong with the URL`() {
        let messages = ["ftp://h/x", "http:///x", "h/x", "http://h/a\u{7}b", "http://h:0/x"].map { text in
            #expect(throws: PinFetchError.self) { try HTTPURL(text) }?.message ?? ""
        }
        #expect(messages[0] == "unsupported URL scheme 'ftp' (use http or https)")
        #expect(messages[1] == "URL has no host: 'http:///x'")
        #expect(messages[2] == "malformed URL 'h/x'")
        #expect(messages[3] == #"URL has a control character: 'http://h/a\u{7}b'"#)
        #expect(messages[4] == "URL port is not a number in 1...65535: 'http://h:0/x'")
    }

    @Test func `scheme, host and port make the origin`() throws {
        let plain = try HTTPURL("HTTP://A.Example/x")
        #expect(plain.scheme == "http")
        #expect(plain.host == "a.example")
        #expect(plain.port == 80)
        let secure = try HTTPURL("https://u:p@a.example/")
        #expect((secure.scheme, secure.host, secure.port) == ("https", "a.example", 443))
        let literal = try HTTPURL("http://[::1]:8080/a")
        #expect((literal.scheme, literal.host, literal.port) == ("http", "[::1]", 8080))
    }

    @Test func `redacted hides the password and the values of signing query parameters`() throws {
        #expect(try HTTPURL("http://user:secret@h/x?sig=1").redacted == "http://user:***@h/x?sig=***")
        let signed = try HTTPURL("https://b.s3.test/k?X-Amz-Credential=AK%2F1&X-Amz-Date=2026&X-Amz-Signature=abc#f")
        #expect(signed.redacted == "https://b.s3.test/k?X-Amz-Credential=***&X-Amz-Date=2026&X-Amz-Signature=***")
        #expect(try HTTPURL("http://h/x?version=2&token=t&&sig").redacted == "http://h/x?version=2&token=***&&sig")
        #expect(try HTTPURL("http://h/x?a=1").redacted == "http://h/x?a=1")
        #expect(try HTTPURL("http://user@h/x").redacted == "http://***@h/x")  // a user name alone may be a token
        #expect(try HTTPURL("http://h/x@y").redacted == "http://h/x@y")
        #expect(try HTTPURL("http://u:p@q@h:81/").redacted == "http://u:***@h:81/")
    }

    static let base = "http://h/dir/x"

    static let locations: [Case] = [
        Case(
            label: "absolute path with an escape and a space",
            input: "/files/a%2Bb c.bin",
            expected: "http://h/files/a%2Bb%20c.bin"
        ),
        Case(label: "relative to the base's directory", input: "a b.bin", expected: "http://h/dir/a%20b.bin"),
        Case(label: "network-path reference", input: "//other.example/x y", expected: "http://other.example/x%20y"),
        Case(label: "dot-dot", input: "../up/z", expected: "http://h/up/z"),
        Case(label: "query only", input: "?v=1 2", expected: "http://h/dir/x?v=1%202"),
        Case(label: "absolute with brackets", input: "https://o.example/[x]", expected: "https://o.example/%5Bx%5D"),
        Case(label: "fragment dropped", input: "/y#frag", expected: "http://h/y"),
        Case(label: "non-ASCII", input: "/\u{FC}", expected: "http://h/%C3%BC"),
        Case(label: "empty: the base itself", input: "", expected: "http://h/dir/x"),
        Case(label: "IPv6 network-path reference", input: "//[::1]:81/z", expected: "http://[::1]:81/z"),
        // "#" and a combining mark are one Character, unequal to "#": found by byte (fuzzed).
        Case(label: "fragment starting with a combining mark", input: "#\u{301}", expected: "http://h/dir/x"),
        Case(label: "path, then such a fragment", input: "/y#\u{301}z", expected: "http://h/y"),
    ]

    @Test(arguments: Self.locations)
    func `a Location resolves against the base`(location: Case) throws {
        let base = try HTTPURL(Self.base)
        #expect(base.resolving(location: location.input)?.text == location.expected)
        #expect(base.resolving(location: location.input)?.fragment == nil)
    }

    @Test(arguments: ["mailto:x@y", "http://", "ftp://h/x", "/a\u{7}b", "http://h:0/", "//", "file:///etc/passwd"])
    func `a Location that is not an HTTP URL gives nil`(location: String) throws {
        #expect(try HTTPURL(Self.base).resolving(location: location) == nil)
    }

    @Test func `a relative Location keeps the base's userinfo and query rules`() throws {
        let base = try HTTPURL("https://u:p@h/dir/x?old=1")
        #expect(base.resolving(location: "y")?.text == "https://u:p@h/dir/y")
        #expect(base.resolving(location: "?new=2")?.text == "https://u:p@h/dir/x?new=2")
        #expect(base.resolving(location: "//o.example/z")?.text == "https://o.example/z")
    }

    @Test func `a combining mark after a delimiter hides neither the delimiter nor a secret`() throws {
        let url = try HTTPURL("http://h/a#\u{301}b")
        #expect(url.text == "http://h/a")
        #expect(url.fragment == "\u{301}b")
        let markedHost = #expect(throws: PinFetchError.self) { try HTTPURL("http://tok@\u{301}h/x") }
        #expect(markedHost?.message.contains("tok") == false)
        #expect(Redaction.url("http://h/x?token=\u{301}secret") == "http://h/x?token=***")
        #expect(Redaction.url("http://h/x?a=1&\u{301}sig=s") == "http://h/x?a=1&\u{301}sig=***")
        #expect(Redaction.headerLine("Authorization:\u{301} Bearer t") == "Authorization:\u{301} ***")
        #expect(Redaction.malformedURL("http:/\u{2F}\u{301}u:p@h") == "http://***@h")
    }

    @Test(arguments: [
        "http://[2001%%:db8::1]:8080/p", "http://[::1%eth0]/", "http://[h:x]/", "http://[1.2.3.4]/",
        "http://[::1%25]/", "http://[::1]x/",
    ])
    func `a host that is no IPv6 address in brackets, or begins with a mark, is refused`(url: String) {
        #expect(throws: PinFetchError.self) { try HTTPURL(url) }  // the first was found by URLFuzz
    }

    @Test func `an IPv6 address, with an IPv4 tail or a zone, is accepted`() throws {
        #expect(try HTTPURL("http://[2001:DB8::1]:8080/p").host == "[2001:db8::1]")
        #expect(try HTTPURL("http://[::ffff:1.2.3.4]/").port == 80)
        #expect(try HTTPURL("http://[fe80::1%25eth0]/").host == "[fe80::1%25eth0]")
    }

    @Test(arguments: [
        (
            "https://b.test/o/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AK%2F1&X-Amz-Date=20261203T000000Z"
                + "&X-Amz-Expires=300&X-Amz-SignedHeaders=host&X-Amz-Signature=ab12", "https://b.test/o/k"
        ),
        (
            "https://b.test/o/k?response-content-disposition=attachment&X-Amz-Signature=ab",
            "https://b.test/o/k?response-content-disposition=attachment"
        ),
        ("https://a.test/c/b?sv=2024-01-01&se=2026-12-04&sr=b&sp=r&sig=xyz", "https://a.test/c/b"),
        ("https://c.test/get?f=a.bin&sig=1", "https://c.test/get?f=a.bin"),
        ("https://c.test/get?f=a.bin&Expires=17&token=t#frag", "https://c.test/get?f=a.bin"),
        ("https://u:pw@c.test/x?id=7;v=2", "https://u:***@c.test/x?id=7&v=2"),
        ("https://c.test/x", "https://c.test/x"),
    ])
    func `a resource is its URL without what signs it or bounds it in time`(url: String, resource: String) {
        #expect(Redaction.resource(url) == resource)
    }
}
