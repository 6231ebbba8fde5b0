import Foundation
import Testing

@testable import PinFetch

/// Secrets never reach what pinfetch shows: a URL's password, a token as its user name, the
/// signing and token parameters of its query or fragment, a proxy's password and the value of a
/// header the user gave are `***` in messages and `-v` lines, ordinary query values stay shown;
/// a URL or a proxy refused as bad input (exit 2) is shown the same way.
struct SecretsTests {
    /// User input: a URL whose query holds only ordinary values.
    @Test func `ordinary query values stay shown`() {
        let url = "https://h.test/f?version=1.2&file=a.tar.gz&format=zip&response-content-disposition=x&page=2"
        #expect(Redaction.url(url) == url)
    }

    /// User input: a URL with a signing or token parameter of a cloud store, a CDN or OAuth.
    @Test(arguments: [
        "oauth_token", "accessToken", "x-oss-signature", "q-signature", "X-Tos-Signature", "hdnts", "auth_key",
        "pwd", "pass", "passwd", "dl_token", "otp", "X-Amz-Signature", "sig", "key", "access_token", "apiKey",
        "X-Goog-Credential", "client_secret", "Signature", "se%63ret",
        // nginx secure_link, CDN signing.
        "md5", "sign", "hash", "verify", "st",
    ])
    func `signing and token query values are hidden`(name: String) {
        let shown = Redaction.url("https://h.test/f?v=1&\(name)=SECRETVALUE&file=a.tar.gz")
        #expect(!shown.contains("SECRETVALUE"), "\(shown)")
        #expect(shown.hasPrefix("https://h.test/f?v=1&") && shown.hasSuffix("=***&file=a.tar.gz"), "\(shown)")
    }

    /// User input: an OAuth access token in a URL's fragment, beside a pin.
    @Test func `secret values in a fragment are hidden too, a pin in it is not`() {
        let url = "https://h.test/cb?v=1#access_token=SECRETVALUE&state=2&sha256=ab"
        #expect(Redaction.url(url) == "https://h.test/cb?v=1#access_token=***&state=2&sha256=ab")
    }

    /// User input: a token as a URL's user name, and token parameters spelt oddly.
    @Test func `a token given as the URL's user name, and odd parameter spellings, are hidden`() {
        #expect(Redaction.url("http://PWSECRET@127.0.0.1:9/f") == "http://***@127.0.0.1:9/f")
        for query in [
            "token[]=QSECRET", "x=1;token=QSECRET", "Private-Token=QSECRET", "token%20=QSECRET", "&amp;token=QSECRET",
        ] {
            #expect(!Redaction.url("http://h/x?\(query)").contains("QSECRET"), "\(query)")
        }
    }

    /// User input: URLs with a password and a token, refused for a control character, their length or host.
    @Test(arguments: [
        "http://u:PASSWORD@127.0.0.1:9/a\u{1}.bin?token=TOKEN",
        "http://u:PASSWORD@127.0.0.1:9/\(String(repeating: "a", count: 9000))?token=TOKEN",
        "http://u:PASSWORD@[::1/a.bin?token=TOKEN",
        "http://u:PASSWORD@/a.bin?token=TOKEN",
    ])
    func `a URL refused as bad input is shown without its secrets`(url: String) async {
        let run = await runCLI(quietOnce + ["-o", "/nonexistent/y", url])
        #expect(run.status == 2)
        #expect(!run.standardError.contains("PASSWORD") && !run.standardError.contains("TOKEN"), "\(run.standardError)")
    }

    /// Hostile server: a redirect to an ftp:// Location with a password and a token; a manifest line alike.
    @Test func `a manifest line and a redirect Location are shown without their secrets`() async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
            server.handler = { _, _ in
                TestResponse(
                    status: 302,
                    headers: [("Location", "ftp://u:LOCPASS@127.0.0.1/x?%74oken=LOCTOKEN")],
                    body: []
                )
            }
            try await withTemporaryDirectory { directory in
                let redirected = await runCLI(quietOnce + ["-o", "\(directory)/r", server.url()])
                #expect(redirected.status == 7)
                #expect(!redirected.standardError.contains("LOCPASS") && !redirected.standardError.contains("LOCTOKEN"))
                #expect(
                    !redirected.standardOutput.contains("LOCPASS") && !redirected.standardOutput.contains("LOCTOKEN")
                )

                try "ftp://u:PASSWORD@127.0.0.1/a.bin?token=TOKEN out\n".write(
                    toFile: "\(directory)/m",
                    atomically: true,
                    encoding: .utf8
                )
                let listed = await runCLI(quietOnce + ["-i", "\(directory)/m"])
                #expect(listed.status == 2)
                #expect(!listed.standardError.contains("PASSWORD") && !listed.standardError.contains("TOKEN"))
            }
        }
    }

    /// User input: credentials in the headers of -H @FILE, shown by -v.
    @Test func `-v never shows the value of a header the user gave`() async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
            try await withTemporaryDirectory { directory in
                try "PRIVATE-TOKEN: glpat-SECRET\nX-Api-Key: APIKEYSECRET\n".write(
                    toFile: "\(directory)/h",
                    atomically: true,
                    encoding: .utf8
                )
                let run = await runCLI(["-v", "--json", "-H", "@\(directory)/h", "-o", "\(directory)/o", server.url()])
                #expect(run.status == 0)
                #expect(run.standardError.contains("> PRIVATE-TOKEN: ***"), "\(run.standardError)")
                #expect(!run.standardError.contains("SECRET"))
            }
        }
    }

    /// libcurl's words: a message naming a proxy URL with its password; token parameters; a malformed URL.
    @Test func `libcurl's words about a proxy are shown without its password`() {
        let text = "Unsupported proxy scheme for 'ftp://pxuser:PROXYSECRET@127.0.0.1:3128'"
        #expect(Redaction.text(text) == "Unsupported proxy scheme for 'ftp://***@127.0.0.1:3128'")
        let query = "http://h/x?private_token=A&job_token=B&client_secret=C&code=D&v=1"
        #expect(Redaction.url(query) == "http://h/x?private_token=***&job_token=***&client_secret=***&code=***&v=1")
        #expect(!Redaction.malformedURL("http://alice:SECRETpw/x@127.0.0.1:9/a").contains("SECRET"))
    }

    /// User input: a --proxy with a password and a port out of range, or a space in its password,
    /// or a combining mark after its `@` (one Swift `Character` with it), with a good port too
    /// (its host then begins with the mark: no name does, as in a URL).
    @Test(arguments: [
        ["--proxy", "http://pxuser:PROXYSECRET@127.0.0.1:99999"], ["--proxy", "pxuser:PROXY SECRET@127.0.0.1:3128"],
        ["--proxy", "pxuser:PROXYSECRET@\u{301}h:x"], ["--proxy", "http://pxuser:PROXYSECRET@\u{301}h:x"],
        ["--proxy", "http://pxuser:PROXYSECRET@\u{301}h:3128"], ["--proxy", "\u{200B}proxy.example:3128"],
    ])
    func `a proxy that cannot work is bad input, shown without its password`(arguments: [String]) async {
        let run = await runCLI(quietOnce + arguments + ["-o", "/nonexistent/x", "http://127.0.0.1:9/x"])
        #expect(run.status == 2)
        #expect(!run.standardError.contains("SECRET"), "\(run.standardError)")
    }

    /// User input: a --proxy whose password holds an unencoded '?' or '/'.
    @Test func `a proxy password with an unencoded '?' or '/' is never printed`() async {
        let run = await runCLI(
            quietOnce + ["--proxy", "http://u:PX?SECRET@127.0.0.1:1", "-o", "/nonexistent/x", "http://127.0.0.1:9/x"]
        )
        #expect(run.status == 2)
        #expect(!run.standardError.contains("SECRET"), "\(run.standardError)")
        let libcurl = "Unsupported proxy syntax in 'http://u:PX/SECRET@127.0.0.1:1'"
        #expect(!Redaction.text(libcurl).contains("SECRET"))
    }

    /// User input: a --proxy with a raw @ in its password.
    @Test(arguments: ["http://user:p@ss@127.0.0.1:3128", "user:p@ss@127.0.0.1:3128", "user:p@\u{301}ss@127.0.0.1:3128"])
    func `a proxy with a raw @ in its password is bad input`(proxy: String) async {
        let run = await runCLI(quietOnce + ["--proxy", proxy, "-o", "/nonexistent/x", "http://127.0.0.1:9/x"])
        #expect(run.status == 2, "\(run.standardError)")
        #expect(run.standardError.contains("%40") && !run.standardError.contains("p@ss"), "\(run.standardError)")
    }

    /// User environment: a malformed http_proxy, https_proxy or all_proxy, one of them with a password.
    @Test(arguments: [("http_proxy", "http://[bad"), ("https_proxy", "ftp://user:SECRETPW@h:1"), ("all_proxy", "h:0")])
    func `a malformed proxy in the environment is bad input, shown without its password`(
        name: String,
        value: String
    ) async throws {
        try await withTemporaryDirectory { directory in
            let child = try ChildProcess(
                try EndToEndTests.pinfetchExecutable(),
                quietOnce + ["-o", "\(directory)/o", "http://127.0.0.1:9/x"],
                logs: "\(directory)/log",
                environment: [name: value]
            )
            let ended = try await child.wait(timeout: .seconds(30))
            #expect(ended == .exited(2), "\(child.transcript)")
            #expect(child.transcript.contains("$\(name)") && !child.transcript.contains("SECRETPW"))
            #expect(listing(directory).filter { $0.hasPrefix("o") }.isEmpty)
        }
    }
}

/// What a helper program printed when it failed is shown without what looks like a secret.
struct HelperLineTests {
    @Test func `keys, tokens and JWTs are hidden; paths, words and key ids stay`() {
        let line =
            "denied: AKIAIOSFODNN7EXAMPLE/wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY at /usr/local/bin/aws-helper-v2 "
            + "token=eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJjaSJ9.c2lnbmF0dXJl (http://u:pw@proxy:3128)"
        #expect(
            Redaction.helperLine(line)
                == "denied: *** at /usr/local/bin/aws-helper-v2 token=*** (http://***@proxy:3128)"
        )
        #expect(Redaction.helperLine("run: aws sso login --profile ci") == "run: aws sso login --profile ci")
        // What an outsider's helpers printed: a GitHub token, key=value and Name: value secrets.
        let github = "error: token ghp_abcdefghijklmnopqrstuvwxyz0123456789 rejected; password=HELPERSECRET"
        #expect(Redaction.helperLine(github) == "error: token *** rejected; password=***")
        let docker = "credentials not found: Secret=DOCKERSECRET, Token: abc at /opt/helpers/v2/cred-helper-2024"
        #expect(
            Redaction.helperLine(docker)
                == "credentials not found: Secret=*** Token: *** at /opt/helpers/v2/cred-helper-2024"
        )
    }
}
