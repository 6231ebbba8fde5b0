import Foundation
import Testing

@testable import PinFetch

/// What a checksum file may not hold, and how an entry is found by name.
extension ChecksumFileTests {
    @Test(arguments: Self.notChecksumLines)
    func `lines that are not checksum lines are skipped`(line: String) throws {
        let file = try Self.parse("\(line)\n\(Self.hexB)  good.txt\n")
        #expect(file.entries == [ChecksumFile.Entry(name: "good.txt", pin: Self.pinB, line: 2)])
        #expect(file.unsupportedEntries.isEmpty)
        #expect(file.bareDigest == nil)
    }

    @Test(arguments: [
        "",
        "\n\n",
        "\u{FEFF}",
        "# only a comment\n",
        "hello\n",
        "<html><body>Not Found</body></html>\n",
        "\(hexA)\n\(hexB)\n",
        String(repeating: "a", count: 63),
        "-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA256\n\nnothing here\n-----BEGIN PGP SIGNATURE-----\n\(hexA)\n",
    ])
    func `a file without checksum lines is a usage error`(text: String) {
        let error = #expect(throws: PinFetchError.self) { try Self.parse(text) }
        #expect(error?.code == .usage)
        #expect(error?.code.exitStatus == 2)
        #expect(error?.message.contains("no checksum lines") == true)
    }

    @Test func `files over 16 MiB are refused and 16 MiB is accepted`() throws {
        let line = Array("\(Self.hexA)  big.iso\n".utf8)
        var bytes = line + Array("# ".utf8)
        bytes += [UInt8](repeating: UInt8(ascii: "x"), count: ChecksumFile.maximumSize - bytes.count)
        #expect(bytes.count == 16 * 1024 * 1024)
        #expect(try ChecksumFile(parsing: bytes).pin(for: "big.iso") == Self.pinA)
        bytes.append(UInt8(ascii: "x"))
        let error = #expect(throws: PinFetchError.self) { try ChecksumFile(parsing: bytes) }
        #expect(error?.code.exitStatus == 2)
        #expect(error?.message.contains("16 MiB") == true)
    }

    struct Unsupported: Sendable, CustomTestStringConvertible {
        var text: String
        var algorithm: String
        var testDescription: String { self.algorithm + ": " + self.text }
    }

    static let unsupported = [
        Unsupported(text: "\(md5)  app.tar.gz\n", algorithm: "md5"),
        Unsupported(text: "\(sha1) *app.tar.gz\n", algorithm: "sha1"),
        Unsupported(text: "\(sha224)  app.tar.gz\n", algorithm: "sha224"),
        Unsupported(text: "BLAKE2b (app.tar.gz) = \(hexC)\n", algorithm: "blake2b"),
        Unsupported(text: "SHA512/256 (app.tar.gz) = \(hexA)\n", algorithm: "sha512/256"),
        Unsupported(text: "\(md5)\n", algorithm: "md5"),
        Unsupported(text: "\(sha1)  -\n", algorithm: "sha1"),
        Unsupported(text: "\(md5)  app.tar.gz\n\(sha1)  app.tar.gz\n\(hexA)  other.tar.gz\n", algorithm: "md5, sha1"),
    ]

    /// BSD-tagged `MD5 (…) =` and `SHA1 (…) =` lines spell their algorithm out: weak pins, and
    /// any stronger entry for the same name wins over them, in either order.
    @Test func `tagged MD5 and SHA-1 lines are weak pins, below any SHA-2 entry`() throws {
        let md5 = try Self.parse("MD5 (app.tar.gz) = \(Self.md5)\n").pin(for: "app.tar.gz")
        #expect(md5 == (try Pin(parsing: "md5:\(Self.md5)")))
        let sha1 = try Self.parse("SHA1 (app.tar.gz) = \(Self.sha1)\n").pin(for: "app.tar.gz")
        #expect(sha1 == (try Pin(parsing: "sha1:\(Self.sha1)")))
        for text in [
            "MD5 (app.tar.gz) = \(Self.md5)\nSHA256 (app.tar.gz) = \(Self.hexA)\nSHA1 (app.tar.gz) = \(Self.sha1)\n",
            "SHA256 (app.tar.gz) = \(Self.hexA)\nMD5 (app.tar.gz) = \(Self.md5)\n",
        ] {
            #expect(try Self.parse(text).pin(for: "app.tar.gz") == (try Pin(parsing: "sha256:\(Self.hexA)")), "\(text)")
        }
        #expect(
            try Self.parse("MD5 (app.tar.gz) = \(Self.md5)\nSHA1 (app.tar.gz) = \(Self.sha1)\n").pin(for: "app.tar.gz")
                == (try Pin(parsing: "sha1:\(Self.sha1)"))
        )
    }

    /// `sha384sum` output and BSD `SHA384 (…) =` lines pin SHA-384; of several algorithms for one
    /// name the strongest counts (SHA-512 over SHA-384 over SHA-256).
    @Test func `SHA-384 entries pin SHA-384, below SHA-512 and above SHA-256`() throws {
        for text in ["\(Self.sha384)  app.tar.gz\n", "SHA384 (app.tar.gz) = \(Self.sha384)\n"] {
            let pin = try Self.parse(text).pin(for: "app.tar.gz")
            #expect(pin == (try Pin(parsing: "sha384:\(Self.sha384)")), "\(text)")
        }
        let mixed = try Self.parse("\(Self.hexA)  app.tar.gz\n\(Self.sha384)  app.tar.gz\n")
        #expect(try mixed.pin(for: "app.tar.gz").algorithm == .sha384)
        let all = try Self.parse("\(Self.sha384)  app.tar.gz\n\(Self.hexC)  app.tar.gz\n\(Self.hexA)  app.tar.gz\n")
        #expect(try all.pin(for: "app.tar.gz").algorithm == .sha512)
    }

    @Test(arguments: Self.unsupported)
    func `only unsupported algorithms for a name is a usage error that names them`(item: Unsupported) throws {
        let file = try Self.parse(item.text)
        let error = #expect(throws: PinFetchError.self) { try file.pin(for: "app.tar.gz") }
        #expect(error?.code == .usage)
        #expect(error?.code.exitStatus == 2)
        #expect(error?.message.contains("only \(item.algorithm) checksums") == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("'app.tar.gz'") == true)
    }

    @Test func `a name with no entry is a usage error that names it`() throws {
        let file = try Self.parse("\(Self.hexA)  a.tar.gz\n\(Self.md5)  b.tar.gz\n")
        for name in ["c.tar.gz", "A.TAR.GZ", "a.tar", "", "a.tar.gz "] {
            let error = #expect(throws: PinFetchError.self) { try file.pin(for: name) }
            #expect(error?.code.exitStatus == 2)
            #expect(error?.message.contains("no checksum for '\(name)'") == true)
        }
        let error = #expect(throws: PinFetchError.self) { try file.pin(for: "evil\n\u{1B}name") }
        #expect(error?.message.contains("'evil\\x0A\\x1Bname'") == true)
    }

    @Test func `two different pins for one name are a usage error`() throws {
        let file = try Self.parse("\(Self.hexA)  app.tar.gz\n\(Self.hexD)  other\n\(Self.hexB) *app.tar.gz\n")
        let error = #expect(throws: PinFetchError.self) { try file.pin(for: "app.tar.gz") }
        #expect(error?.code.exitStatus == 2)
        #expect(error?.message.contains("two different sha256 checksums") == true)
        #expect(error?.message.contains("lines 1 and 3") == true)
        #expect(try file.pin(for: "other") == Self.pinD)
    }

    @Test func `the same pin twice for one name is fine`() throws {
        let file = try Self.parse("\(Self.hexA)  app.tar.gz\nSHA256 (./app.tar.gz) = \(Self.hexA.uppercased())\n")
        #expect(file.entries.count == 2)
        #expect(try file.pin(for: "app.tar.gz") == Self.pinA)
    }

    @Test(arguments: [
        "\(hexA)  app.tar.gz\n\(hexC)  app.tar.gz\n",
        "SHA512 (app.tar.gz) = \(hexC)\nSHA256 (app.tar.gz) = \(hexA)\n",
    ])
    func `SHA-256 and SHA-512 for one name give the SHA-512 pin`(text: String) throws {
        #expect(try Self.parse(text).pin(for: "app.tar.gz") == Self.pinC)
    }

    @Test func `an exact name wins over a last path component, which may be ambiguous`() throws {
        let file = try Self.parse(
            "\(Self.hexA)  linux/app\n\(Self.hexB)  darwin/app\n\(Self.hexD)  tool\n\(Self.hexA)  old/tool\n"
        )
        #expect(try file.pin(for: "linux/app") == Self.pinA)
        #expect(try file.pin(for: "darwin/app") == Self.pinB)
        #expect(try file.pin(for: "tool") == Self.pinD)
        let error = #expect(throws: PinFetchError.self) { try file.pin(for: "app") }
        #expect(error?.message.contains("two different sha256 checksums for 'app'") == true)
    }

    /// User input: a checksum file and a manifest with a Latin-1 name.
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
            let run = await runCLI(quietOnce + ["-P", "\(directory)/o", "-i", "\(directory)/m"])
            #expect(run.status == 2)
            #expect(run.standardError.contains("line 2 is not UTF-8"), "\(run.standardError)")
            #expect(!FileManager.default.fileExists(atPath: "\(directory)/o"))
        }
    }
}
