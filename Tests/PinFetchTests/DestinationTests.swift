import Foundation
@_spi(CLI) import PinFetch
import Testing

/// What is already at the destination, and other pinfetch processes on it.
struct DestinationTests {
    static let quiet = ["-q", "--json", "--retry-delay", "0"]
    static var resourceA: TestResource { TestResource(body: Fixtures.a, etag: Fixtures.etagA) }

    @Test func `a pinned file already in place is verified and not downloaded`() async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                try Data(Fixtures.a).write(to: URL(filePath: "\(directory)/out.bin"))
                let run = await runCLI(
                    Self.quiet + ["--sha256", Fixtures.sha256A, "-o", "\(directory)/out.bin", server.url()]
                )
                #expect(run.status == 0)
                #expect(run.string("status") == "already-complete")
                #expect(run.int("downloaded_bytes") == 0)
                #expect(run.int("bytes") == 1_048_576)
                #expect(server.requests.isEmpty)
                #expect(listing(directory) == ["out.bin"])
            }
        }
    }

    @Test(arguments: [true, false])
    func `a different file in place is replaced`(pinned: Bool) async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                try Data(Fixtures.b).write(to: URL(filePath: "\(directory)/out.bin"))
                let pin = pinned ? ["--sha256", Fixtures.sha256A] : []
                let run = await runCLI(Self.quiet + pin + ["-o", "\(directory)/out.bin", server.url()])
                #expect(run.status == 0)
                #expect(run.string("status") == "downloaded")
                #expect(contents("\(directory)/out.bin") == Fixtures.a)
            }
        }
    }

    @Test func `a second process waits for the lock, then finds the verified file`() async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            server.faults = TestFaults(bytesPerSecond: 400_000)  // about 2.6 s for A: the checks below fit well inside
            try await withTemporaryDirectory { directory in
                let output = "\(directory)/out.bin"
                let arguments = Self.quiet + ["--sha256", Fixtures.sha256A, "-o", output, server.url()]
                async let first = runCLI(arguments)
                try await waitUntil { FileManager.default.fileExists(atPath: output + ".part") }
                let impatient = await runCLI(["--lock-timeout", "0.1"] + arguments)
                #expect(impatient.status == 10)
                #expect((impatient.json["error"] as? [String: Any])?["exit_code"] as? Int == 10)
                let second = await runCLI(arguments)
                #expect(await first.status == 0)
                #expect(second.status == 0)
                #expect(second.string("status") == "already-complete")
                #expect(server.getRequests.count == 1)
                #expect(contents(output) == Fixtures.a)
                #expect(listing(directory) == ["out.bin"])
            }
        }
    }
}

extension DestinationTests {
    @Test func `a process waiting for the lock can be cancelled`() async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            server.faults = TestFaults(bytesPerSecond: 400_000)
            try await withTemporaryDirectory { directory in
                let output = "\(directory)/out.bin"
                async let first = runCLI(Self.quiet + ["-o", output, server.url()])
                try await waitUntil { FileManager.default.fileExists(atPath: output + ".part") }
                let waiting = Task { await Fetcher().run(server.url(), to: output) }
                try await Task.sleep(for: .milliseconds(200))
                waiting.cancel()
                let result = await waiting.value
                #expect(result.error?.code == .cancelled)
                #expect(await first.status == 0)
                #expect(server.getRequests.count == 1)
            }
        }
    }
}

/// Polls `condition` every 10 ms for up to `seconds`.
func waitUntil(seconds: Double = 10, _ condition: () -> Bool) async throws {
    let deadline = Date().addingTimeInterval(seconds)
    while !condition() {
        guard Date() < deadline else { throw CancellationError() }
        try await Task.sleep(for: .milliseconds(10))
    }
}
