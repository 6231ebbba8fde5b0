import Foundation
import Testing

@testable import PinFetch

/// `Manifest`: `URL [URL ...] [checksum] [output]` lines, checksum files under a base URL, and
/// `--shard K/N`.
struct ManifestTests {
    /// 0xAA × 32 (SHA-256) and 0xCC × 64 (SHA-512), as hex and base64.
    static let hexA = String(repeating: "a", count: 64)
    static let hexC = String(repeating: "c", count: 128)
    static let pinA = try! Pin(algorithm: .sha256, digest: [UInt8](repeating: 0xAA, count: 32))
    static let pinB = try! Pin(algorithm: .sha256, digest: [UInt8](repeating: 0xBB, count: 32))
    static let pinC = try! Pin(algorithm: .sha512, digest: [UInt8](repeating: 0xCC, count: 64))
    static let base64A = Data(repeating: 0xAA, count: 32).base64EncodedString()
    static let base64C = Data(repeating: 0xCC, count: 64).base64EncodedString()

    struct Line: Sendable, CustomTestStringConvertible {
        var text: String
        var mirrors: [String]
        var pin: Pin?
        var output: String?
        var testDescription: String { self.text.debugDescription }
    }

    static let lines = [
        Line(text: "https://example.com/a.tar.gz", mirrors: ["https://example.com/a.tar.gz"]),
        Line(text: "HTTPS://EXAMPLE.COM/a", mirrors: ["HTTPS://EXAMPLE.COM/a"]),
        Line(text: "Http://example.com/a", mirrors: ["Http://example.com/a"]),
        Line(text: "  https://a.example/x  ", mirrors: ["https://a.example/x"]),
        Line(
            text: "http://a.example/x https://b.example/x https://c.example/x",
            mirrors: ["http://a.example/x", "https://b.example/x", "https://c.example/x"]
        ),
        Line(text: "https://a.example/x sha256:\(hexA)", mirrors: ["https://a.example/x"], pin: pinA),
        Line(text: "https://a.example/x SHA256:\(hexA.uppercased())", mirrors: ["https://a.example/x"], pin: pinA),
        Line(text: "https://a.example/x \(hexA)", mirrors: ["https://a.example/x"], pin: pinA),
        Line(text: "https://a.example/x sha512:\(hexC)", mirrors: ["https://a.example/x"], pin: pinC),
        Line(text: "https://a.example/x \(hexC)", mirrors: ["https://a.example/x"], pin: pinC),
        Line(text: "https://a.example/x sha256-\(base64A)", mirrors: ["https://a.example/x"], pin: pinA),
        Line(
            text: "https://a.example/x sha512-\(base64C) out.bin",
            mirrors: ["https://a.example/x"],
            pin: pinC,
            output: "out.bin"
        ),
        Line(text: "https://a.example/x out.bin", mirrors: ["https://a.example/x"], output: "out.bin"),
        Line(
            text: "https://a.example/x sha256:\(hexA) dists/stable/out.bin",
            mirrors: ["https://a.example/x"],
            pin: pinA,
            output: "dists/stable/out.bin"
        ),
        Line(
            text: "https://a.example/x\thttps://b.example/x\t\tsha256:\(hexA)\tout.bin",
            mirrors: ["https://a.example/x", "https://b.example/x"],
            pin: pinA,
            output: "out.bin"
        ),
        Line(text: "https://a.example/x#frag sha256:\(hexA)", mirrors: ["https://a.example/x#frag"], pin: pinA),
        Line(text: "https://a.example/x out.bin # the nightly", mirrors: ["https://a.example/x"], output: "out.bin"),
        Line(text: "https://a.example/x #sha256:zz", mirrors: ["https://a.example/x"]),
        Line(
            text: "https://a.example/x sha256-linux.tar.gz",
            mirrors: ["https://a.example/x"],
            output: "sha256-linux.tar.gz"
        ),
        Line(text: "https://a.example/x deadbeef", mirrors: ["https://a.example/x"], output: "deadbeef"),
        Line(
            text: "https://a.example/x name:with:colons",
            mirrors: ["https://a.example/x"],
            output: "name:with:colons"
        ),
        Line(text: "https://a.example/x ../escape", mirrors: ["https://a.example/x"], output: "../escape"),
        Line(text: "https://a.example/x http.txt", mirrors: ["https://a.example/x"], output: "http.txt"),
    ]

    @Test(arguments: Self.lines)
    func `manifest lines give mirrors, pin and output`(item: Line) throws {
        let manifest = try Manifest(parsing: item.text)
        #expect(
            manifest.entries == [Manifest.Entry(mirrors: item.mirrors, pin: item.pin, output: item.output, line: 1)]
        )
    }

    @Test func `comments, blank lines, CRLF and a byte order mark are skipped and lines counted`() throws {
        let text =
            "\u{FEFF}# mirror list\r\n\r\nhttps://a.example/1\r\n   # indented comment\r\n"
            + "https://a.example/2 sha256:\(Self.hexA)   # pinned\r\n\t\r\nhttps://a.example/3 three.bin\r\n"
        let manifest = try Manifest(parsing: text)
        #expect(
            manifest.entries == [
                Manifest.Entry(mirrors: ["https://a.example/1"], line: 3),
                Manifest.Entry(mirrors: ["https://a.example/2"], pin: Self.pinA, line: 5),
                Manifest.Entry(mirrors: ["https://a.example/3"], output: "three.bin", line: 7),
            ]
        )
    }

    @Test(arguments: ["", "\n", "# nothing yet\n\n   \n", "\u{FEFF}"])
    func `a manifest without entries is empty`(text: String) throws {
        #expect(try Manifest(parsing: text).entries.isEmpty)
    }

    struct Bad: Sendable, CustomTestStringConvertible {
        var text: String
        var line: Int
        var reason: String
        var testDescription: String { self.text.debugDescription }
    }

    static let bad = [
        Bad(text: "ftp://a.example/x", line: 1, reason: "expected an http://, https:// or s3:// URL first"),
        Bad(text: "http://", line: 1, reason: "expected an http://, https:// or s3:// URL first"),
        // 0x0F | 0x20 is "/": only letters are folded to lower case (found by ManifestFuzz).
        Bad(
            text: "https:\u{0F}/example.com/x.bin",
            line: 1,
            reason: "expected an http://, https:// or s3:// URL first"
        ),
        Bad(text: "a.example/x sha256:\(hexA)", line: 1, reason: "expected an http://, https:// or s3:// URL first"),
        Bad(text: "# ok\n\nhttps://a.example/x\nout.bin https://a.example/y", line: 4, reason: "URL first"),
        Bad(text: "https://a.example/x sha256:12", line: 1, reason: "malformed checksum"),
        Bad(text: "https://a.example/x sha256:\(hexA)0", line: 1, reason: "malformed checksum"),
        Bad(text: "https://a.example/x sha512:\(hexA)", line: 1, reason: "malformed checksum"),
        Bad(text: "https://a.example/x md5:d41d8cd98f00b204e9800998ecf8427e0", line: 1, reason: "malformed checksum"),
        Bad(text: "https://a.example/x d41d8cd98f00b204e9800998ecf8427e", line: 1, reason: "malformed checksum"),
        Bad(text: "https://a.example/x \(String(hexA.dropLast()))", line: 1, reason: "malformed checksum"),
        Bad(text: "https://a.example/x sha256-\(base64A.dropLast(6))", line: 1, reason: "malformed checksum"),
        Bad(text: "https://a.example/x sha256:12 out.bin", line: 1, reason: "malformed checksum"),
        Bad(text: "https://a.example/x out.bin sha256:\(hexA)", line: 1, reason: "'out.bin' is not a checksum"),
        Bad(text: "https://a.example/x a.bin b.bin", line: 1, reason: "'a.bin' is not a checksum"),
        Bad(text: "https://a.example/x sha256:\(hexA) a b", line: 1, reason: "3 tokens after the URLs"),
        Bad(text: "https://a.example/x sha256:\(hexA) sha512:\(hexC)", line: 1, reason: "a second checksum"),
        Bad(text: "https://a.example/x \(hexA) \(hexA)", line: 1, reason: "a second checksum"),
        Bad(text: "https://a.example/x sha256:\(hexA) sha256:12", line: 1, reason: "a second checksum"),
        Bad(
            text: "https://a.example/x out.bin https://b.example/x",
            line: 1,
            reason: "after a checksum or output name"
        ),
        Bad(text: "https://a.example/x\r\nhttps://b.example/x 1 2 3\r\n", line: 2, reason: "3 tokens"),
    ]

    @Test(arguments: Self.bad)
    func `malformed lines are usage errors naming the line`(item: Bad) {
        let error = #expect(throws: PinFetchError.self) { try Manifest(parsing: item.text) }
        #expect(error?.code == .usage)
        #expect(error?.code.exitStatus == 2)
        #expect(error?.message.hasPrefix("manifest line \(item.line): ") == true, "\(error?.message ?? "")")
        #expect(error?.message.contains(item.reason) == true, "\(error?.message ?? "")")
    }

    // MARK: - Shards

    static let tenEntries = Manifest(
        entries: (0..<10).map { Manifest.Entry(mirrors: ["https://a.example/\($0)"], line: $0 + 1) }
    )

    @Test(arguments: [
        (0, 1, Array(0..<10)), (0, 3, [0, 3, 6, 9]), (1, 3, [1, 4, 7]), (2, 3, [2, 5, 8]), (4, 5, [4, 9]),
        (0, 20, [0]), (9, 20, [9]), (15, 20, []),
    ])
    func `shard K of N keeps the entries whose number mod N is K`(k: Int, n: Int, expected: [Int]) {
        let shard = Self.tenEntries.shard(k, of: n)
        #expect(shard.entries.map(\.mirrors[0]) == expected.map { "https://a.example/\($0)" })
    }

    @Test(arguments: 1...11)
    func `the shards of N cover every entry once, in order`(n: Int) {
        let shards = (0..<n).map { Self.tenEntries.shard($0, of: n).entries }
        #expect(shards.joined().count == 10)
        #expect(Set(shards.joined().map(\.line)).count == 10)
        for shard in shards { #expect(shard.map(\.line) == shard.map(\.line).sorted()) }
    }

    @Test func `shards number entries, not comment or blank lines`() throws {
        let manifest = try Manifest(
            parsing:
                "# a\nhttps://a.example/0\n\n# b\nhttps://a.example/1\nhttps://a.example/2\n# c\nhttps://a.example/3\n"
        )
        #expect(manifest.shard(1, of: 2).entries.map(\.mirrors[0]) == ["https://a.example/1", "https://a.example/3"])
        #expect(manifest.shard(1, of: 2).entries.map(\.line) == [5, 8])
    }

    @Test(arguments: [("0/1", 0, 1), ("3/4", 3, 4), ("9/10", 9, 10), ("00/02", 0, 2), ("0/1000000", 0, 1_000_000)])
    func `valid shard arguments parse`(text: String, k: Int, n: Int) throws {
        let shard = try parseShard(text)
        #expect(shard.k == k)
        #expect(shard.n == n)
    }

    @Test(arguments: [
        "", "/", "1", "1/1", "2/1", "0/0", "5/3", "-1/2", "+0/2", "0/-2", " 0/2", "0/2 ", "0 /2", "0/", "/2", "0/2/3",
        "a/b", "0x1/2", "1.0/2", "99999999999999999999/2", "0/99999999999999999999", "０/２", "١/٢",
    ])
    func `invalid shard arguments are usage errors`(text: String) {
        let error = #expect(throws: PinFetchError.self) { try parseShard(text) }
        #expect(error?.code == .usage)
        #expect(error?.code.exitStatus == 2)
        #expect(error?.message.contains("--shard") == true)
    }

    // MARK: - A checksum file under a base URL

    static func checksumFile(_ text: String) throws -> ChecksumFile {
        try ChecksumFile(parsing: Array(text.utf8))
    }

    static let hexB = String(repeating: "b", count: 64)
    static let md5 = String(repeating: "1", count: 32)

    @Test(arguments: ["https://mirror.example/dist", "https://mirror.example/dist/"])
    func `each checksum entry becomes base URL plus name, pinned, saved under its own relative path`(
        baseURL: String
    ) throws {
        let file = try Self.checksumFile(
            "\(Self.hexA)  app-linux.tar.gz\n\(Self.md5)  app-linux.tar.gz\n\(Self.md5)  legacy.zip\n"
                + "\(Self.hexB) *./linux/amd64/tool\nSHA512 (my file%.txt) = \(Self.hexC)\n\(Self.hexA)  naïve.txt\n"
        )
        let manifest = try Manifest(checksumFile: file, baseURL: baseURL)
        #expect(
            manifest.entries == [
                Manifest.Entry(
                    mirrors: ["https://mirror.example/dist/app-linux.tar.gz"],
                    pin: Self.pinA,
                    output: "app-linux.tar.gz",
                    line: 1
                ),
                Manifest.Entry(
                    mirrors: ["https://mirror.example/dist/linux/amd64/tool"],
                    pin: Self.pinB,
                    output: "linux/amd64/tool",
                    line: 4
                ),
                Manifest.Entry(
                    mirrors: ["https://mirror.example/dist/my%20file%25.txt"],
                    pin: Self.pinC,
                    output: "my file%.txt",
                    line: 5
                ),
                Manifest.Entry(
                    mirrors: ["https://mirror.example/dist/na%C3%AFve.txt"],
                    pin: Self.pinA,
                    output: "naïve.txt",
                    line: 6
                ),
            ]
        )
    }

    @Test func `duplicate names with the same pin are one entry, and SHA-512 wins over SHA-256`() throws {
        let file = try Self.checksumFile(
            "\(Self.hexA)  a.bin\n\(Self.hexA)  ./a.bin\n\(Self.hexB)  b.bin\nSHA512 (b.bin) = \(Self.hexC)\n"
        )
        let manifest = try Manifest(checksumFile: file, baseURL: "http://m.example/")
        #expect(
            manifest.entries == [
                Manifest.Entry(mirrors: ["http://m.example/a.bin"], pin: Self.pinA, output: "a.bin", line: 1),
                Manifest.Entry(mirrors: ["http://m.example/b.bin"], pin: Self.pinC, output: "b.bin", line: 3),
            ]
        )
    }

    @Test func `a base URL's query or fragment is found when a combining mark follows its delimiter`() throws {
        let file = try Self.checksumFile("\(Self.hexA)  a.bin\n")
        let manifest = try Manifest(checksumFile: file, baseURL: "https://m.example/r/?\u{301}sig=1")
        #expect(manifest.entries.map(\.mirrors) == [["https://m.example/r/a.bin?\u{301}sig=1"]])
        let error = #expect(throws: PinFetchError.self) {
            try Manifest(checksumFile: file, baseURL: "https://m.example/r/#\u{301}x")
        }
        #expect(error?.message.contains("fragment") == true)
    }

    @Test func `one base name in two directories is two files of a tree`() throws {
        let file = try Self.checksumFile("\(Self.hexA)  linux/amd64/tool\n\(Self.hexB)  darwin/arm64/tool\n")
        let manifest = try Manifest(checksumFile: file, baseURL: "https://m.example/r/")
        #expect(
            manifest.entries == [
                Manifest.Entry(
                    mirrors: ["https://m.example/r/linux/amd64/tool"],
                    pin: Self.pinA,
                    output: "linux/amd64/tool",
                    line: 1
                ),
                Manifest.Entry(
                    mirrors: ["https://m.example/r/darwin/arm64/tool"],
                    pin: Self.pinB,
                    output: "darwin/arm64/tool",
                    line: 2
                ),
            ]
        )
    }

    struct BadChecksumFile: Sendable, CustomTestStringConvertible {
        var text: String
        var baseURL: String
        var reason: String
        var testDescription: String { self.reason }
    }

    static let badChecksumFiles = [
        BadChecksumFile(
            text: "\(hexA)  a.bin\n\(hexB)  ./a.bin\n",
            baseURL: "https://m.example/",
            reason: "two different sha256 checksums for 'a.bin' in the checksum file (lines 1 and 2)"
        ),
        BadChecksumFile(
            text: "\(hexA)  linux/app\n\(hexB)  linux/app/README\n",
            baseURL: "https://m.example/",
            reason: "lines 1 and 2: 'linux/app' is a file and the directory of 'linux/app/README'"
        ),
        BadChecksumFile(
            text: "\(hexB)  linux/app/README\n\(hexA)  linux/app\n",
            baseURL: "https://m.example/",
            reason: "lines 2 and 1: 'linux/app' is a file and the directory of 'linux/app/README'"
        ),
        BadChecksumFile(text: "\(hexA)  a//b\n", baseURL: "https://m.example/", reason: "empty, '.' or '..' segment"),
        BadChecksumFile(text: "\(hexA)  a/./b\n", baseURL: "https://m.example/", reason: "empty, '.' or '..' segment"),
        BadChecksumFile(text: hexA, baseURL: "https://m.example/", reason: "bare digest"),
        BadChecksumFile(text: "\(md5)  a.bin\n", baseURL: "https://m.example/", reason: "no sha256, sha384 or sha512"),
        BadChecksumFile(text: "\(hexA)  /abs/a.bin\n", baseURL: "https://m.example/", reason: "line 1"),
        BadChecksumFile(text: "\(hexB)  ok\n\(hexA)  ../a.bin\n", baseURL: "https://m.example/", reason: "line 2"),
        BadChecksumFile(text: "\(hexA)  x/../../a.bin\n", baseURL: "https://m.example/", reason: "'..' segment"),
        BadChecksumFile(text: "\(hexA)  dir/\n", baseURL: "https://m.example/", reason: "ends in '/'"),
        BadChecksumFile(text: "\(hexA)  ./\n", baseURL: "https://m.example/", reason: "cannot be put under"),
        BadChecksumFile(text: "\(hexA)  a.bin\n", baseURL: "ftp://m.example/", reason: "base URL"),
        BadChecksumFile(text: "\(hexA)  a.bin\n", baseURL: "m.example/dist/", reason: "base URL"),
        BadChecksumFile(text: "\(hexA)  a.bin\n", baseURL: "", reason: "base URL"),
        // The names would go after the fragment.
        BadChecksumFile(text: "\(hexA)  a.bin\n", baseURL: "https://m.example/d/#x", reason: "fragment"),
    ]

    /// Each name goes onto the base URL's path, before its query (never `…/d?sig=Xa.bin`).
    @Test(arguments: ["https://m.example/d?sv=1&sig=S", "https://m.example/d/?sv=1&sig=S"])
    func `a base URL's query follows each name`(baseURL: String) throws {
        let file = try Self.checksumFile("\(Self.hexA)  a.bin\n\(Self.hexB)  sub/b c\n")
        let manifest = try Manifest(checksumFile: file, baseURL: baseURL)
        #expect(
            manifest.entries.map(\.mirrors) == [
                ["https://m.example/d/a.bin?sv=1&sig=S"], ["https://m.example/d/sub/b%20c?sv=1&sig=S"],
            ]
        )
    }

    @Test(arguments: Self.badChecksumFiles)
    func `checksum files that cannot be a manifest are usage errors`(item: BadChecksumFile) throws {
        let file = try Self.checksumFile(item.text)
        let error = #expect(throws: PinFetchError.self) { try Manifest(checksumFile: file, baseURL: item.baseURL) }
        #expect(error?.code == .usage)
        #expect(error?.code.exitStatus == 2)
        #expect(error?.message.contains(item.reason) == true, "\(error?.message ?? "")")
    }
}
