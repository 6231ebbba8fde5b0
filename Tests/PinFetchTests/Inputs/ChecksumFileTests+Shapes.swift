import Foundation
import Testing

@testable import PinFetch

/// More rows of ``ChecksumFileTests/shapes``: BSD-tagged files and the shapes after them.
extension ChecksumFileTests {
    static let taggedShapes = [
        Shape(
            source: "FreeBSD CHECKSUM.SHA512 (BSD tags)",
            text: "SHA512 (FreeBSD-14.0-RELEASE-amd64-bootonly.iso) = \(hexC)\n"
                + "SHA512 (FreeBSD-14.0-RELEASE-amd64-disc1.iso) = \(hexC.uppercased())\n",
            fileName: "FreeBSD-14.0-RELEASE-amd64-disc1.iso",
            expected: pinC,
            entries: 2
        ),
        Shape(
            source: "OpenBSD SHA256 (BSD tags)",
            text: "SHA256 (INSTALL.amd64) = \(hexA)\nSHA256 (bsd) = \(hexB)\nSHA256 (bsd.mp) = \(hexD)\n",
            fileName: "bsd",
            expected: pinB,
            entries: 3
        ),
        Shape(
            source: "sha256sum --tag, a name with spaces and parentheses",
            text: "SHA256 (my file (1).txt) = \(hexA)\nSHA256 (my file (2).txt) = \(hexB)\n",
            fileName: "my file (1).txt",
            expected: pinA,
            entries: 2
        ),
        Shape(
            source: "shasum --tag, a name containing ') = '",
            text: "SHA256 (odd) = name) = \(hexD)\n",
            fileName: "odd) = name",
            expected: pinD,
            entries: 1
        ),
        Shape(
            source: "SHA-256 tag",
            text: "SHA-256 (app.tar.gz) = \(hexB)\n",
            fileName: "app.tar.gz",
            expected: pinB,
            entries: 1
        ),
        Shape(
            source: "SHA-512 tag",
            text: "SHA-512 (app.tar.gz) = \(hexC)\n",
            fileName: "app.tar.gz",
            expected: pinC,
            entries: 1
        ),
        Shape(
            source: "openssl dgst (OpenSSL 3 spelling)",
            text: "SHA2-256(app.tar.gz)= \(hexA)\n",
            fileName: "app.tar.gz",
            expected: pinA,
            entries: 1
        ),
        Shape(
            source: "cksum --base64 tag",
            text: "SHA256 (app.tar.gz) = \(Data(pinD.digest).base64EncodedString())\n",
            fileName: "app.tar.gz",
            expected: pinD,
            entries: 1
        ),
        Shape(
            source: "upper-case hex",
            text: "\(hexB.uppercased())  app.tar.gz\n",
            fileName: "app.tar.gz",
            expected: pinB,
            entries: 1
        ),
        Shape(
            source: "a tab between digest and name",
            text: "\(hexA)\tother.bin\n\(hexB)\tapp.tar.gz\n",
            fileName: "app.tar.gz",
            expected: pinB,
            entries: 2
        ),
        Shape(
            source: "one space between digest and name (md5 -r form)",
            text: "\(hexB) app.tar.gz\n",
            fileName: "app.tar.gz",
            expected: pinB,
            entries: 1
        ),
        Shape(
            source: "GNU escaped name",
            text: "\\\(hexD)  dir\\\\a\\nb.txt\n\(hexA)  plain.txt\n",
            fileName: "dir\\a\nb.txt",
            expected: pinD,
            entries: 2
        ),
        Shape(
            source: "GNU escaped tagged name",
            text: "\\SHA256 (line\\nbreak.txt) = \(hexD)\n",
            fileName: "line\nbreak.txt",
            expected: pinD,
            entries: 1
        ),
        Shape(
            source: "sha256sum < file (name '-')",
            text: "\(hexD)  -\n",
            fileName: "anything.iso",
            expected: pinD,
            entries: nil
        ),
        Shape(
            source: "comments, blank lines and a Windows path",
            text: "# made by release.sh\n\n\(hexA)  dist\\win\\app.exe\n\n# end\n",
            fileName: "app.exe",
            expected: pinA,
            entries: 1
        ),
        Shape(
            source: "md5 and sha256 lines mixed",
            text: "\(md5)  app.tar.gz\n\(hexB)  app.tar.gz\n\(sha1)  app.tar.gz\n",
            fileName: "app.tar.gz",
            expected: pinB,
            entries: 1
        ),
    ]
}
