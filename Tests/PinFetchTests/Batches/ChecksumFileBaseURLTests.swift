import Foundation
import Testing

@testable import PinFetch

/// Pins where people keep them: a checksum file with a base URL, its names taken byte for byte.
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

    /// User input: a checksum file naming café in NFC and in NFD, two files.
    @Test func `names that differ only in Unicode normalization are two files`() async throws {
        let composed = "caf\u{E9}"  // NFC
        let decomposed = "cafe\u{301}"  // NFD
        #expect(composed == decomposed && !composed.utf8.elementsEqual(decomposed.utf8))
        let bodies = ["/r/caf%C3%A9": Array("composed".utf8), "/r/cafe%CC%81": Array("decomposed".utf8)]
        try await withTestHTTPServer(serving: TestResource(body: [])) { server in
            server.handler = { request, _ in
                guard let body = bodies[request.target] else { return TestResponse(status: 404) }
                return TestResponse(status: 200, body: body)
            }
            try await withTemporaryDirectory { directory in
                let sums =
                    "\(Fixtures.sha256(bodies["/r/caf%C3%A9"]!))  \(composed)\n"
                    + "\(Fixtures.sha256(bodies["/r/cafe%CC%81"]!))  \(decomposed)\n"
                try sums.write(toFile: "\(directory)/SHA256SUMS", atomically: true, encoding: .utf8)
                let run = await runCLI(
                    quietOnce + [
                        "-i", "\(directory)/SHA256SUMS", "--base-url", server.url("/r/"), "-P", "\(directory)/o",
                    ]
                )
                #expect(run.status == 0, "\(run.standardError)")
                #expect(contents("\(directory)/o/\(composed)") == bodies["/r/caf%C3%A9"])
                #expect(contents("\(directory)/o/\(decomposed)") == bodies["/r/cafe%CC%81"])
                // The lookup of one name finds its own entry, not the other's.
                let file = try ChecksumFile(parsing: Array(sums.utf8))
                #expect(
                    try file.pin(for: decomposed).digest
                        == Pin.bytes(fromHex: Fixtures.sha256(bodies["/r/cafe%CC%81"]!))
                )
            }
        }
    }
}
