import Foundation
import PinFetch
import Testing

/// MD5 and SHA-1 pins, spelled out: the file is checked against them (and resumed with their
/// checkpoint state), a warning says what they do not prove, and no cache takes or gives bytes
/// for them.
struct WeakPinFetchTests {
    static let md5A = Pin.hex(HashAlgorithm.md5.digest(of: Fixtures.a))
    static let sha1A = Pin.hex(HashAlgorithm.sha1.digest(of: Fixtures.a))

    @Test(arguments: ["md5:\(Self.md5A)", "sha1:\(Self.sha1A)", "sha-1=\(Self.sha1A)"])
    func `a weak pin is checked, warned about, resumed and kept out of the cache`(spec: String) async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let cache = "\(directory)/cache"
                let output = "\(directory)/out.bin"
                let arguments = ["--json", "--retries", "0", "--cache-dir", cache, "--checksum", spec, "-o", output]
                // Cut short, then resumed from the partial with the algorithm's checkpoint.
                server.enqueueFaults(TestFaults(closeAfterBodyBytes: 600_000))
                let first = await runCLI(arguments + [server.url()])
                #expect(first.status == 4, "\(first.standardError)")
                let second = await runCLI(arguments + [server.url()])
                #expect(second.status == 0, "\(second.standardError)")
                #expect(second.string("status") == "resumed", "\(second.standardOutput)")
                #expect(second.int("rehashed_bytes") == 0, "\(second.standardOutput)")
                let same = contents(output) == Fixtures.a
                #expect(same)
                #expect(
                    second.standardError.contains("'out.bin' is pinned by")
                        && second.standardError.contains("catches corruption, not tampering"),
                    "no warning naming the file: \(second.standardError)"
                )
                // Nothing went into the cache, under any algorithm.
                let entries = (try? FileManager.default.subpathsOfDirectory(atPath: cache)) ?? []
                #expect(!entries.contains { $0.contains("/") && !$0.hasPrefix(".") }, "\(entries)")
            }
        }
    }

    @Test func `bytes that do not match a weak pin are exit 9, nothing placed`() async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let wrong = "md5:" + String(repeating: "0", count: 32)
                let run = await runCLI([
                    "-q", "--retries", "0", "--checksum", wrong, "-o", "\(directory)/x", server.url(),
                ])
                #expect(run.status == 9, "\(run.standardError)")
                #expect(!FileManager.default.fileExists(atPath: "\(directory)/x"))
            }
        }
    }

    /// A checksum file that lists MD5 and SHA-256 for the file: the SHA-256 is the pin, and no
    /// warning is given.
    @Test func `a checksum file's stronger digest wins over its MD5 line`() async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let sums = "\(directory)/CHECKSUMS"
                let wrongMD5 = String(repeating: "0", count: 32)
                try "MD5 (file) = \(wrongMD5)\nSHA256 (file) = \(Fixtures.sha256A)\n"
                    .write(toFile: sums, atomically: true, encoding: .utf8)
                let run = await runCLI(["--json", "--checksum-file", sums, "-o", "\(directory)/file", server.url()])
                #expect(run.status == 0, "\(run.standardError)")
                #expect(run.string("sha256") == Fixtures.sha256A)
                #expect(!run.standardError.contains("not tampering"), "\(run.standardError)")
            }
        }
    }
}
