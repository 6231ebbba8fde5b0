import Foundation
import Testing

/// Pins where people keep them (issue 12, point 3): a checksum file with a base URL.
struct ChecksumFileBaseURLTests {
    @Test func `--checksum-file SUMS --base-url URL/ without a URL fetches every entry`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: [])) { server in
            ManifestFetchTests.serveFiles(server)
            try await withTemporaryDirectory { directory in
                let sums = [1, 2].map { "\(Fixtures.sha256(ManifestFetchTests.body($0)))  f\($0)" }.joined(
                    separator: "\n"
                )
                try (sums + "\n").write(toFile: "\(directory)/SHA256SUMS", atomically: true, encoding: .utf8)
                let run = await runCLI(
                    [
                        "-q", "--checksum-file", "\(directory)/SHA256SUMS", "--base-url", server.url("/"), "-P",
                        "\(directory)/out",
                    ]
                )
                #expect(run.status == 0, "\(run.standardError)")
                #expect(listing("\(directory)/out") == ["f1", "f2"])
            }
        }
    }

    @Test(arguments: [["--sha256", Fixtures.sha256A], ["--checksum-file", "SUMS"]])
    func `a second pin with --base-url is bad input, not silently ignored`(extra: [String]) async throws {
        try await withTemporaryDirectory { directory in
            try "\(Fixtures.sha256A)  f1\n".write(toFile: "\(directory)/SUMS", atomically: true, encoding: .utf8)
            let given = extra.map { $0 == "SUMS" ? "\(directory)/SUMS" : $0 }
            let run = await runCLI(["-q", "-i", "\(directory)/SUMS", "--base-url", "http://127.0.0.1:9/"] + given)
            #expect(run.status == 2, "\(run.standardError)")
        }
    }
}
