import Testing

@testable import PinFetch

/// `--noproxy` and `no_proxy` lists: every usual spelling of an address bypasses the proxy for
/// that address (libcurl 7.88 alone compares IPv6 as text), names match as typed, in Unicode too,
/// and what libcurl still gets has no brackets around IPv6 literals.
struct ProxyBypassListTests {
    @Test(arguments: [
        ("[::1]", "::1"),
        ("localhost,[::1],example.com", "localhost,::1,example.com"),
        (" [::1] ", "::1"),
        ("[fe80::1]/64", "fe80::1/64"),
        ("[::1]:8080", "::1"),  // a port means nothing to no_proxy
        ("::1,127.0.0.1, .example.com", "::1,127.0.0.1, .example.com"),  // kept as given
        ("*", "*"),
        ("[::1", "[::1"),  // not a bracketed literal: left for libcurl to ignore
    ])
    func `libcurl gets IPv6 literals without brackets`(given: String, passed: String) {
        #expect(ProxyBypassList(given).text == passed)
    }

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

    @Test func `the --noproxy list reaches libcurl normalized`() throws {
        var options = FetchOptions()
        options.noProxy = "[::1],example.com"
        #expect(try TransportSettings(options).noProxy?.text == "::1,example.com")
    }
}
