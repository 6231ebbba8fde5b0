import Foundation
import Synchronization
import Testing

@testable import PinFetch

/// When a file is not split: nothing to check a file put together from several answers (no pin,
/// no digest from the server), a file too small for `--segments auto`, a representation without
/// a strong validator to tie its pieces together.
struct SegmentEligibilityTests {
    /// `body` with what checks it: a pin, or one of the digests servers publish of the whole file.
    static func checked(_ body: [UInt8], by check: String) throws -> (TestResource, Pin?) {
        var resource = TestResource(body: body, etag: SegmentedDownloadTests.etag)
        let sha256 = Data(Pin.bytes(fromHex: Fixtures.sha256(body))!).base64EncodedString()
        let md5 = CrossCheckDigest()
        body.withUnsafeBytes { md5.update($0) }
        switch check {
        case "pin": return (resource, try Pin(sha256Hex: Fixtures.sha256(body)))
        case "Repr-Digest": resource.extraHeaders = [("Repr-Digest", "sha-256=:\(sha256):")]
        case "x-amz-checksum-sha256": resource.extraHeaders = [("x-amz-checksum-sha256", sha256)]
        case "x-goog-hash":
            resource.extraHeaders = [("x-goog-hash", "md5=\(Data(md5.finalize()).base64EncodedString())")]
        default: break
        }
        return (resource, nil)
    }

    /// Hostile server: without anything to check them, ranged answers of other bytes under the
    /// same strong ETag would put a file together that no answer held; so there are none.
    @Test(arguments: ["nothing", "pin", "Repr-Digest", "x-amz-checksum-sha256", "x-goog-hash"])
    func `a file is cut into pieces only when a pin or the server's digest checks it`(check: String) async throws {
        let body = pseudoRandomBytes(2 << 20, seed: 149)
        let (resource, pin) = try Self.checked(body, by: check)
        try await withTestHTTPServer(serving: resource) { server in
            var faults = TestFaults()
            faults.bytesPerSecond = 1 << 20  // slow enough that pieces pay
            server.faults = faults
            try await withTemporaryDirectory { directory in
                let warnings = Mutex<[String]>([])
                var options = SegmentedDownloadTests.options(segments: 4, pieceSize: 256 << 10)
                options.events = { event in
                    if case .warning(_, let message) = event { warnings.withLock { $0.append(message) } }
                }
                let result = await Fetcher(options: options).run(server.url(), to: directory + "/f", verifying: pin)
                #expect(result.error == nil, "\(String(describing: result.error))")
                #expect(SegmentedDownloadTests.holds(directory + "/f", body))
                let ranged = server.getRequests.filter { $0.header("Range") != nil }
                #expect(ranged.isEmpty == (check == "nothing"), "\(ranged.count) ranged requests")
                #expect(warnings.withLock { $0 }.count == (check == "nothing" ? 1 : 0), "\(warnings.withLock { $0 })")
            }
        }
    }

    /// The command line says why once for a run, not once for each file, and not with `auto`.
    @Test(arguments: ["4", "auto"])
    func `--segments N says once why unchecked files come over one stream`(segments: String) async throws {
        let body = pseudoRandomBytes(1 << 20, seed: 147)
        try await withTestHTTPServer(serving: TestResource(body: body, etag: SegmentedDownloadTests.etag)) { server in
            try await withTemporaryDirectory { directory in
                try "\(server.url("/a"))\n\(server.url("/b"))\n".write(
                    toFile: directory + "/list",
                    atomically: true,
                    encoding: .utf8
                )
                let run = await runCLI([
                    "-q", "-j", "1", "--segments", segments, "--segment-size", "64K", "-i", directory + "/list",
                    "-P", directory,
                ])
                #expect(run.status == 0, "\(run.standardError)")
                let lines = run.standardError.split(separator: "\n").filter { $0.contains("fetched over one stream") }
                #expect(lines.count == (segments == "auto" ? 0 : 1), "\(run.standardError)")
                #expect(lines.allSatisfy { $0.hasPrefix("pinfetch: warning: --segments 4: ") })
                #expect(server.getRequests.allSatisfy { $0.header("Range") == nil })
            }
        }
    }

    @Test func `--segments auto leaves a file under 64 MiB to one stream`() async throws {
        let body = pseudoRandomBytes(2 << 20, seed: 148)
        try await withTestHTTPServer(serving: try Self.checked(body, by: "Repr-Digest").0) { server in
            var faults = TestFaults()
            faults.bytesPerSecond = 2 << 20
            server.faults = faults
            try await withTemporaryDirectory { directory in
                var options = SegmentedDownloadTests.options(segments: 8)
                options.segmentsAutomatic = true
                let result = await Fetcher(options: options).run(server.url(), to: directory + "/f")
                #expect(result.error == nil)
                #expect(SegmentedDownloadTests.holds(directory + "/f", body))
                #expect(server.getRequests.count == 1)
            }
        }
    }

    @Test(arguments: ["W/\"weak\"", nil])
    func `without a strong validator the file comes over one stream`(etag: String?) async throws {
        let body = pseudoRandomBytes(500 << 10, seed: 145)
        var resource = try Self.checked(body, by: "Repr-Digest").0
        resource.etag = etag
        try await withTestHTTPServer(serving: resource) { server in
            try await withTemporaryDirectory { directory in
                let output = directory + "/f"
                let result = await Fetcher(options: SegmentedDownloadTests.options()).run(server.url(), to: output)
                #expect(result.error == nil)
                #expect(SegmentedDownloadTests.holds(output, body))
                #expect(server.getRequests.count == 1)
            }
        }
    }
}
