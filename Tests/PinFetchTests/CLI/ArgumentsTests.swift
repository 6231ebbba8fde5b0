import Foundation
import PinFetch
import Testing

@testable import PinFetchCLI

/// The command line: every option in both spellings, and usage errors (exit 2).
struct ArgumentsTests {
    static let url = "http://h.test/dir/file.bin"
    static let sha256 = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"

    /// What a parse produced, comparable as a whole.
    struct Parsed: Equatable, CustomStringConvertible {
        var action: Arguments.Action = .fetch
        var url = ArgumentsTests.url
        var output: String?
        var pin: String?
        var retries = 5
        var retryDelay = 1.0
        var connectTimeout: Double? = 30
        var stallTimeout: Double? = 60
        var lockTimeout: Double?
        var headers: [String] = []
        var json = false
        var quiet = false

        init() {}

        init(_ arguments: Arguments) {
            self.action = arguments.action
            self.url = arguments.urls.first ?? ""
            self.output = arguments.output
            self.pin = arguments.pin?.description
            self.retries = arguments.options.retries
            self.retryDelay = arguments.options.retryDelay
            self.connectTimeout = arguments.options.connectTimeout
            self.stallTimeout = arguments.options.stallTimeout
            self.lockTimeout = arguments.options.lockTimeout
            self.headers = arguments.options.headers
            self.json = arguments.json
            self.quiet = arguments.quiet
        }

        var description: String {
            "\(self.action) \(self.url) -o \(self.output ?? "-") pin \(self.pin ?? "-") retries \(self.retries) "
                + "delay \(self.retryDelay) connect \(self.connectTimeout ?? -1) stall \(self.stallTimeout ?? -1) "
                + "lock \(self.lockTimeout ?? -1) headers \(self.headers) json \(self.json) quiet \(self.quiet)"
        }
    }

    struct OptionCase: Sendable, CustomTestStringConvertible {
        var arguments: [String]
        var change: @Sendable (inout Parsed) -> Void
        var testDescription: String { self.arguments.joined(separator: " ") }

        init(_ arguments: [String], _ change: @escaping @Sendable (inout Parsed) -> Void) {
            self.arguments = arguments
            self.change = change
        }
    }

    static let pinned = "sha256:\(ArgumentsTests.sha256)"

    static let optionCases: [OptionCase] = [
        OptionCase([]) { _ in },
        OptionCase(["-o", "out.bin"]) { $0.output = "out.bin" },
        OptionCase(["--output", "dir/out.bin"]) { $0.output = "dir/out.bin" },
        OptionCase(["--output=out=1.bin"]) { $0.output = "out=1.bin" },
        OptionCase(["-o", "-dash"]) { $0.output = "-dash" },
        // curl's and wget's idiom for standard output is -o -.
        OptionCase(["-o", "/dev/stdout"]) { $0.output = "-" },
        OptionCase(["--output=/proc/self/fd/1"]) { $0.output = "-" },
        OptionCase(["--sha256", ArgumentsTests.sha256]) { $0.pin = ArgumentsTests.pinned },
        OptionCase(["--sha256=\(ArgumentsTests.sha256.uppercased())"]) { $0.pin = ArgumentsTests.pinned },
        OptionCase(["--checksum", "sha256:\(ArgumentsTests.sha256)"]) { $0.pin = ArgumentsTests.pinned },
        OptionCase(["--checksum=sha256:\(ArgumentsTests.sha256)"]) { $0.pin = ArgumentsTests.pinned },
        OptionCase(["--checksum=sha256-ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0="]) {
            $0.pin = ArgumentsTests.pinned
        },
        OptionCase(["--retries", "3"]) { $0.retries = 3 },
        OptionCase(["--retries=0"]) { $0.retries = 0 },
        OptionCase(["--retries", "1000"]) { $0.retries = 1000 },
        OptionCase(["--retry-delay", "0.25"]) { $0.retryDelay = 0.25 },
        OptionCase(["--retry-delay=0"]) { $0.retryDelay = 0 },
        OptionCase(["--connect-timeout", "5"]) { $0.connectTimeout = 5 },
        OptionCase(["--connect-timeout=0.5"]) { $0.connectTimeout = 0.5 },
        OptionCase(["--stall-timeout", "7"]) { $0.stallTimeout = 7 },
        OptionCase(["--stall-timeout=2.5"]) { $0.stallTimeout = 2.5 },
        OptionCase(["--lock-timeout", "0"]) { $0.lockTimeout = 0 },
        OptionCase(["--lock-timeout=12"]) { $0.lockTimeout = 12 },
        OptionCase(["-H", "X-A: 1"]) { $0.headers = ["X-A: 1"] },
        OptionCase(["--header", "Authorization: Bearer t"]) { $0.headers = ["Authorization: Bearer t"] },
        OptionCase(["--header=X-B: a=b"]) { $0.headers = ["X-B: a=b"] },
        OptionCase(["-H", "X-A: 1", "--header", "X-B:2", "-H", "X-A: 3"]) {
            $0.headers = ["X-A: 1", "X-B:2", "X-A: 3"]
        },
        OptionCase(["--json"]) { $0.json = true },
        OptionCase(["-q"]) { $0.quiet = true },
        OptionCase(["--quiet", "--json"]) {
            $0.quiet = true
            $0.json = true
        },
        OptionCase(["-h"]) {
            $0.action = .help
            $0.url = ""
        },
        OptionCase(["--version"]) {
            $0.action = .version
            $0.url = ""
        },
        OptionCase(["-V"]) {
            $0.action = .version
            $0.url = ""
        },
        OptionCase(["--help", "a", "b"]) {
            $0.action = .help
            $0.url = ""
        },
    ]

    @Test(arguments: Self.optionCases)
    func `each option parses in its spellings`(option: OptionCase) throws {
        var expected = Parsed()
        option.change(&expected)
        // Help and version need no URL; everything else gets one, before or after the options.
        if expected.action != .fetch {
            #expect(Parsed(try Arguments.parse(option.arguments)) == expected)
        } else {
            #expect(Parsed(try Arguments.parse(option.arguments + [Self.url])) == expected)
            #expect(Parsed(try Arguments.parse([Self.url] + option.arguments)) == expected)
        }
    }

    @Test(arguments: [
        (["--", "-odd-url"], "-odd-url"),
        (["-q", "--", "--json"], "--json"),
        (["--", Self.url], Self.url),
        (["-"], "-"),
    ])
    func `-- ends the options`(arguments: [String], url: String) throws {
        #expect(
            try Arguments.parse([Self.url, "--", "http://h.test/mirror/file.bin"]).urls
                == [Self.url, "http://h.test/mirror/file.bin"]
        )
        let parsed = try Arguments.parse(arguments)
        #expect(parsed.urls == [url])
        #expect(parsed.json == false)
    }

    @Test(arguments: [
        ["--bogus", Self.url],
        ["-y", Self.url],
        ["--Output", "a", Self.url],
        ["-o=a", Self.url],
        ["--output"],
        [Self.url, "-o"],
        [Self.url, "-H"],
        [Self.url, "--sha256"],
        [Self.url, "--retries"],
        [Self.url, "--output="],
        [Self.url, "-o", ""],
        [],
        ["-q", "--json"],
        ["--"],
        [Self.url, "--json=yes"],
        [Self.url, "--quiet=1"],
        [Self.url, "--retries", "-1"],
        [Self.url, "--retries", "x"],
        [Self.url, "--retries=1.5"],
        [Self.url, "--retries", "1001"],
        [Self.url, "--retries="],
        [Self.url, "--retry-delay", "-1"],
        [Self.url, "--retry-delay", "nan"],
        [Self.url, "--retry-delay", "inf"],
        [Self.url, "--retry-delay=-inf"],
        [Self.url, "--retry-delay", "1s"],
        [Self.url, "--retry-delay", "1e9"],
        [Self.url, "--connect-timeout", "0"],
        [Self.url, "--max-connections-per-host", "0"],
        [Self.url, "--max-connections-per-host", "65"],
        [Self.url, "--max-connections-per-host=x"],
        [Self.url, "--segments", "0"],
        [Self.url, "--segments", "17"],
        [Self.url, "--segments", "auto2"],
        [Self.url, "--segment-size", "63K"],
        [Self.url, "--segment-size", "2G"],
        [Self.url, "--segment-size", "-1M"],
        [Self.url, "--stall-timeout=-2"],
        [Self.url, "--lock-timeout", "NaN"],
        [Self.url, "-H", "NoColon"],
        [Self.url, "-H", "X-A: 1\r\nX-B: 2"],
        [Self.url, "-H", "X-A: 1\nX-B: 2"],
        [Self.url, "-H", "X-A: 1\r"],
        [Self.url, "--header=X-A: \u{0}"],
        [Self.url, "-H", ": value"],
        [Self.url, "-H", "Bad Name: value"],
        [Self.url, "-H", "X-A\r\n: value"],
        [Self.url, "--sha256", Self.sha256, "--checksum", "sha256:\(Self.sha256)"],
        [Self.url, "--checksum", "sha256:\(Self.sha256)", "--sha256", Self.sha256],
        [Self.url, "--sha256", Self.sha256, "--sha256", Self.sha256],
        [Self.url, "--sha256", "sha512:\(Self.sha256)"],
        [Self.url, "--sha256", "12"],
        [Self.url, "--checksum", "md5:d41d8cd98f00b204e9800998ecf8427"],
    ])
    func `bad arguments are usage errors`(arguments: [String]) {
        let error = #expect(throws: PinFetchError.self) { try Arguments.parse(arguments) }
        #expect(error?.code == .usage)
        #expect(error?.code.exitStatus == 2)
        #expect(error?.message.isEmpty == false)
        #expect(error?.message.contains("\n") == false)
    }

    @Test func `--segments and --segment-size set the connections and piece size of one file`() throws {
        let defaults = try Arguments.parse([Self.url]).options
        #expect(defaults.segments == 1 && defaults.segmentPieceSize == 8 << 20)
        let set = try Arguments.parse([Self.url, "--segments", "8", "--segment-size=1M"]).options
        #expect(set.segments == 8 && set.segmentPieceSize == 1 << 20)
        #expect(try Arguments.parse([Self.url, "--segment-size", "64K"]).options.segmentPieceSize == 64 << 10)
        let automatic = try Arguments.parse([Self.url, "--segments", "auto"]).options
        #expect(automatic.segments == 8 && automatic.segmentsAutomatic)
    }

    @Test func `--max-connections-per-host sets the batch's bound, 8 when not given`() throws {
        #expect(try Arguments.parse([Self.url]).options.maximumConnectionsPerHost == 8)
        #expect(
            try Arguments.parse([Self.url, "--max-connections-per-host", "1"]).options.maximumConnectionsPerHost == 1
        )
        #expect(
            try Arguments.parse([Self.url, "--max-connections-per-host=64"]).options.maximumConnectionsPerHost == 64
        )
    }

    @Test func `header values stay out of error messages`() {
        let error = #expect(throws: PinFetchError.self) {
            try Arguments.parse([Self.url, "-H", "Authorization: Bearer s3cret\r\nX: y"])
        }
        #expect(error?.message.contains("s3cret") == false)
    }

    @Test(arguments: [
        ("http://h/a/b.tar.gz?x=1", "b.tar.gz"),
        ("http://h/a/b.tar.gz#frag", "b.tar.gz"),
        ("https://h:8443/dir/file%20name.txt", "file name.txt"),
        ("http://h/f", "f"),
        ("http://h/a/%C3%BC.bin", "ü.bin"),
        ("http://h/a/b.bin?next=/c/d.iso", "b.bin"),
        ("http://user@h/x/y", "y"),
    ])
    func `the destination is the last segment of the URL path`(url: String, name: String) throws {
        #expect(try Arguments.parse([url]).destination(of: HTTPURL(url)) == name)
    }

    @Test(arguments: [
        "http://h/", "http://h/dir/", "http://h/..", "http://h/.", "http://h", "http://h?x=/y", "http://h/a/%2E%2E",
        "http://h/a%2Fb", "http://h/a/%00", "http://h/a/%0A", "http://h/dir/?name=f",
    ])
    func `a URL without a usable file name needs -o`(url: String) throws {
        let arguments = try Arguments.parse([url])
        let error = #expect(throws: PinFetchError.self) { try arguments.destination(of: HTTPURL(url)) }
        #expect(error?.code.exitStatus == 2)
        #expect(try Arguments.parse([url, "-o", "given"]).destination(of: HTTPURL(url)) == "given")
    }
}

/// The command as a whole: usage errors exit 2 and touch nothing; help and version exit 0.
struct CommandLineUsageTests {
    @Test(arguments: [
        ["--sha256", "not-a-digest", "http://127.0.0.1:9/f"],
        ["--checksum", "sha384-abc", "http://127.0.0.1:9/f"],
        ["--retries", "-1", "http://127.0.0.1:9/f"],
        ["ftp://x/y"],
        ["http://"],
        ["not a url"],
        ["file:///etc/passwd"],
        ["http:///path"],
        ["--json", "ftp://x/y"],
    ])
    func `bad input exits 2 and creates no files`(arguments: [String]) async throws {
        try await withTemporaryDirectory { directory in
            let run = await runCLI(["-q", "-o", "\(directory)/x"] + arguments)
            #expect(run.status == 2)
            #expect(run.standardError.hasPrefix("pinfetch: "))
            #expect(run.standardError.hasSuffix("\n"))
            #expect(listing(directory) == [])
        }
    }

    @Test func `a URL naming no file exits 2 without -o`() async {
        let run = await runCLI(["-q", "http://127.0.0.1:9/"])
        #expect(run.status == 2)
        #expect(run.standardError.hasPrefix("pinfetch: "))
        #expect(run.standardOutput == "")
    }

    @Test(arguments: [["--help"], ["-h"], ["-h", "http://h/f"], ["help"]])
    func `help exits 0 and prints the usage on stdout`(arguments: [String]) async {
        let run = await runCLI(arguments)
        #expect(run.status == 0)
        #expect(run.standardOutput == CommandLineTool.usage)
        #expect(run.standardOutput.hasPrefix("Usage: pinfetch [options] URL"))
        #expect(run.standardOutput.contains("--sha256"))
        #expect(run.standardError == "")
    }

    @Test func `help gc and help completion print those commands' usage`() async {
        let gc = await runCLI(["help", "gc"])
        #expect(gc.status == 0 && gc.standardOutput.hasPrefix("usage: pinfetch gc"), "\(gc.standardError)")
        #expect(gc.standardOutput.split(separator: "\n").allSatisfy { $0.count <= HelpText.width })
        let completion = await runCLI(["help", "completion"])
        #expect(
            completion.status == 0 && completion.standardOutput.hasPrefix("usage: pinfetch completion bash|zsh|fish")
        )
    }

    @Test(arguments: [["--version"], ["-V"]])
    func `version exits 0 and prints its version and those of libcurl, OpenSSL and nghttp2`(arguments: [String]) async {
        let run = await runCLI(arguments)
        #expect(run.status == 0)
        #expect(run.standardOutput.hasPrefix("pinfetch \(PinFetchVersion.current) (libcurl/"))
        let libraries = run.standardOutput.split(separator: " ").dropFirst(2).map(String.init)
        // The libcurl, OpenSSL and nghttp2 that run (Debian's libcurl4 is built with all three).
        #expect(libraries.contains { $0.hasPrefix("OpenSSL/") }, "\(run.standardOutput)")
        #expect(libraries.contains { $0.hasPrefix("nghttp2/") }, "\(run.standardOutput)")
        #expect(run.standardError == "")
    }

    @Test(arguments: [
        (["https://h/f"], false), (["-R", "https://h/f"], true), (["--remote-time", "https://h/f"], true),
        (["-i", "S", "--base-url", "https://h/"], true),
        (["-i", "S", "--base-url", "https://h/", "--no-remote-time"], false),
        (["--no-remote-time", "-R", "https://h/f"], true), (["-i", "S"], false),
    ])
    func `remote time is on with --base-url or -R, and --no-remote-time turns it off`(
        arguments: [String],
        expected: Bool
    ) throws {
        #expect(try Arguments.parse(arguments).options.remoteTime == expected)
    }
}
