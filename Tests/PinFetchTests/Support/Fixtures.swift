internal import COpenSSL
import Foundation

/// Test data: fixture A and B of the issue (1,048,576 bytes each), digests computed with
/// OpenSSL's one-shot functions (independent of the library's checkpointed digest).
enum Fixtures {
    /// The repository's top directory (found via `#filePath`: this file is
    /// `Tests/PinFetchTests/Support/Fixtures.swift`).
    static let repository = URL(filePath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    /// The top-level `Fixtures/` folder (SwiftPM resources must sit inside a target).
    static let directory = Self.repository.appending(path: "Fixtures")

    /// Byte i = (7*i+3) mod 251.
    static let a: [UInt8] = (0..<1_048_576).map { UInt8((7 * $0 + 3) % 251) }
    /// Byte i = (11*i+5) mod 251.
    static let b: [UInt8] = (0..<1_048_576).map { UInt8((11 * $0 + 5) % 251) }

    static let etagA = "\"a-v1\""
    static let etagB = "\"b-v2\""

    static func sha256(_ bytes: [UInt8]) -> String {
        var digest = [UInt8](repeating: 0, count: 32)
        _ = SHA256(bytes, bytes.count, &digest)
        return digest.map { String(format: "%02x", $0) }.joined()
    }

    static func sha512(_ bytes: [UInt8]) -> String {
        var digest = [UInt8](repeating: 0, count: 64)
        _ = SHA512(bytes, bytes.count, &digest)
        return digest.map { String(format: "%02x", $0) }.joined()
    }

    static let sha256A = Fixtures.sha256(Fixtures.a)
    static let sha256B = Fixtures.sha256(Fixtures.b)
}
