import Testing

@testable import PinFetch

/// `--noproxy` and `no_proxy` lists as libcurl is given them: an IPv6 literal spelt as in a URL
/// (`[::1]`) bypasses the proxy as the bare address does, which libcurl 7.88 alone ignores.
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
    func `a bracketed IPv6 literal loses its brackets`(given: String, passed: String) {
        #expect(TransportSettings.normalizedBypassList(given) == passed)
    }

    @Test func `the --noproxy list reaches libcurl normalized`() throws {
        var options = FetchOptions()
        options.noProxy = "[::1],example.com"
        #expect(try TransportSettings(options).noProxy == "::1,example.com")
    }
}
