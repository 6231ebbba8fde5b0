import Foundation
import Testing

/// `--checksum-file FILE|URL`: the entry is chosen by the destination's file name.
struct ChecksumFileFetchTests {
    static let quiet = ["-q", "--json", "--retry-delay", "0"]
    static var resourceA: TestResource { TestResource(body: Fixtures.a, etag: Fixtures.etagA) }

    @Test(arguments: [(Fixtures.sha256A, Int32(0)), (Fixtures.sha256B, Int32(9))])
    func `a local checksum file pins the download`(digest: String, expected: Int32) async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let sums = "\(directory)/SHA256SUMS"
                try "\(Fixtures.sha256B)  other.bin\n\(digest) *out.bin\n".write(
                    toFile: sums,
                    atomically: true,
                    encoding: .utf8
                )
                let run = await runCLI(
                    Self.quiet + ["--checksum-file", sums, "-o", "\(directory)/out.bin", server.url()]
                )
                #expect(run.status == expected)
                #expect(FileManager.default.fileExists(atPath: "\(directory)/out.bin") == (expected == 0))
            }
        }
    }

    @Test func `a checksum file can be fetched from a URL`() async throws {
        let sums = Array("SHA256 (out.bin) = \(Fixtures.sha256A)\r\n".utf8)
        try await withTestHTTPServer(serving: TestResource(body: sums)) { sumsServer in
            try await withTestHTTPServer(serving: Self.resourceA) { server in
                try await withTemporaryDirectory { directory in
                    let run = await runCLI(
                        Self.quiet + ["--checksum-file", sumsServer.url("/SHA256SUMS"), "-o", "\(directory)/out.bin"]
                            + [server.url()]
                    )
                    #expect(run.status == 0)
                    #expect(run.string("sha256") == Fixtures.sha256A)
                    #expect(listing(directory) == ["out.bin"])
                }
            }
        }
    }

    @Test(arguments: [
        "\(String(repeating: "a", count: 64))  something-else.bin\n",
        "9e107d9d372bb6826bd81d3542a419d6  out.bin\n",  // md5sum's: MD5 is taken only spelled out
        "SHA224 (out.bin) = \(String(repeating: "b", count: 56))\n",
        "\(Fixtures.sha256A)  out.bin\n\(Fixtures.sha256B)  out.bin\n",
        "not a checksum file\n",
    ])
    func `an unusable checksum file is exit 2 before anything is downloaded`(text: String) async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let sums = "\(directory)/SUMS"
                try text.write(toFile: sums, atomically: true, encoding: .utf8)
                let run = await runCLI(
                    Self.quiet + ["--checksum-file", sums, "-o", "\(directory)/out.bin", server.url()]
                )
                #expect(run.status == 2)
                #expect(server.requests.isEmpty)
                #expect(listing(directory) == ["SUMS"])
                #expect(run.standardOutput.isEmpty)
            }
        }
    }
}
