import Foundation
import Testing

@testable import PinFetch

/// `Pin(parsing:)` and `Pin(sha256Hex:)`: every spelling of `--sha256` and `--checksum` that the
/// command line takes, checked against published test vectors of "abc".
struct PinTests {
    /// SHA-256("abc"), FIPS 180-2 appendix B.1.
    static let sha256Hex = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    /// SHA-512("abc"), FIPS 180-2 appendix C.1.
    static let sha512Hex =
        "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
        + "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"
    /// The same digests in base64, as SRI writes them.
    static let sha256Base64 = "ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0="
    static let sha512Base64 =
        "3a81oZNherrMQXNJriBBMRLm+k6JqX6iCp7u5ktV05ohkpkqJ0/BqDa6PCOj/uu9RU1EI2Q86A4qmslPpUyknw=="
    /// SHA-384("abc"), FIPS 180-2 appendix D.1, in hex and base64.
    static let sha384Hex =
        "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed8086072ba1e7cc2358baeca134c825a7"
    static let sha384Base64 = "ywB1P0WjXou1oD1pmsZQBycsMqsO3tFjGotgWkP/W+2AhgcroefMI1i67KE0yCWn"
    /// SHA-512("abd") in base64: another representation an integrity list may name.
    static let otherSHA512Base64 =
        "GphAwnpc8i2rBgzdioPaKw+8sa61LU+dOJS2OQg+IFpas/avrushuOmbXg/pPar6q+7ydNpdbq3MnbNuW29kxA=="

    /// The digest bytes of `hex`, decoded here rather than by the code under test.
    static func bytes(_ hex: String) -> [UInt8] {
        let digits = Array(hex.utf8)
        return stride(from: 0, to: digits.count, by: 2).map { index in
            UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16)!
        }
    }

    /// Mixed case: upper-case every other letter.
    static func mixedCase(_ text: String) -> String {
        String(text.enumerated().map { $0.offset % 2 == 0 ? Character($0.element.uppercased()) : $0.element })
    }

    @Test func `the test vectors agree with their base64 forms`() {
        #expect(Data(base64Encoded: Self.sha256Base64).map { [UInt8]($0) } == Self.bytes(Self.sha256Hex))
        #expect(Data(base64Encoded: Self.sha512Base64).map { [UInt8]($0) } == Self.bytes(Self.sha512Hex))
        #expect(Self.bytes(Self.sha256Hex).count == 32)
        #expect(Self.bytes(Self.sha512Hex).count == 64)
    }

    static let sha256Specs = [
        PinTests.sha256Hex,
        PinTests.sha256Hex.uppercased(),
        PinTests.mixedCase(PinTests.sha256Hex),
        "sha256:\(PinTests.sha256Hex)",
        "SHA256:\(PinTests.sha256Hex.uppercased())",
        "sha-256:\(PinTests.sha256Hex)",
        "  sha256:\(PinTests.sha256Hex)  ",
        "sha256-\(PinTests.sha256Base64)",
        "SHA256-\(PinTests.sha256Base64)",
        "sha256-\(PinTests.sha256Base64)?ct=application/octet-stream",
        "md5-kAFQmDzST7DWlj99KOF/cg== sha256-\(PinTests.sha256Base64)",
        "sha1-qZk+NkcGgWq6PiVxeFDCbJzQ2J0=\tsha256-\(PinTests.sha256Base64)",
    ]

    @Test(arguments: Self.sha256Specs)
    func `SHA-256 spellings parse to the digest of abc`(spec: String) throws {
        let pin = try Pin(parsing: spec)
        #expect(pin.algorithm == .sha256)
        #expect(pin.digest == Self.bytes(Self.sha256Hex))
        #expect(pin.hex == Self.sha256Hex)
        #expect(pin.description == "sha256:\(Self.sha256Hex)")
    }

    static let sha512Specs = [
        PinTests.sha512Hex,
        PinTests.sha512Hex.uppercased(),
        PinTests.mixedCase(PinTests.sha512Hex),
        "sha512:\(PinTests.sha512Hex)",
        "Sha512:\(PinTests.mixedCase(PinTests.sha512Hex))",
        "sha-512:\(PinTests.sha512Hex)",
        "sha512-\(PinTests.sha512Base64)",
        "sha512-\(PinTests.sha512Base64)?a?b",
        "sha256-\(PinTests.sha256Base64) sha512-\(PinTests.sha512Base64)",
        "sha512-\(PinTests.sha512Base64) sha256-\(PinTests.sha256Base64)",
        "sha256-\(PinTests.sha256Base64)?x sha384-\(PinTests.sha384Base64) sha512-\(PinTests.sha512Base64)?y",
        "md5-kAFQmDzST7DWlj99KOF/cg==   sha512-\(PinTests.sha512Base64)",
    ]

    @Test(arguments: Self.sha512Specs)
    func `SHA-512 spellings and the strongest SRI token parse to the digest of abc`(spec: String) throws {
        let pin = try Pin(parsing: spec)
        #expect(pin.algorithm == .sha512)
        #expect(pin.digest == Self.bytes(Self.sha512Hex))
        #expect(pin.hex == Self.sha512Hex)
    }

    static let sha384Specs = [
        PinTests.sha384Hex,
        PinTests.sha384Hex.uppercased(),
        "sha384:\(PinTests.sha384Hex)",
        "SHA-384:\(PinTests.sha384Hex)",
        "sha384-\(PinTests.sha384Base64)",
        "sha384-\(PinTests.sha384Base64) sha256-\(PinTests.sha256Base64)",
        "sha256-\(PinTests.sha256Base64) sha384-\(PinTests.sha384Base64)?ct=x",
    ]

    /// SHA-384 (SRI's most common algorithm) in every spelling; above SHA-256, below SHA-512.
    @Test(arguments: Self.sha384Specs)
    func `SHA-384 spellings parse to the digest of abc`(spec: String) throws {
        let pin = try Pin(parsing: spec)
        #expect(pin.algorithm == .sha384)
        #expect(pin.digest == Self.bytes(Self.sha384Hex))
        #expect(pin.description == "sha384:\(Self.sha384Hex)")
        #expect(pin.alternatives.isEmpty)
    }

    /// W3C SRI §3.3.4: a list with several values of its strongest algorithm accepts any of them;
    /// values of weaker algorithms are not consulted.
    @Test func `an integrity list accepts any value of its strongest algorithm`() throws {
        let pin = try Pin(
            parsing: "sha512-\(Self.otherSHA512Base64) sha256-\(Self.sha256Base64) sha512-\(Self.sha512Base64) "
                + "sha512-\(Self.otherSHA512Base64)"
        )
        #expect(pin.algorithm == .sha512)
        #expect(pin.digest == [UInt8](Data(base64Encoded: Self.otherSHA512Base64)!))
        #expect(pin.alternatives == [Self.bytes(Self.sha512Hex)])  // each value once, in order
        #expect(pin.matches(Self.bytes(Self.sha512Hex)))
        #expect(pin.matches([UInt8](Data(base64Encoded: Self.otherSHA512Base64)!)))
        #expect(!pin.matches(Self.bytes(Self.sha256Hex)))
        #expect(try Pin(parsing: "sha512-\(Self.sha512Base64)").alternatives.isEmpty)
    }

    static let malformedSpecs = [
        "",
        "   ",
        String(PinTests.sha256Hex.dropLast()),  // 63 digits
        PinTests.sha256Hex + "0",  // 65 digits
        String(PinTests.sha512Hex.dropLast()),  // 127 digits
        PinTests.sha512Hex + "0",  // 129 digits
        "abc",
        String(repeating: "g", count: 64),
        String(PinTests.sha256Hex.dropLast()) + "z",
        "sha256:12",
        "sha256:",
        "sha256:\(PinTests.sha512Hex)",  // a SHA-512 length under the SHA-256 label
        "sha512:\(PinTests.sha256Hex)",
        "sha256:\(String(PinTests.sha256Hex.dropLast()))x",
        "sha256: \(PinTests.sha256Hex)",
        "md5:da39a3ee5e6b4b0d3255bfef95601890afd80709",  // a SHA-1 length under the MD5 label
        "sha1:d41d8cd98f00b204e9800998ecf8427e",
        "d41d8cd98f00b204e9800998ecf8427e",  // MD5 only spelled out, never bare
        "da39a3ee5e6b4b0d3255bfef95601890afd80709",
        "sha384:\(PinTests.sha512Hex)",  // a SHA-512 length under the SHA-384 label
        "sha384-\(PinTests.sha256Base64)",  // base64 of 32 bytes under sha384
        "sha256-!!!!",
        "sha256-",
        "sha256-\(PinTests.sha512Base64)",  // base64 of 64 bytes under sha256
        "sha512-\(PinTests.sha256Base64)",  // base64 of 32 bytes under sha512
        "sha256-\(PinTests.sha256Base64.dropLast())",  // padding cut
        "sha256-\(PinTests.sha256Base64) sha512-%%%%",  // a malformed supported token is an error
        "sha1-qZk+NkcGgWq6PiVxeFDCbJzQ2J0=",  // only unsupported algorithms
        "md5-kAFQmDzST7DWlj99KOF/cg==",
        "xyz",
        "sha256 \(PinTests.sha256Hex)",
    ]

    @Test(arguments: Self.malformedSpecs)
    func `malformed pin is a usage error`(spec: String) {
        let error = #expect(throws: PinFetchError.self) { try Pin(parsing: spec) }
        #expect(error?.code == .usage)
        #expect(error?.code.exitStatus == 2)
        #expect(error?.message.isEmpty == false)
    }

    @Test(arguments: [
        PinTests.sha256Hex, PinTests.sha256Hex.uppercased(), PinTests.mixedCase(PinTests.sha256Hex),
    ])
    func `--sha256 takes 64 hex digits in any case`(hex: String) throws {
        let pin = try Pin(sha256Hex: hex)
        #expect(pin.algorithm == .sha256)
        #expect(pin.digest == Self.bytes(Self.sha256Hex))
    }

    @Test(arguments: [
        "",
        "sha256-\(PinTests.sha256Base64)",
        "sha512:\(PinTests.sha256Hex)",
        PinTests.sha512Hex,
        String(PinTests.sha256Hex.dropLast()),
        PinTests.sha256Hex + "a",
        " \(PinTests.sha256Hex)",
        String(PinTests.sha256Hex.dropLast()) + "g",
        String(repeating: "\u{FF10}", count: 64),  // fullwidth zeros: hex digits to Unicode, not to us
    ])
    func `--sha256 rejects anything but 64 hex digits`(hex: String) {
        let error = #expect(throws: PinFetchError.self) { try Pin(sha256Hex: hex) }
        #expect(error?.code.exitStatus == 2)
        // It shows what was given, and where the other forms go.
        #expect(error?.message.contains("not '\(hex.prefix(77))") == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("--checksum takes sha384:HEX, sha512:HEX and SRI") == true)
    }

    @Test(arguments: ["sha256:\(PinTests.sha256Hex)", "SHA256:\(PinTests.sha256Hex.uppercased())"])
    func `--sha256 takes sha256:HEX too`(spelled: String) throws {
        #expect(try Pin(sha256Hex: spelled) == Pin(sha256Hex: PinTests.sha256Hex))
    }

    @Test func `aria2's sha-256=HEX is a pin, md5 and sha1 spelled out are weak pins`() throws {
        #expect(try Pin(parsing: "sha-256=\(PinTests.sha256Hex)") == Pin(sha256Hex: PinTests.sha256Hex))
        #expect(try Pin(parsing: "sha-512=\(PinTests.sha512Hex)").algorithm == .sha512)
        for (spelled, algorithm) in [
            ("md5:d41d8cd98f00b204e9800998ecf8427e", HashAlgorithm.md5), ("MD5:D41D8CD98F00B204E9800998ECF8427E", .md5),
            ("sha1=da39a3ee5e6b4b0d3255bfef95601890afd80709", .sha1),
            ("sha-1:da39a3ee5e6b4b0d3255bfef95601890afd80709", .sha1),
        ] {
            let pin = try Pin(parsing: spelled)
            #expect(pin.algorithm == algorithm && pin.algorithm.isWeak, "\(spelled)")
            #expect(pin.matches(algorithm.digest(of: [])), "the empty file's digest: \(spelled)")
        }
        #expect(!HashAlgorithm.sha256.isWeak && !HashAlgorithm.sha384.isWeak && !HashAlgorithm.sha512.isWeak)
        // In SRI metadata they stay unknown (W3C SRI knows sha256, sha384 and sha512): skipped.
        #expect(try Pin(parsing: "md5-kAFQmDzST7DWlj99KOF/cg== sha256-\(PinTests.sha256Base64)").algorithm == .sha256)
        let short = #expect(throws: PinFetchError.self) { try Pin(parsing: "sha256:abc") }
        #expect(short?.message == "a sha256 checksum is 64 hex digits, not 'abc' (3 characters)")
    }

    @Test(arguments: [(HashAlgorithm.sha256, 31), (.sha256, 33), (.sha256, 64), (.sha512, 32), (.sha512, 0)])
    func `raw digests of the wrong length are a usage error`(algorithm: HashAlgorithm, count: Int) {
        let error = #expect(throws: PinFetchError.self) {
            try Pin(algorithm: algorithm, digest: [UInt8](repeating: 7, count: count))
        }
        #expect(error?.code.exitStatus == 2)
    }

    @Test func `hex is lower case`() {
        #expect(Pin.hex([0x00, 0x0f, 0xa0, 0xff]) == "000fa0ff")
        #expect(Pin.hex([]) == "")
    }
}
