import Foundation
@preconcurrency import Glibc
import PinFetch
import Testing

@testable import PinFetchCLI

/// curl's and wget's hands: their spellings of what pinfetch does parse as pinfetch's own,
/// bundled short options work, deliberate differences are refused with the reason, other
/// options of theirs get a hint, and URLs of different files are never taken for mirrors.
struct FamiliarOptionTests {
    static let url = "http://h.test/dir/file.bin"

    /// What `arguments` parse to, comparable as text.
    static func parsed(_ arguments: [String]) throws(ArgumentError) -> String {
        try OptionTableTests.parsed(arguments, [:])
    }

    /// The message `arguments` are refused with (exit 2).
    static func refusal(_ arguments: [String]) -> String? {
        do throws(PinFetchError) {
            _ = try Arguments.parse(arguments, environment: [:])
            return nil
        } catch {
            return error.code == .usage ? error.message : "not a usage error: \(error.message)"
        }
    }

    @Test(arguments: [
        (["-fsSLO", Self.url], ["-q", "--remote-name", Self.url]),
        (["-fsSL", "-O", Self.url], ["--silent", "--remote-name", Self.url]),
        (["-j4", "-qo", "F", Self.url], ["-j", "4", "-q", "-o", "F", Self.url]),
        (["-qoF", Self.url], ["-q", "-o", "F", Self.url]),
        (["--retry", "3", Self.url], ["--retries", "3", Self.url]),
        (["--retry=3", Self.url], ["--retries", "3", Self.url]),
        (["-t", "3", Self.url], ["--retries", "2", Self.url]),
        (["--tries=1", Self.url], ["--retries", "0", Self.url]),
        (["-t", "0", Self.url], ["--retries", "1000", Self.url]),
        (["--tries", "inf", Self.url], ["--retries", "1000", Self.url]),
        (["-C", "-", "-c", "--create-dirs", "-L", "-O", Self.url], ["-O", Self.url]),
        (
            ["--continue-at=-", "--location", "--fail", "--show-error", "--continue", "-o", "f", Self.url],
            ["-o", "f", Self.url]
        ),
        (["-fsSL", "-P", "d", Self.url], ["-q", "-P", "d", Self.url]),
        // curl's -sv: verbose, which draws no progress; not -q with -v.
        (["-sv", "-O", Self.url], ["-v", "-O", Self.url]),
        (["--output-dir", "d", Self.url], ["-P", "d", Self.url]),
        (["-m", "9", Self.url], ["--max-time", "9", Self.url]),
        (["-x", "http://p.test:3128", Self.url], ["--proxy", "http://p.test:3128", Self.url]),
        (["-A", "ci/1.0", Self.url], ["-H", "User-Agent: ci/1.0", Self.url]),
        (["--silent", "-O", Self.url], ["--quiet", "-O", Self.url]),
        (["--no-progress-meter", "-O", Self.url], ["--quiet", "-O", Self.url]),
        (["-OJ", Self.url], ["-O", "--content-disposition", Self.url]),
        (["-OsL", Self.url], ["-O", "-q", Self.url]),
        (["--retry-connrefused", "-O", Self.url], ["-O", Self.url]),
        // wget's -O - (standard output), alone and bundled: -o - here.
        (["-O", "-", Self.url], ["--remote-name", "-o", "-", Self.url]),
        (["-qO-", Self.url], ["-q", "--remote-name", "-o", "-", Self.url]),
        (["-q", "-O-", Self.url], ["-q", "--remote-name", "-o", "-", Self.url]),
    ])
    func `a curl or wget spelling parses as pinfetch's own`(given: [String], same: [String]) throws {
        #expect(try Self.parsed(given) == Self.parsed(same), "\(given)")
    }

    @Test func `-U gives the proxy credentials, -nc the no-clobber rule`() throws {
        let proxied = try Arguments.parse(["-x", "http://p.test:3128", "-U", "ci:pw", Self.url], environment: [:])
        #expect(proxied.options.proxyCredentials == "ci:pw")
        #expect(try Arguments.parse(["-nc", Self.url], environment: [:]).options.noClobber)
        #expect(try Arguments.parse(["--no-clobber", Self.url], environment: [:]).options.noClobber)
        #expect(!(try Arguments.parse([Self.url], environment: [:]).options.noClobber))
    }

    @Test func `a relative -o is under -P, an absolute one and standard output are as given`() throws {
        func destination(_ arguments: [String]) throws -> String {
            let parsed = try Arguments.parse(arguments + [Self.url], environment: [:])
            return try parsed.destination(of: try HTTPURL(Self.url))
        }
        #expect(try destination(["-P", "d", "-o", "f"]) == "d/f")
        #expect(try destination(["-o", "sub/f", "--output-dir", "d/"]) == "d/sub/f")
        #expect(try destination(["-P", "d", "-o", "/abs/f"]) == "/abs/f")
        #expect(try destination(["-P", "d", "-o", "-"]) == "-")
        #expect(try destination(["-P", "d"]) == "d/file.bin")
    }

    @Test(arguments: [
        (
            ["-k", Self.url],
            "-k: certificate verification cannot be turned off; trust the server's CA with --cacert FILE"
        ),
        (["--insecure", Self.url], "--insecure: certificate verification cannot be turned off"),
        (
            ["--no-check-certificate", Self.url],
            "unknown option --no-check-certificate: certificate verification cannot"
        ),
        (["-fk", Self.url], "-k: certificate verification cannot be turned off"),
        (["-C", "1000", Self.url], "-C: pinfetch resumes where its checkpoint proves the bytes, not at an offset"),
        (
            ["-U", "agent/1", Self.url],
            "-U: takes USER:PASSWORD for the proxy (curl's -U); wget's -U AGENT is -A AGENT"
        ),
        (["-t", "-1", Self.url], "-t takes a whole number from 1 to 1001, 0 or inf, not '-1'"),
        // wget's -U with a browser's agent, which holds a colon: not proxy credentials.
        (
            ["-U", "Mozilla/5.0 (X11; Linux x86_64; rv:109.0) Gecko/20100101 Firefox/115.0", Self.url],
            "-U: takes USER:PASSWORD for the proxy (curl's -U); wget's -U AGENT is -A AGENT"
        ),
        // wget's -Ofile, bundled or not: a file name, never -O -o ut.txt.
        (
            ["-qOout.txt", Self.url],
            "-O is curl's --remote-name (the URL's name, pinfetch's default) and takes no file"
        ),
        (
            ["-Ofile.txt", Self.url],
            "-O is curl's --remote-name (the URL's name, pinfetch's default) and takes no file: for wget's -O 'file.txt' give -o 'file.txt'"
        ),
        (
            ["-O", "out.bin", Self.url],
            "-O is curl's --remote-name (the URL's name, pinfetch's default) and takes no file"
        ),
        (["--compressed", Self.url], "unknown option --compressed: pinfetch asks for the bytes as stored"),
        (["-X", "POST", Self.url], "unknown option -X: pinfetch only downloads (GET)"),
        (["-nv", Self.url], "unknown option -nv: progress shows by itself on a terminal"),
        (["-N", Self.url], "unknown option -N: a rerun asks the server whether its recorded file changed"),
        (["-Z", Self.url], "unknown option -Z: -j N fetches N files at once"),
        (["-fZ", Self.url], "unknown option -Z: -j N fetches N files at once"),
        (["--retires", "3", Self.url], "unknown option --retires (did you mean --retries? see --help)"),
        (["--jsno", Self.url], "unknown option --jsno (did you mean --json? see --help)"),
        (["--frobnicate", Self.url], "unknown option --frobnicate (see --help)"),
        // A hint, not a near miss of another option (--proto is not --proxy).
        (["--proto", "=https", Self.url], "unknown option --proto: pinfetch speaks only HTTP and HTTPS"),
        (["--tlsv1.2", Self.url], "unknown option --tlsv1.2: the TLS version is the system OpenSSL's choice"),
        (["-e", "robots=off", Self.url], "unknown option -e: curl's -e is -H 'Referer: URL'; wget's -e COMMAND"),
        (["-nd", Self.url], "unknown option -nd: pinfetch names a file after its URL's last segment"),
        (["--cut-dirs=2", Self.url], "unknown option --cut-dirs: pinfetch names a file after"),
        (["-4", Self.url], "unknown option -4: pinfetch connects to the addresses the host name resolves to"),
        (["--retry-all-errors", Self.url], "unknown option --retry-all-errors: pinfetch retries what another"),
        (["--fail-with-body", Self.url], "unknown option --fail-with-body: an HTTP error is always a failure"),
        (["--max-redirs", "-1", Self.url], "--max-redirs takes a whole number from 0 to 100, not '-1'"),
        // curl without -O or -o writes to standard output: `pinfetch -fsSL URL | sh` must not
        // save a file and pipe nothing.
        (
            ["-fsSL", Self.url],
            "-fsSL is curl's, and curl without -O or -o writes the body to standard output: give -o -"
        ),
        (["-q", "--location", Self.url], "--location is curl's, and curl without -O or -o writes"),
        (["-s", "--sha256", OptionTableTests.sha256, Self.url], "-s is curl's, and curl without -O or -o"),
        // A second -o is a second file (curl pairs each -o with a URL): refused, not the last one kept.
        (
            ["-o", "a", "http://h.test/a", "-o", "b", "http://h.test/b"],
            "-o given twice: one command line fetches one file; for several give -i FILE"
        ),
        (["-o", "a", "-O", "-", Self.url], "-O given twice: one command line fetches one file"),
        (["-P", "a", "--output-dir", "b", Self.url], "--output-dir given twice: give one directory"),
        (["-Pa", "-P", "a", Self.url], "-P given twice: give one directory"),
        (
            ["-k", Self.url],
            "-k: certificate verification cannot be turned off; trust the server's CA with --cacert FILE (or CURL_CA_BUNDLE); wget's -k (--convert-links) is not needed"
        ),
        // curl's cookie jar, not a URL after wget's -c.
        (
            ["-c", "cookies.txt", "-O", Self.url],
            "-c: -c is wget's --continue here (always done), so 'cookies.txt' would be a URL"
        ),
        (["--wait=1", Self.url], "unknown option --wait: pinfetch waits only before a retry (--retry-delay S)"),
        (["--show-progress", Self.url], "unknown option --show-progress: progress shows by itself on a terminal"),
        (["--resolve", "h:80:127.0.0.1", Self.url], "unknown option --resolve: pinfetch resolves host names with"),
        (["--capath", "/etc/ssl/certs", Self.url], "unknown option --capath: give --cacert FILE"),
        (
            ["--remote-name-all", Self.url],
            "unknown option --remote-name-all: a file is named after its URL's last segment"
        ),
        (["--retry-on-http-error=503", Self.url], "unknown option --retry-on-http-error: pinfetch retries HTTP 408"),
        (["--location-trusted", Self.url], "unknown option --location-trusted: credentials go only to the origin"),
        (["--sha512", "x", Self.url], "unknown option --sha512: give --checksum sha512:HEX"),
        (["--outdir", "d", Self.url], "unknown option --outdir: give --output-dir DIR (or -P DIR)"),
        // A value forgotten: the next option is not taken for it (a file named -q, the agent -o).
        (["-o", "-q", Self.url], "-o needs a value, and '-q' is an option: give the value first"),
        (["-A", "-o", "out", Self.url], "-A needs a value, and '-o' is an option"),
        (["--output-dir", "-s", "-O", Self.url], "--output-dir needs a value, and '-s' is an option"),
        (["-x", "--json", Self.url], "-x needs a value, and '--json' is an option"),
        (["-qo", "-L", Self.url], "-o needs a value, and '-L' is an option"),
        (["-H", "@/nonexistent/h.txt", Self.url], "-H @/nonexistent/h.txt: No such file or directory"),
    ])
    func `a deliberate difference is refused with its reason, another option with a hint`(
        given: [String],
        message: String
    ) {
        let refusal = Self.refusal(given)
        #expect(refusal?.hasPrefix(message) == true, "\(given): \(refusal ?? "accepted")")
    }

    /// A host name typed without its scheme, as a browser's address bar takes it.
    @Test(arguments: ["example.com/file.tar.gz", "localhost:8080/f", "releases.example.org"])
    func `a URL without its scheme is refused with the https one to give`(url: String) async {
        let run = await runCLI([url])
        #expect(run.status == 2)
        #expect(
            run.standardError == "pinfetch: malformed URL '\(url)': no scheme (did you mean 'https://\(url)'?)\n",
            "\(run.standardError)"
        )
    }

    @Test func `URLs of different files are refused before any request, naming both ways`() throws {
        let message = Self.refusal(["http://a.test/x.tar.gz", "http://b.test/y.tar.gz"]) ?? ""
        #expect(message.contains("'x.tar.gz', 'y.tar.gz'"), "\(message)")
        #expect(message.contains("-i FILE") && message.contains("-o NAME or a pin"), "\(message)")
        // Mirrors: the same name, or tied by -o or a pin.
        #expect(Self.refusal(["http://a.test/x.tar.gz", "http://b.test/pub/x.tar.gz"]) == nil)
        #expect(Self.refusal(["-o", "x", "http://a.test/x.tar.gz", "http://b.test/y.tar.gz"]) == nil)
        #expect(Self.refusal(["--sha256", OptionTableTests.sha256, "http://a.test/x", "http://b.test/y"]) == nil)
    }
}

/// The same options against the test server: what reaches it, and the files on disk.
struct FamiliarOptionFetchTests {
    static let quiet = ["--json", "--retry-delay", "0"]

    @Test func `curl's -fsSLO, -A and --retry reach the server as pinfetch's own`() async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
            try await withTemporaryDirectory { directory in
                server.enqueueFaults(TestFaults(status: 503))
                let run = await runCLI(
                    Self.quiet + [
                        "-fsSLO", "--retry", "1", "-A", "ci-agent/2", "--output-dir", directory, server.url(),
                    ]
                )
                #expect(run.status == 0, "\(run.standardError)")
                #expect(run.standardError.isEmpty, "-s prints nothing on success: \(run.standardError)")
                let same = contents("\(directory)/file") == Fixtures.a
                #expect(same)
                #expect(server.getRequests.count == 2, "one retry after the 503")
                #expect(server.getRequests.allSatisfy { $0.header("User-Agent") == "ci-agent/2" })
            }
        }
    }

    @Test func `curl's --max-redirs bounds the redirects followed`() async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
            // /r3 → /r2 → /r1 → /file: three redirects.
            server.handler = { request, _ in
                guard request.target.hasPrefix("/r"), let hops = Int(request.target.dropFirst(2)) else { return nil }
                return TestResponse(status: 302, headers: [("Location", hops > 1 ? "/r\(hops - 1)" : "/file")])
            }
            try await withTemporaryDirectory { directory in
                let refused = await runCLI(
                    Self.quiet + [
                        "-q", "--retries", "0", "--max-redirs", "2", "-o", "\(directory)/a", server.url("/r3"),
                    ]
                )
                #expect(refused.status == 7, "\(refused.standardError)")
                #expect(refused.standardError.contains("more than 2 redirects"), "\(refused.standardError)")
                #expect(!FileManager.default.fileExists(atPath: "\(directory)/a"))
                let followed = await runCLI(
                    Self.quiet + ["-q", "--max-redirect", "3", "-o", "\(directory)/b", server.url("/r3")]
                )
                #expect(followed.status == 0, "\(followed.standardError)")
                let same = contents("\(directory)/b") == Fixtures.a
                #expect(same)
            }
        }
    }

    @Test func `wget's -t 1 is one attempt in all`() async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
            try await withTemporaryDirectory { directory in
                server.enqueueFaults(TestFaults(status: 503))
                let run = await runCLI(Self.quiet + ["-q", "-t", "1", "-P", directory, server.url()])
                #expect(run.status == 8, "\(run.standardError)")
                #expect(server.getRequests.count == 1)
            }
        }
    }

    @Test func `-nc leaves an unpinned file as it is, reported with its digest, and asks nothing`() async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let output = "\(directory)/file"
                let mine = Array("my own bytes\n".utf8)
                try Data(mine).write(to: URL(fileURLWithPath: output))
                let run = await runCLI(Self.quiet + ["-q", "-nc", "-o", output, server.url()])
                #expect(run.status == 0, "\(run.standardError)")
                #expect(run.string("status") == "already-complete")
                #expect(run.string("sha256") == Fixtures.sha256(mine))
                #expect(run.int("downloaded_bytes") == 0)
                #expect(contents(output) == mine)
                #expect(server.requests.isEmpty, "\(server.requests.map(\.target))")
                // Without -nc the same command replaces it.
                let replaced = await runCLI(Self.quiet + ["-q", "-o", output, server.url()])
                #expect(replaced.status == 0, "\(replaced.standardError)")
                let same = contents(output) == Fixtures.a
                #expect(same)
            }
        }
    }

    @Test func `-nc with a pin the file does not hold fails and leaves the file`() async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let output = "\(directory)/file"
                let mine = Array("my own bytes\n".utf8)
                try Data(mine).write(to: URL(fileURLWithPath: output))
                let run = await runCLI(
                    Self.quiet + ["-q", "-nc", "--sha256", Fixtures.sha256A, "-o", output, server.url()]
                )
                #expect(run.status == 3, "\(run.standardError)")
                #expect(run.standardError.contains("--no-clobber leaves it"), "\(run.standardError)")
                #expect(contents(output) == mine)
                #expect(server.getRequests.isEmpty)
                // A file that holds the pinned bytes is simply complete.
                try Data(Fixtures.a).write(to: URL(fileURLWithPath: output))
                let held = await runCLI(
                    Self.quiet + ["-q", "-nc", "--sha256", Fixtures.sha256A, "-o", output, server.url()]
                )
                #expect(held.status == 0, "\(held.standardError)")
                #expect(held.string("status") == "already-complete")
            }
        }
    }
}

/// What a person reads about a file: short lines, the whole digest only with `-v` or `--json`.
struct ResultLineTests {
    @Test(arguments: [false, true])
    func `a result line gives the size in units and the digest's start, all of it with -v`(
        verbose: Bool
    )
        async throws
    {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let output = "\(directory)/file.bin"
                let run = await runCLI(["--retry-delay", "0", "-o", output, server.url()] + (verbose ? ["-v"] : []))
                #expect(run.status == 0, "\(run.standardError)")
                let size = ProgressReporter.size(Int64(Fixtures.a.count))
                let digest = verbose ? Fixtures.sha256A : Fixtures.sha256A.prefix(8) + "…"
                #expect(
                    run.standardError.contains("pinfetch: \(output)  \(size)  sha256:\(digest)  downloaded\n"),
                    "\(run.standardError)"
                )
            }
        }
    }
}

/// `--include` and `--exclude` choose the entries of a checksum file by their listed names.
struct EntryFilterTests {
    @Test func `only the entries the globs choose are fetched, before the shard is taken`() async throws {
        let sums =
            [("linux/amd64/tool", Fixtures.a), ("linux/arm64/tool", Fixtures.a), ("darwin/arm64/tool", Fixtures.a)]
            .map { "\(Fixtures.sha256($0.1))  \($0.0)" }.joined(separator: "\n") + "\n"
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
            try await withTemporaryDirectory { directory in
                try sums.write(toFile: "\(directory)/SHA256SUMS", atomically: true, encoding: .utf8)
                let base = [
                    "-q", "--retry-delay", "0", "-i", "\(directory)/SHA256SUMS", "--base-url", server.url("/r/"),
                ]
                let run = await runCLI(
                    base + ["-P", "\(directory)/out", "--include", "linux/*", "--exclude", "*/arm64/*"]
                )
                #expect(run.status == 0, "\(run.standardError)")
                #expect(server.getRequests.map(\.target) == ["/r/linux/amd64/tool"])
                let same = contents("\(directory)/out/linux/amd64/tool") == Fixtures.a
                #expect(same)
                #expect(!FileManager.default.fileExists(atPath: "\(directory)/out/linux/arm64"))

                let none = await runCLI(base + ["-P", "\(directory)/none", "--include", "*.zip"])
                #expect(none.status == 2)
                #expect(none.standardError.contains("--include and --exclude leave none of its 3 entries"))
                let alone = await runCLI(["--include", "*", server.url("/f")])
                #expect(alone.status == 2)
                #expect(alone.standardError.contains("--include and --exclude choose entries of -i FILE"))
            }
        }
    }
}
