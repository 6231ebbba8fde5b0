import PinFetch
import Testing

@testable import PinFetchCLI

/// Each kind of ``ArgumentError`` from a command line that gives it, with the message pinfetch
/// has always printed for it (scripts and tests read them).
extension ArgumentsTests {
    struct MessageCase: Sendable, CustomTestStringConvertible {
        var arguments: [String]
        var error: ArgumentError
        var message: String
        var testDescription: String { self.arguments.joined(separator: " ") }

        init(_ arguments: [String], _ error: ArgumentError, _ message: String) {
            self.arguments = arguments
            self.error = error
            self.message = message
        }
    }

    static let messageCases: [MessageCase] = [
        MessageCase([Self.url, "-o", ""], .emptyValue(option: "-o", needs: "a path"), "-o needs a path"),
        MessageCase(
            [Self.url, "--directory-prefix="],
            .emptyValue(option: "--directory-prefix", needs: "a directory"),
            "--directory-prefix needs a directory"
        ),
        MessageCase(
            [Self.url, "-j", "65"],
            .badValue(option: "-j", expected: "a whole number from 1 to 64", given: "65"),
            "-j takes a whole number from 1 to 64, not '65'"
        ),
        MessageCase(
            [Self.url, "--retry-delay", "nan"],
            .badValue(option: "--retry-delay", expected: "a number of seconds", given: "nan"),
            "--retry-delay takes a number of seconds, not 'nan'"
        ),
        MessageCase(
            [Self.url, "--segments=17"],
            .badValue(option: "--segments", expected: "'auto' or a whole number from 1 to 16", given: "17"),
            "--segments takes 'auto' or a whole number from 1 to 16, not '17'"
        ),
        MessageCase(
            [Self.url, "-H", "NoColon"],
            .badValue(option: "-H", expected: "'Name: value'", given: nil),
            "-H takes 'Name: value'"
        ),
        MessageCase(
            [Self.url, "--remote-cache-header", "Bad Name: v"],
            .refused(option: "--remote-cache-header", reason: "the header name is not an RFC 9110 token"),
            "--remote-cache-header: the header name is not an RFC 9110 token"
        ),
        MessageCase(
            [Self.url, "--proxy", "socks9://p"],
            .refused(
                option: "--proxy",
                reason: "scheme 'socks9' is not http, https, socks4, socks4a, socks5 or socks5h"
            ),
            "--proxy: scheme 'socks9' is not http, https, socks4, socks4a, socks5 or socks5h"
        ),
        MessageCase(
            [Self.url, "--sha256", "12"],
            .malformed(
                "--sha256 takes 64 hex digits (or sha256:HEX), not '12' (2 characters); --checksum takes sha384:HEX, sha512:HEX and SRI (sha256-BASE64)"
            ),
            "--sha256 takes 64 hex digits (or sha256:HEX), not '12' (2 characters); --checksum takes sha384:HEX, sha512:HEX and SRI (sha256-BASE64)"
        ),
        MessageCase(
            [Self.url, "--sha256", "sha256:" + String(repeating: "g", count: 64)],
            .malformed(
                "--sha256 takes 64 hex digits (or sha256:HEX), not '\(String(repeating: "g", count: 64))' (64 characters, but 'g' at 1 is not a hex digit); --checksum takes sha384:HEX, sha512:HEX and SRI (sha256-BASE64)"
            ),
            "--sha256 takes 64 hex digits (or sha256:HEX), not '\(String(repeating: "g", count: 64))' (64 characters, but 'g' at 1 is not a hex digit); --checksum takes sha384:HEX, sha512:HEX and SRI (sha256-BASE64)"
        ),
        MessageCase(
            [Self.url, "--sha256", Self.sha256, "--checksum", "sha256:\(Self.sha256)"],
            .conflict(.secondPin("--checksum", after: "--sha256")),
            "--checksum given after --sha256: give one checksum"
        ),
        MessageCase(
            [Self.url, "--checksum", "sha256:\(Self.sha256)", "--checksum-file", "S"],
            .conflict(.checksumFileAfterPin(first: "--checksum")),
            "--checksum-file given with --checksum: give one checksum"
        ),
        MessageCase([], .noURL, "no URL given (see --help)"),
        MessageCase(
            ["-i", "M", Self.url],
            .conflict(.urlsWithInputFile),
            "give URLs on the command line or with -i, not both"
        ),
        MessageCase(
            ["--base-url", "https://b.test/", Self.url],
            .conflict(.baseURLWithoutInputFile),
            "--base-url goes with -i FILE (or --checksum-file FILE without a URL): every entry of FILE is fetched"
        ),
        MessageCase(
            [Self.url, "-o", "x", "--content-disposition"],
            .conflict(.outputAndContentDisposition),
            "-o and --content-disposition both name the file: give one"
        ),
        MessageCase([Self.url, "-v", "-q"], .conflict(.verboseAndQuiet), "-v and -q: give one"),
        MessageCase(
            [Self.url, "--shard", "0/2"],
            .conflict(.shardWithoutInputFile),
            "--shard goes with -i"
        ),
        MessageCase(
            ["-i", "M", "--shard", "auto"],
            .conflict(.automaticShardWithoutCount),
            "--shard auto needs --shard-count N (the Job's completions)"
        ),
    ]

    @Test(arguments: Self.messageCases)
    func `each kind of usage error is a typed value with today's message`(example: MessageCase) {
        let error = #expect(throws: ArgumentError.self) { try Arguments.parsing(example.arguments, environment: [:]) }
        #expect(error == example.error)
        #expect(error?.message == example.message)
        let usage = #expect(throws: PinFetchError.self) { try Arguments.parse(example.arguments, environment: [:]) }
        #expect(usage == PinFetchError(.usage, example.message))
    }
}
