import Foundation
import Testing

@testable import PinFetch

/// SRI integrity lists and SHA-384 pins through a whole fetch: any value of the strongest
/// algorithm passes (W3C SRI §3.3.4), and a SHA-384 partial checkpoints and resumes like the
/// others (SHA-512's context).
extension FetchTests {
    /// SHA-384 of fixture A, from OpenSSL's one-shot function (not from the code under test).
    static var sha384A: [UInt8] { RunningDigestTests.oneShot(.sha384, Fixtures.a) }

    @Test func `bytes matching a later value of an integrity list pass, and are reported as they are`() async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let other = Data(RunningDigestTests.oneShot(.sha512, Fixtures.b)).base64EncodedString()
                let right = Data(RunningDigestTests.oneShot(.sha512, Fixtures.a)).base64EncodedString()
                let weaker = Data(RunningDigestTests.oneShot(.sha256, Fixtures.b)).base64EncodedString()
                let pin = try Pin(parsing: "sha512-\(other) sha256-\(weaker) sha512-\(right)")
                let result = await self.fetch(server, into: directory, pin: pin)
                #expect(result.error == nil, "\(failure(result))")
                #expect(contents("\(directory)/out.bin") == Fixtures.a)
                #expect(result.digest == Pin.hex(RunningDigestTests.oneShot(.sha512, Fixtures.a)))
                #expect(server.getRequests.count == 1)  // no second download after a "mismatch"
                // No value matches: a mismatch naming the first, after one download.
                let wrong = try Pin(parsing: "sha512-\(other) sha512-\(other)")
                let failed = await self.fetch(server, into: directory + "/x", pin: wrong, retries: 0)
                #expect(failed.error?.code == .digestMismatch, "\(failure(failed))")
            }
        }
    }

    @Test func `a SHA-384 pin checkpoints, resumes without reading the partial again, and verifies`() async throws {
        try await withTestHTTPServer(serving: Self.resourceA) { server in
            try await withTemporaryDirectory { directory in
                let pin = try Pin(algorithm: .sha384, digest: Self.sha384A)
                let cut = await self.interruptedRun(server, into: directory, at: 400_000, pin: pin)
                #expect(cut.error?.code == .network, "\(failure(cut))")
                let result = await self.fetch(server, into: directory, pin: pin)
                #expect(result.error == nil, "\(failure(result))")
                #expect(result.status == .resumed)
                #expect(result.rehashedBytes == 0)
                #expect(result.algorithm == .sha384)
                #expect(server.getRequests.last?.header("Range") == "bytes=400000-")
                #expect(contents("\(directory)/out.bin") == Fixtures.a)
            }
        }
    }
}
