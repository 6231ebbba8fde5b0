import Testing

@testable import PinFetch

/// `--noproxy` and `no_proxy` lists: every usual spelling of an address bypasses the proxy for
/// that address (libcurl 7.88 alone compares IPv6 as text), names match in Unicode or `xn--`
/// form, a malformed address entry matches nothing, and `*` means every host only alone.
struct ProxyBypassListTests {
    @Test(arguments: [
        // (list, host as in HTTPURL.host, bypassed)
        ("::1", "[::1]", true),
        ("0:0:0:0:0:0:0:1", "[::1]", true),
        ("::0:1", "[::1]", true),
        ("::1/128", "[::1]", true),
        ("[::1]", "[::1]", true),
        ("[::1]/128", "[::1]", true),
        ("[::1]:8080", "[::1]", true),
        ("fe80::/10", "[fe80::1234]", true),
        ("fe80::/16", "[fe81::1]", false),
        ("::2", "[::1]", false),
        ("::1", "127.0.0.1", false),
        ("127.0.0.0/8", "127.1.2.3", true),
        ("10.0.0.0/8", "127.0.0.1", false),
        ("127.0.0.1", "127.0.0.1", true),
        ("example.com", "example.com", true),
        (".example.com", "a.example.com", true),
        ("example.com", "a.example.com", true),
        ("example.com", "badexample.com", false),
        ("Example.COM.", "example.com", true),
        ("bücher.example", "b%C3%BCcher.example", true),
        ("BÜCHER.example", "b%c3%bccher.example", true),
        (".bücher.example", "www.b%c3%bccher.example", true),
        ("bücher.example", "buecher.example", false),
        ("bücher.example", "xn--bcher-kva.example", true),
        ("xn--bcher-kva.example", "b%C3%BCcher.example", true),
        (".BÜCHER.example", "www.XN--BCHER-KVA.example", true),
        ("*", "anything.example", true),
        ("a.example, b.example", "b.example", true),
        ("", "example.com", false),
        ("127.0.0.1/8x", "127.0.0.2", false),
        ("127.0.0.1/+8", "127.0.0.2", false),
        ("[::1]/8x", "[::1]", false),
        ("::1/129", "[::1]", false),
        ("127.0.0.1/33", "127.0.0.1", false),
        ("foo.example,*", "other.example", false),
        (" * ", "other.example", true),
        ("[::1", "[::1]", false),
    ])
    func `a host is bypassed by the entries that name it`(list: String, host: String, bypassed: Bool) {
        #expect(ProxyBypassList(list).bypasses(host: host) == bypassed)
    }

    @Test(arguments: [
        ("http://[::1]:8080/file", "[::1]"),
        ("https://user:p%40ss@b%C3%BCcher.example/a?b#c", "b%C3%BCcher.example"),
        ("http://127.0.0.1/", "127.0.0.1"),
        ("http://example.com", "example.com"),
    ])
    func `the host of a request's URL is what is matched`(url: String, host: String) {
        #expect(ProxyBypassList.host(ofURL: url) == host)
    }

    @Test func `the --noproxy list is what the transport matches`() throws {
        var options = FetchOptions()
        options.noProxy = "[::1],example.com"
        let list = try #require(try TransportSettings(options).noProxy)
        #expect(list.bypasses(host: "[0:0:0:0:0:0:0:1]") && list.bypasses(host: "www.example.com"))
        #expect(!list.bypasses(host: "127.0.0.1"))
    }
}
