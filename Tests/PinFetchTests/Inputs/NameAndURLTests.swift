import Foundation
import Testing

@testable import PinFetch
@testable import PinFetchCLI

/// Names and URLs are clean: a name taken from a URL follows the rules of every other output name
/// (room for its sidecars included), a URL longer than 8 KiB is bad input with a short message,
/// and what a message echoes is escaped.
struct NameAndURLTests {
    @Test(arguments: [
        "http://h/invoice%E2%80%AEfdp.exe",  // U+202E, shown as "invoiceexe.pdf"
        "http://h/a%C2%85b",  // U+0085, a C1 control
        "http://h/a%E2%81%A6b",  // U+2066, an isolate
        "http://h/" + String(repeating: "a", count: 256),  // longer than a file name may be
    ])
    func `a URL whose last segment is no safe name needs -o`(url: String) {
        let error = #expect(throws: PinFetchError.self) { try Arguments.fileName(of: HTTPURL(url)) }
        #expect(error?.code == .usage)
        #expect(error?.message.contains("give -o PATH") == true)
    }

    @Test func `a name from the URL that is too long is exit 2 before -P is created`() async throws {
        try await withTemporaryDirectory { directory in
            let url = "http://127.0.0.1:9/" + String(repeating: "a", count: 300)
            let run = await runCLI(["-q", "-P", "\(directory)/out", url])
            #expect(run.status == 2)
            #expect(listing(directory).isEmpty)
        }
    }

    @Test func `a URL longer than 8 KiB is exit 2 with a short message`() async throws {
        let url = "http://h/x?" + String(repeating: "q", count: 9000)
        let error = #expect(throws: PinFetchError.self) { try HTTPURL(url) }
        #expect(error?.code == .usage)
        #expect((error?.message.count ?? .max) < 300)
        #expect(error?.message.contains("longer than 8 KiB (9011 bytes)") == true)
        let run = await runCLI(["-q", "-o", "/dev/null/x", url])
        #expect(run.status == 2)
        #expect(run.standardError.count < 400)
        #expect(try HTTPURL("http://h/" + String(repeating: "a", count: 8183)).text.utf8.count == 8192)
    }

    /// What a terminal or a CI log shows: progress bars, a retry, the result line and `--json`
    /// never show a password or the value of a signing query parameter.
    @Test func `secrets never reach a progress line, an error or the JSON line`() async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
            server.faults = TestFaults(bytesPerSecond: 1_500_000)  // long enough for a progress line
            server.enqueueFaults(TestFaults(closeAfterBodyBytes: 300_000))
            try await withTemporaryDirectory { directory in
                let url =
                    "http://alice:PassW0rd@127.0.0.1:\(server.port)/file?X-Amz-Signature=SigN4ture&token=T0ken&v=1"
                let run = await runCLI(
                    ["--json", "--retries", "1", "--retry-delay", "0", "-P", directory, url],
                    terminal: true
                )
                #expect(run.status == 0, "\(run.standardError)")
                #expect(run.standardError.contains("file  ["), "no progress row: \(run.standardError)")
                for secret in ["PassW0rd", "SigN4ture", "T0ken"] {
                    #expect(!run.standardError.contains(secret), "\(run.standardError)")
                    #expect(!run.standardOutput.contains(secret), "\(run.standardOutput)")
                }
                #expect(run.string("url")?.contains("alice:***@") == true)
                #expect(listing(directory) == ["file"])
            }
        }
    }

    /// User input: an output name with ESC, CR and U+202E, echoed by a mismatch's message.
    @Test func `messages escape what they echo: a name with ESC, CR and U+202E stays on its line`() async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let name = "\(directory)/\u{1B}[2J\rOK\u{202E}"
                let run = await runCLI(["--retries", "0", "--sha256", Fixtures.sha256B, "-o", name, server.url()])
                #expect(run.status == 9)
                #expect(!run.standardError.contains("\u{1B}") && !run.standardError.contains("\r"))
                #expect(!run.standardError.unicodeScalars.contains("\u{202E}"))
                #expect(run.standardError.contains("\\u{1B}[2J\\u{D}OK\\u{202E}"), "\(run.standardError)")
            }
        }
    }

    /// User input: a file name one byte longer than its sidecars leave room for, and one that fits.
    @Test func `a file name too long for its sidecars is bad input, one that fits works`() async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let long = String(repeating: "a", count: SafeFileName.maximumNameBytes + 1)
                let single = await runCLI(quietOnce + ["-o", "\(directory)/\(long)", server.url()])
                #expect(single.status == 2, "\(single.standardError)")
                #expect(single.standardError.contains("255-byte limit"))
                try "\(server.url()) sub/\(long)\n".write(toFile: "\(directory)/m", atomically: true, encoding: .utf8)
                let batch = await runCLI(quietOnce + ["-P", "\(directory)/out", "-i", "\(directory)/m"])
                #expect(batch.status == 2, "\(batch.standardError)")
                #expect(server.requests.isEmpty)
                #expect(listing(directory) == ["m"])
                let fits = String(repeating: "b", count: SafeFileName.maximumNameBytes)
                let run = await runCLI(quietOnce + ["-o", "\(directory)/\(fits)", server.url()])
                #expect(run.status == 0, "\(run.standardError)")
                #expect(fileHolds("\(directory)/\(fits)", Fixtures.a))
            }
        }
    }
}
