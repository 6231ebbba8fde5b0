import Foundation
@preconcurrency import Glibc
import PinFetchCLI
import Testing

@testable import PinFetch

/// What an outsider broke in issue 12's first build, each kept as the input that broke it.
struct OutsiderFindings12Tests {
    static let quiet = ["-q", "--json", "--retry-delay", "0", "--retries", "0"]
    static let modified = "Sun, 06 Nov 1994 08:49:37 GMT"

    static func holds(_ path: String, _ bytes: [UInt8]) -> Bool { contents(path) == bytes }

    /// L8: a Latin-1 name in a checksum file or manifest was decoded with U+FFFD for its bad
    /// byte, and the file fetched from and saved under that other name.
    @Test func `a name that is not UTF-8 is refused where it would name a download, skipped in lookups`() async throws {
        let latin1 = Array("\(Fixtures.sha256A)  ok\n\(Fixtures.sha256B)  caf".utf8) + [0xE9, 0x0A]
        let file = try ChecksumFile(parsing: latin1)
        #expect(file.entries.map(\.name) == ["ok"] && file.undecodableLines == [2])
        #expect(try file.pin(for: "ok").digest == Pin.bytes(fromHex: Fixtures.sha256A))
        #expect(throws: PinFetchError.self) { try file.pin(for: "caf\u{FFFD}") }
        let error = #expect(throws: PinFetchError.self) { try Manifest(checksumFile: file, baseURL: "http://h/") }
        #expect(error?.message.contains("line 2") == true && error?.code == .usage)
        try await withTemporaryDirectory { directory in
            let manifest = Array("http://127.0.0.1:9/a ok\nhttp://127.0.0.1:9/b caf".utf8) + [0xE9, 0x0A]
            _ = FileManager.default.createFile(atPath: "\(directory)/m", contents: Data(manifest))
            let run = await runCLI(Self.quiet + ["-P", "\(directory)/o", "-i", "\(directory)/m"])
            #expect(run.status == 2)
            #expect(run.standardError.contains("line 2 is not UTF-8"), "\(run.standardError)")
            #expect(!FileManager.default.fileExists(atPath: "\(directory)/o"))
        }
    }

    /// L9: a header line over libcurl's limit was reported as "Out of memory" (exit 1); many
    /// small lines past its limit were a network failure (exit 4), retried (second pass, 8).
    @Test(arguments: [(200_000, 1), (2_000_000, 1), (6, 60_000)])
    func `an answer with a huge header is a protocol error, exit 7`(size: Int, lines: Int) async throws {
        try await withTestHTTPServer(serving: TestResource(body: [])) { server in
            server.handler = { _, _ in
                let headers = (0..<lines).map { _ in (name: "X-Big", value: String(repeating: "a", count: size)) }
                return TestResponse(status: 200, headers: headers, body: Array("hi".utf8))
            }
            try await withTemporaryDirectory { directory in
                let run = await runCLI(Self.quiet + ["-o", "\(directory)/o", server.url()])
                #expect(run.status == 7, "\(run.standardError)")
                #expect(run.standardError.contains("header section is larger"))
                #expect(listing(directory).isEmpty)
            }
        }
    }

    /// L10: a `SIGINT` that came in the first ~10 ms (after pinfetch ignored it, before its
    /// watcher was registered) was lost, and the download ran to exit 0. Now the stop signals
    /// are blocked first thing in `main`: an early one ends the process (default action, before
    /// `main`) or is taken once the watcher runs (130); none is lost.
    @Test func `a SIGINT in the first milliseconds is never lost`() async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
            try await withTemporaryDirectory { directory in
                for step in 0..<100 {
                    let child = try ChildProcess(
                        try EndToEndTests.pinfetchExecutable(),
                        EndToEndTests.quiet + ["--limit-rate", "50K", "-o", "\(directory)/o\(step)", server.url()],
                        logs: "\(directory)/log\(step)"
                    )
                    defer { child.stop() }
                    try await Task.sleep(for: .microseconds(step * 250))
                    child.signal(SIGINT)
                    let ended = try await child.wait(timeout: .seconds(10))  // 1 MiB at 50 KiB/s: 20 s
                    let early = "after \(Double(step) / 4) ms: \(ended)"
                    #expect(ended == .exited(130) || ended == .signalled(SIGINT), "\(early)")
                }
            }
        }
    }

    /// L7: a 241–255-byte name was accepted, then its `.part.lock` passed NAME_MAX (exit 3).
    /// Now the name is refused before anything is created; 240 bytes still work.
    @Test func `a file name too long for its sidecars is bad input, one that fits works`() async throws {
        try await withTestHTTPServer(serving: AnswerEndToEndTests.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let long = String(repeating: "a", count: SafeFileName.maximumNameBytes + 1)
                let single = await runCLI(Self.quiet + ["-o", "\(directory)/\(long)", server.url()])
                #expect(single.status == 2, "\(single.standardError)")
                #expect(single.standardError.contains("255-byte limit"))
                try "\(server.url()) sub/\(long)\n".write(toFile: "\(directory)/m", atomically: true, encoding: .utf8)
                let batch = await runCLI(Self.quiet + ["-P", "\(directory)/out", "-i", "\(directory)/m"])
                #expect(batch.status == 2, "\(batch.standardError)")
                #expect(server.requests.isEmpty)
                #expect(listing(directory) == ["m"])
                let fits = String(repeating: "b", count: SafeFileName.maximumNameBytes)
                let run = await runCLI(Self.quiet + ["-o", "\(directory)/\(fits)", server.url()])
                #expect(run.status == 0, "\(run.standardError)")
                #expect(Self.holds("\(directory)/\(fits)", Fixtures.a))
            }
        }
    }
}
