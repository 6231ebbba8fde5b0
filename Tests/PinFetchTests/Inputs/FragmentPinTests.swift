import Foundation
import Testing

/// A pin where pip and PyPI's simple index keep it: `URL#sha256=HEX`. It is checked, never
/// ignored: a wrong digest in it is a mismatch, a malformed one bad input.
struct FragmentPinTests {
    static let quiet = ["-q", "--json", "--retry-delay", "0", "--retries", "0"]

    @Test func `a wrong digest in the fragment is a mismatch, and the fragment is never sent`() async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let run = await runCLI(
                    Self.quiet + ["-o", "\(directory)/o", server.url() + "#sha256=\(Fixtures.sha256B)"]
                )
                #expect(run.status == 9, "\(run.standardError)")
                #expect(listing(directory).isEmpty)
                #expect(server.requests.allSatisfy { !$0.target.contains("#") && !$0.target.contains("sha256") })
            }
        }
    }

    @Test func `the right digest in the fragment pins the file: a rerun needs no request`() async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let url = server.url() + "#egg=tool&sha256=\(Fixtures.sha256A.uppercased())"
                #expect(await runCLI(Self.quiet + ["-o", "\(directory)/o", url]).status == 0)
                let again = await runCLI(Self.quiet + ["-o", "\(directory)/o", url])
                #expect(again.string("status") == "already-complete")
                #expect(server.getRequests.count == 1)
            }
        }
    }

    @Test(arguments: [
        ["--sha256", Fixtures.sha256A, "URL#sha256=\(Fixtures.sha256B)"],
        ["URL#sha256=\(Fixtures.sha256A)", "URL#sha256=\(Fixtures.sha256B)"],
        ["--checksum", "sha512:\(String(repeating: "a", count: 128))", "URL#sha256=\(Fixtures.sha256A)"],
        ["URL#sha256=nothex"],
        // Each of these looks like a pin: ignored, the file would download unverified with exit 0.
        ["URL#sha256="], ["URL#sha256"], ["URL#SHA-256=\(Fixtures.sha256A)"], ["URL#egg=x&md5=0123"],
        ["URL#sha512=\(Fixtures.sha256A)"], ["URL#egg=x&sha_256=\(Fixtures.sha256A)"],
    ])
    func `pins that disagree, or a malformed one, are bad input before any request`(arguments: [String]) async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let given = arguments.map { $0.replacingOccurrences(of: "URL", with: server.url()) }
                let run = await runCLI(Self.quiet + ["-o", "\(directory)/o"] + given)
                #expect(run.status == 2, "\(run.standardError)")
                #expect(server.requests.isEmpty)
                #expect(listing(directory).isEmpty)
            }
        }
    }

    /// Older simple indexes (and PyPI before 2016) wrote `#md5=HEX`: taken as `--checksum
    /// md5:HEX` is, with its warning, and only when no stronger pin is given.
    @Test func `an md5 fragment pins the file with the weak pin's warning, unless a stronger pin is given`()
        async throws
    {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let right = await runCLI(
                    Self.quiet + ["-o", "\(directory)/o", server.url() + "#md5=\(WeakPinFetchTests.md5A)"]
                )
                #expect(right.status == 0, "\(right.standardError)")
                #expect(right.standardError.contains("catches corruption, not tampering"), "\(right.standardError)")
                let wrong = await runCLI(
                    Self.quiet + ["-o", "\(directory)/p", server.url() + "#md5=" + String(repeating: "0", count: 32)]
                )
                #expect(wrong.status == 9, "\(wrong.standardError)")
                #expect(!FileManager.default.fileExists(atPath: "\(directory)/p"))
                let stronger = await runCLI(
                    Self.quiet + [
                        "--sha256", Fixtures.sha256A, "-o", "\(directory)/q",
                        server.url() + "#md5=" + String(repeating: "0", count: 32),
                    ]
                )
                #expect(stronger.status == 0, "\(stronger.standardError)")
                #expect(stronger.string("sha256") == Fixtures.sha256A)
                #expect(!stronger.standardError.contains("tampering"), "\(stronger.standardError)")
            }
        }
    }

    /// A refused fragment parameter is named, and the URL shown without its fragment's values
    /// (which `md5`, a secret's name in a query, would show as `***`).
    @Test func `a refused fragment names its parameter, not a hidden value`() async {
        let run = await runCLI(["https://h.test/f.whl#sha224=" + String(repeating: "a", count: 56)])
        #expect(run.status == 2)
        #expect(
            run.standardError
                == "pinfetch: https://h.test/f.whl#…: the fragment's 'sha224' is no pin pinfetch can check; "
                + "write sha256=HEX, sha384=HEX or sha512=HEX\n",
            "\(run.standardError)"
        )
    }

    @Test func `a manifest line's URL can carry its pin`() async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
            try await withTemporaryDirectory { directory in
                try "\(server.url())#sha256=\(Fixtures.sha256B) out\n".write(
                    toFile: "\(directory)/m",
                    atomically: true,
                    encoding: .utf8
                )
                let run = await runCLI(Self.quiet + ["-P", "\(directory)/d", "-i", "\(directory)/m"])
                #expect(run.status == 9)
            }
        }
    }

    @Test func `a percent-encoded fragment pin is decoded and checked`() async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let wrong = await runCLI(
                    Self.quiet + ["-o", "\(directory)/o", server.url() + "#sha256%3d\(Fixtures.sha256B)"]
                )
                #expect(wrong.status == 9, "\(wrong.standardError)")
                let right = await runCLI(
                    Self.quiet + ["-o", "\(directory)/o", server.url() + "#sha256%3D\(Fixtures.sha256A)"]
                )
                #expect(right.status == 0, "\(right.standardError)")
                #expect(right.string("sha256") == Fixtures.sha256A)
                // Parameters that only look alike are someone else's.
                let other = await runCLI(
                    Self.quiet + ["-o", "\(directory)/p", server.url() + "#shape=1&share&hashtag=x"]
                )
                #expect(other.status == 0, "\(other.standardError)")
            }
        }
    }

    /// With a remote checksum file, a malformed fragment pin is found before that file's fetch,
    /// not after it (exit 8 and two lines when that fetch failed).
    @Test func `a malformed fragment pin is bad input before a remote checksum file is fetched`() async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
            server.faults = TestFaults(status: 404)
            try await withTemporaryDirectory { directory in
                let run = await runCLI(
                    Self.quiet + [
                        "--checksum-file", server.url("/SUMS"), "-o", "\(directory)/o", server.url() + "#sha256=zz",
                    ]
                )
                #expect(run.status == 2, "\(run.standardError)")
                #expect(server.requests.isEmpty)
                #expect(run.lines.isEmpty)
            }
        }
    }
}
