import Testing

@testable import PinFetch

/// What a failed transfer's message points to: the fix for a certificate libcurl refused, and
/// for a proxy that wants credentials, the proxy and whether to give credentials or check them.
struct TransferOutcomeAdviceTests {
    static func tls(_ message: String) -> String {
        TransferOutcome(code: 60, message: message, category: .tls)
            .pointingToTheFix(TransportSettings(), url: "https://h.test/f").message
    }

    @Test func `an unknown certificate authority points to --cacert, a certificate for another name does not`() {
        let unknown = Self.tls("SSL certificate problem: unable to get local issuer certificate")
        #expect(
            unknown.hasSuffix("; to trust a private certificate authority give --cacert FILE (or set CURL_CA_BUNDLE)")
        )
        for mismatch in [
            "SSL: no alternative certificate subject name matches target host name 'h.test'",
            "SSL: certificate subject name 'other.test' does not match target host name 'h.test'",
        ] {
            let message = Self.tls(mismatch)
            #expect(message.hasSuffix("; the certificate is for another host name: ask for the name it is for"))
            #expect(!message.contains("--cacert"), "\(message)")
        }
    }

    /// libcurl's timeout texts name no option: the one that sets that limit is added.
    @Test(arguments: [
        ("Connection timed out after 2001 milliseconds", " (--connect-timeout S sets the limit)"),
        ("SSL connection timeout", " (--connect-timeout S sets the limit)"),
        ("Resolving timed out after 5000 milliseconds", " (--connect-timeout S sets the limit)"),
        (
            "Operation too slow. Less than 1 bytes/sec transferred the last 30 seconds",
            " (--stall-timeout S sets the limit)"
        ),
        ("Timeout was reached", " (--connect-timeout S and --stall-timeout S set the limits)"),
        ("out of time", ""),
        ("Operation timed out after 4000 milliseconds with 212992 out of 3000000 bytes received", ""),
        ("no data for 30 s (--stall-timeout)", ""),
    ])
    func `a timeout names the option that sets it`(libcurl: String, added: String) {
        let message = TransferOutcome(code: 28, message: libcurl, category: .network)
            .pointingToTheFix(TransportSettings(), url: "https://h.test/f").message
        #expect(message == libcurl + added)
    }

    @Test func `a 407 names the proxy, and says to give credentials or to check those given`() throws {
        let url = "http://h.test/f"
        var options = FetchOptions()
        options.proxy = "http://p.test:3128"
        let bare = try TransportSettings(options).proxyAuthenticationFailure(for: url)
        #expect(
            bare == "the proxy http://p.test:3128 (--proxy) wants credentials (HTTP 407): "
                + "give --proxy-user USER:PASSWORD, or them in the proxy URL"
        )
        options.proxyCredentials = "ci:Secr3t"
        let separate = try TransportSettings(options).proxyAuthenticationFailure(for: url)
        #expect(separate.hasSuffix("the credentials given were refused: check --proxy-user, or those in the proxy URL"))
        options.proxyCredentials = nil
        options.proxy = "http://ci:Secr3t@p.test:3128"
        let inURL = try TransportSettings(options).proxyAuthenticationFailure(for: url)
        #expect(inURL.contains("the credentials given were refused"), "\(inURL)")
        #expect(!inURL.contains("Secr3t"), "\(inURL)")
        // From the environment, named by its variable; none at all is said to be the server's.
        var environment = TransportSettings()
        environment.environmentProxies = ["https_proxy": "http://p.test:8080"]
        #expect(
            environment.proxyAuthenticationFailure(for: "https://h.test/f")
                .hasPrefix("the proxy http://p.test:8080 ($https_proxy) wants credentials")
        )
        #expect(TransportSettings().proxyAuthenticationFailure(for: url).contains("no proxy is in use"))
    }
}
