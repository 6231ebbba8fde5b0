import Foundation
import Testing

@testable import PinFetch

/// `ChecksumFile`: the shapes of `SHA256SUMS` and friends as release pages publish them, read for
/// `--checksum-file`. Digests are made-up hex; the expected pins are built from raw bytes, not
/// parsed.
struct ChecksumFileTests {
    /// SHA-256-sized digests: 0xAA × 32, 0x0123…EF × 4, 0xDD × 32.
    static let hexA = String(repeating: "a", count: 64)
    static let hexB = String(repeating: "0123456789abcdef", count: 4)
    static let hexD = String(repeating: "d", count: 64)
    /// A SHA-512-sized digest: 0xCC × 64.
    static let hexC = String(repeating: "c", count: 128)
    /// Digests of unsupported algorithms, by their hex length.
    static let md5 = String(repeating: "1", count: 32)
    static let sha1 = String(repeating: "2", count: 40)
    static let sha224 = String(repeating: "3", count: 56)
    static let sha384 = String(repeating: "4", count: 96)

    static let pinA = try! Pin(algorithm: .sha256, digest: [UInt8](repeating: 0xAA, count: 32))
    static let pinB = try! Pin(
        algorithm: .sha256,
        digest: Array([[UInt8]](repeating: [0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF], count: 4).joined())
    )
    static let pinD = try! Pin(algorithm: .sha256, digest: [UInt8](repeating: 0xDD, count: 32))
    static let pinC = try! Pin(algorithm: .sha512, digest: [UInt8](repeating: 0xCC, count: 64))

    static func parse(_ text: String) throws -> ChecksumFile {
        try ChecksumFile(parsing: Array(text.utf8))
    }

    @Test func `the expected pins are the hex digests`() {
        #expect(Self.pinA.hex == Self.hexA)
        #expect(Self.pinB.hex == Self.hexB)
        #expect(Self.pinC.hex == Self.hexC)
        #expect(Self.pinD.hex == Self.hexD)
    }

    struct Shape: Sendable, CustomTestStringConvertible {
        var source: String
        var text: String
        var fileName: String
        var expected: Pin
        /// The supported entries, or `nil` for a bare digest.
        var entries: Int?
        var testDescription: String { self.source }
    }

    static let fedoraCHECKSUM = """
        -----BEGIN PGP SIGNED MESSAGE-----
        Hash: SHA256

        # Fedora-Workstation-Live-x86_64-39-1.5.iso: 2295853056 bytes
        SHA256 (Fedora-Workstation-Live-x86_64-39-1.5.iso) = \(hexA)
        # Fedora-Workstation-Live-osb-39-1.5.x86_64.iso: 2295853056 bytes
        SHA256 (Fedora-Workstation-Live-osb-39-1.5.x86_64.iso) = \(hexB)
        -----BEGIN PGP SIGNATURE-----

        iQIzBAEBCAAdFiEEbZV+nXWYQyLYo3kBFIrmPY2+ngYFAmU7yhsACgkQFIrmPY2+
        =lCyy
        -----END PGP SIGNATURE-----

        """

    static let nodeSHASUMS256asc = """
        -----BEGIN PGP SIGNED MESSAGE-----
        Hash: SHA256

        \(hexA)  node-v20.11.0-darwin-arm64.tar.gz
        \(hexB)  node-v20.11.0-linux-x64.tar.xz
        \(hexD)  node-v20.11.0-win-x64.zip
        -----BEGIN PGP SIGNATURE-----

        iQIzBAEBCAAdFiEEiQwI24V5Fi/uDfnbi+q0389VXvQFAmWeEDYACgkQi+q0389V
        XvTz7w/+O0RXcJ0q4GcD0tVGz5X5zYzI9m3kbTBq0s0Kz8bL1YR5OYsM6n/Ef4H1
        =Yw4Y
        -----END PGP SIGNATURE-----

        """

    static let shapes = [
        Shape(
            source: "Debian cdimage SHA256SUMS",
            text: "\(hexA)  debian-12.5.0-amd64-netinst.iso\n\(hexB)  debian-edu-12.5.0-amd64-netinst.iso\n"
                + "\(hexD)  debian-mac-12.5.0-amd64-netinst.iso\n",
            fileName: "debian-edu-12.5.0-amd64-netinst.iso",
            expected: pinB,
            entries: 3
        ),
        Shape(
            source: "Debian cdimage SHA512SUMS",
            text: "\(hexC)  debian-12.5.0-arm64-netinst.iso\n",
            fileName: "debian-12.5.0-arm64-netinst.iso",
            expected: pinC,
            entries: 1
        ),
        Shape(
            source: "Ubuntu SHA256SUMS (binary flag)",
            text: "\(hexA) *ubuntu-24.04-desktop-amd64.iso\n\(hexB) *ubuntu-24.04-live-server-amd64.iso\n",
            fileName: "ubuntu-24.04-live-server-amd64.iso",
            expected: pinB,
            entries: 2
        ),
        Shape(
            source: "Go go1.22.0.linux-amd64.tar.gz.sha256 (bare digest, no newline)",
            text: hexB,
            fileName: "go1.22.0.linux-amd64.tar.gz",
            expected: pinB,
            entries: nil
        ),
        Shape(
            source: "Node SHASUMS256.txt",
            text: "\(hexA)  node-v20.11.0-darwin-arm64.tar.gz\n\(hexB)  node-v20.11.0-linux-x64.tar.xz\n",
            fileName: "node-v20.11.0-linux-x64.tar.xz",
            expected: pinB,
            entries: 2
        ),
        Shape(
            source: "Node SHASUMS256.txt.asc (clear-signed)",
            text: nodeSHASUMS256asc,
            fileName: "node-v20.11.0-win-x64.zip",
            expected: pinD,
            entries: 3
        ),
        Shape(
            source: "Python python-build-standalone SHA256SUMS",
            text: "\(hexA)  cpython-3.12.1+20240107-aarch64-apple-darwin-install_only.tar.gz\n"
                + "\(hexB)  cpython-3.12.1+20240107-x86_64-unknown-linux-gnu-install_only.tar.gz\n",
            fileName: "cpython-3.12.1+20240107-x86_64-unknown-linux-gnu-install_only.tar.gz",
            expected: pinB,
            entries: 2
        ),
        Shape(
            source: "Python Python-3.12.1.tar.xz.sha256 (sha256sum output)",
            text: "\(hexA)  Python-3.12.1.tar.xz\n",
            fileName: "Python-3.12.1.tar.xz",
            expected: pinA,
            entries: 1
        ),
        Shape(
            source: "Rust rust-1.75.0-x86_64-unknown-linux-gnu.tar.gz.sha256",
            text: "\(hexA)  rust-1.75.0-x86_64-unknown-linux-gnu.tar.gz\n",
            fileName: "rust-1.75.0-x86_64-unknown-linux-gnu.tar.gz",
            expected: pinA,
            entries: 1
        ),
        Shape(
            source: "Rust rustup-init.sha256 (a build path)",
            text: "\(hexD)  ./target/x86_64-unknown-linux-gnu/release/rustup-init\n",
            fileName: "rustup-init",
            expected: pinD,
            entries: 1
        ),
        Shape(
            source: "Kubernetes kubectl.sha256 (bare digest, no newline)",
            text: hexA,
            fileName: "kubectl",
            expected: pinA,
            entries: nil
        ),
        Shape(
            source: "Kubernetes kubernetes-server-linux-amd64.tar.gz.sha512 (bare digest)",
            text: hexC + "\n",
            fileName: "kubernetes-server-linux-amd64.tar.gz",
            expected: pinC,
            entries: nil
        ),
        Shape(
            source: "HashiCorp terraform_1.7.0_SHA256SUMS",
            text: "\(hexA)  terraform_1.7.0_darwin_arm64.zip\n\(hexB)  terraform_1.7.0_linux_amd64.zip\n"
                + "\(hexD)  terraform_1.7.0_windows_amd64.zip\n",
            fileName: "terraform_1.7.0_linux_amd64.zip",
            expected: pinB,
            entries: 3
        ),
        Shape(
            source: "Fedora CHECKSUM (clear-signed, BSD tags, # comments)",
            text: fedoraCHECKSUM,
            fileName: "Fedora-Workstation-Live-osb-39-1.5.x86_64.iso",
            expected: pinB,
            entries: 2
        ),
    ]

    @Test(arguments: Self.shapes + Self.taggedShapes)
    func `real-world checksum files give the pin of the named file`(shape: Shape) throws {
        let file = try Self.parse(shape.text)
        #expect(try file.pin(for: shape.fileName) == shape.expected)
        if let count = shape.entries {
            #expect(file.entries.count == count)
            #expect(file.bareDigest == nil)
        } else {
            #expect(file.entries.isEmpty)
            #expect(file.bareDigest == shape.expected)
            #expect(try file.pin(for: "some-other-name") == shape.expected)
        }
    }

    @Test func `entries keep their names, pins and line numbers in file order`() throws {
        let file = try Self.parse(
            "# header\n\(Self.hexA)  ./dist/a.tar.gz\n\n\(Self.md5)  a.tar.gz\n"
                + "SHA512 (b (1).zip) = \(Self.hexC)\n\(Self.hexA)  ./dist/a.tar.gz\n"
        )
        #expect(
            file.entries == [
                ChecksumFile.Entry(name: "./dist/a.tar.gz", pin: Self.pinA, line: 2),
                ChecksumFile.Entry(name: "b (1).zip", pin: Self.pinC, line: 5),
                ChecksumFile.Entry(name: "./dist/a.tar.gz", pin: Self.pinA, line: 6),
            ]
        )
        #expect(file.unsupportedEntries == [ChecksumFile.UnsupportedEntry(name: "a.tar.gz", algorithm: "md5", line: 4)])
        #expect(try file.pin(for: "a.tar.gz") == Self.pinA)
        #expect(try file.pin(for: "dist/a.tar.gz") == Self.pinA)
        #expect(try file.pin(for: "./dist/a.tar.gz") == Self.pinA)
    }

    /// The same content in the encodings and line ends that tools on other systems write.
    static func encodings(of text: String) -> [(String, [UInt8])] {
        let crlf = text.replacingOccurrences(of: "\n", with: "\r\n")
        let utf16LE: [UInt8] =
            [0xFF, 0xFE] + crlf.utf16.flatMap { unit -> [UInt8] in [UInt8(unit & 0xFF), UInt8(unit >> 8)] }
        let utf16BE: [UInt8] =
            [0xFE, 0xFF] + text.utf16.flatMap { unit -> [UInt8] in [UInt8(unit >> 8), UInt8(unit & 0xFF)] }
        return [
            ("UTF-8", Array(text.utf8)),
            ("CRLF", Array(crlf.utf8)),
            ("UTF-8 BOM", [0xEF, 0xBB, 0xBF] + Array(text.utf8)),
            ("UTF-8 BOM and CRLF", [0xEF, 0xBB, 0xBF] + Array(crlf.utf8)),
            ("UTF-16 LE BOM and CRLF (PowerShell 5)", utf16LE),
            ("UTF-16 BE BOM", utf16BE),
            ("UTF-16 LE with an odd last byte", utf16LE + [0x0A]),
        ]
    }

    static let encodingCases = Self.encodings(of: "# ünïcode\n\(hexA)  näive.tar.gz\nSHA512 (b.zip) = \(hexC)\n\n")
        .map(\.0)

    @Test(arguments: Self.encodingCases)
    func `byte order marks, UTF-16 and CRLF are decoded`(encoding: String) throws {
        let text = "# ünïcode\n\(Self.hexA)  näive.tar.gz\nSHA512 (b.zip) = \(Self.hexC)\n\n"
        let bytes = try #require(Self.encodings(of: text).first { $0.0 == encoding }?.1)
        let file = try ChecksumFile(parsing: bytes)
        #expect(
            file.entries == [
                ChecksumFile.Entry(name: "näive.tar.gz", pin: Self.pinA, line: 2),
                ChecksumFile.Entry(name: "b.zip", pin: Self.pinC, line: 3),
            ]
        )
    }

    @Test(arguments: [hexA, hexA + "\n", hexA + "\r\n", "\u{FEFF}" + hexA + "\n", "# go.dev\n" + hexA + "\n\n"])
    func `a bare digest applies to any name`(text: String) throws {
        let file = try Self.parse(text)
        #expect(file.bareDigest == Self.pinA)
        #expect(file.entries.isEmpty)
        #expect(try file.pin(for: "go1.22.0.linux-amd64.tar.gz") == Self.pinA)
        #expect(try file.pin(for: "") == Self.pinA)
    }

    @Test func `only the signed body of a clear-signed file counts, dash-escaped lines included`() throws {
        let text = """
            \(Self.hexD)  before.txt
            -----BEGIN PGP SIGNED MESSAGE-----
            Hash: SHA256
            \(Self.hexD)  header.txt

            - \(Self.hexA)  escaped.txt
            \(Self.hexB)  plain.txt
            - -- a dash-escaped note
            -----BEGIN PGP SIGNATURE-----
            \(Self.hexD)  signature.txt

            iQIzBAEBCAAdFiEE
            -----END PGP SIGNATURE-----
            """
        let file = try Self.parse(text)
        #expect(file.entries.map(\.name) == ["before.txt", "escaped.txt", "plain.txt"])
        #expect(try file.pin(for: "escaped.txt") == Self.pinA)
        #expect(try file.pin(for: "plain.txt") == Self.pinB)
        for hidden in ["header.txt", "signature.txt"] {
            let error = #expect(throws: PinFetchError.self) { try file.pin(for: hidden) }
            #expect(error?.code == .usage)
        }
    }

    @Test func `dash escapes are only undone inside a signed message`() throws {
        let file = try Self.parse("- \(Self.hexA)  escaped.txt\n\(Self.hexB)  plain.txt\n")
        #expect(file.entries.map(\.name) == ["plain.txt"])
    }

    static let notChecksumLines = [
        "hello world",
        // Hex of SHA-256's length under a SHA-384 tag: malformed, never read as base64 (48 bytes).
        "SHA384 (app.tar.gz) = " + String(repeating: "e", count: 64),
        "<!DOCTYPE html>",
        String(repeating: "a", count: 63) + "  short.txt",
        String(repeating: "a", count: 65) + "  long.txt",
        String(repeating: "a", count: 64) + "x  glued.txt",
        String(repeating: "a", count: 64) + "  ",
        String(repeating: "a", count: 64) + " *",
        " " + String(repeating: "a", count: 64) + "  indented.txt",
        // A Debian Release file: indented `hex size path`.
        " " + String(repeating: "a", count: 64) + "     1234 main/binary-amd64/Packages",
        "\\" + String(repeating: "a", count: 64) + "  bad\\qescape.txt",
        "\\" + String(repeating: "a", count: 64) + "  trailing\\",
        "SHA256 (x.txt) = zzzz",
        "SHA256 (x.txt) = " + String(repeating: "a", count: 63),
        "SHA256 (x.txt) = " + String(repeating: "a", count: 64) + " extra",
        "SHA256 () = " + String(repeating: "a", count: 64),
        "SHA256 (x.txt) " + String(repeating: "a", count: 64),
        "SHA 256 (x.txt) = " + String(repeating: "a", count: 64),
        "(x.txt) = " + String(repeating: "a", count: 64),
        "SHA256 (x.txt) = ",
        "sha256:" + String(repeating: "a", count: 64) + "  x.txt",
    ]
}
