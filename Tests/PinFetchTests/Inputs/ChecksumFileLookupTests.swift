import Foundation
import Testing

@testable import PinFetch
@testable import PinFetchCLI

/// `--checksum-file` finds the entry by the URL's path first: the longest suffix, so trees and
/// renamed outputs find their line.
struct ChecksumFileLookupTests {
    typealias Known = ChecksumFileTests

    static let tree = try! Known.parse(
        "\(Known.hexA)  ./linux/amd64/tool\n\(Known.hexB)  darwin/arm64/tool\n\(Known.hexD)  tool\n"
            + "\(Known.hexA)  tool-1.2-linux-amd64\n\(Known.hexB)  my file.txt\n"
    )

    struct Lookup: Sendable, CustomTestStringConvertible {
        var url: String
        var fileName: String
        var pin: Pin
        var testDescription: String { "\(self.url) as \(self.fileName)" }
    }

    static let lookups = [
        Lookup(url: "https://h/r/linux/amd64/tool", fileName: "tool", pin: Known.pinA),
        Lookup(url: "https://h/r/darwin/arm64/tool", fileName: "tool", pin: Known.pinB),
        Lookup(url: "https://h/other/tool", fileName: "tool", pin: Known.pinD),  // only `tool` is a suffix
        Lookup(url: "https://h/dl/tool-1.2-linux-amd64?x=1#frag", fileName: "tool", pin: Known.pinA),
        Lookup(url: "https://h/dl/my%20file.txt", fileName: "saved", pin: Known.pinB),  // decoded
        Lookup(url: "https://h/amd64/nothing-here", fileName: "tool-1.2-linux-amd64", pin: Known.pinA),  // output name
    ]

    @Test(arguments: Self.lookups)
    func `the longest suffix of the URL's path wins, then the output name`(lookup: Lookup) throws {
        let pin = try Self.tree.pin(
            forURLPath: HTTPURL(lookup.url).pathSegments,
            fileName: lookup.fileName
        )
        #expect(pin == lookup.pin)
    }

    @Test(arguments: [
        ("\(Known.hexA)  linux/app\n\(Known.hexB)  darwin/app\n", "https://h/x/app", "app", "another directory"),
        ("\(Known.hexA)  a/app\n\(Known.hexB)  ./a/app\n", "https://h/a/app", "app", "two different"),
        ("\(Known.hexA)  a.bin\n", "https://h/b.bin", "b.bin", "no checksum for 'b.bin'"),
        (
            "\(Known.md5)  b.bin\n\(Known.hexA)  a.bin\n", "https://h/b.bin", "b.bin",
            "only md5 checksums for 'b.bin' (pinfetch verifies sha256, sha384 and sha512; md5 and sha1 only spelled out, as a tagged 'MD5 (name) = HEX' line"
        ),
        // With -o, the URL's name is looked up too, and named.
        ("\(Known.md5)  b.bin\n\(Known.hexA)  a.bin\n", "https://h/b.bin", "n4", "only md5 checksums for 'b.bin'"),
        (
            "\(Known.hexA)  a.bin\n", "https://h/b.bin", "n4",
            "no checksum for 'b.bin' (the URL's file) or 'n4' (the output)"
        ),
        // Never darwin's digest for the linux file.
        ("\(Known.hexB)  darwin/arm64/tool\n", "https://h/linux/amd64/tool", "tool", "in another directory"),
        ("\(Known.hexB)  dist/app.tgz\n", "https://h/v1/app.tgz", "app.tgz", "'dist/app.tgz' (line 1)"),
    ])
    func `an ambiguous or missing entry is bad input`(text: String, url: String, name: String, reason: String) throws {
        let file = try Known.parse(text)
        let error = #expect(throws: PinFetchError.self) {
            try file.pin(forURLPath: HTTPURL(url).pathSegments, fileName: name)
        }
        #expect(error?.code == .usage)
        #expect(error?.message.contains(reason) == true, "\(error?.message ?? "")")
    }

    @Test func `a name is split at its slashes by byte, a combining mark after one included`() throws {
        // "/" and U+0301 are one Character, unequal to "/" (found by ChecksumFileFuzz).
        let file = try Known.parse("\(Known.hexA)  ./caf\u{E9}/\u{301}x\n\(Known.hexB)  other/\u{301}x\n")
        #expect(try file.pin(forURLPath: ["pub", "caf\u{E9}", "\u{301}x"], fileName: "\u{301}x") == Known.pinA)
        #expect(try file.pin(forURLPath: ["other", "\u{301}x"], fileName: "\u{301}x") == Known.pinB)
        #expect(try file.pin(for: "caf\u{E9}/\u{301}x") == Known.pinA)
    }

    @Test func `a bare digest still applies to any URL`() throws {
        let file = try Known.parse(Known.hexA + "\n")
        #expect(try file.pin(forURLPath: ["x", "y"], fileName: "y") == Known.pinA)
    }

    @Test(arguments: [
        ("https://h/a/my%20file?q=1#f", ["a", "my file"]), ("https://h", []), ("https://h/", [""]),
        ("http://u:p@h:8/x/%ZZ", ["x", "%ZZ"]),
    ])
    func `URL path segments are percent-decoded, query and fragment dropped`(url: String, expected: [String]) throws {
        #expect(try HTTPURL(url).pathSegments == expected)
    }

    @Test func `-o tool with a URL that SHA256SUMS lists under its own name gets that entry's pin`() async throws {
        let body = Array("release".utf8)
        try await withTestHTTPServer(serving: TestResource(body: body)) { server in
            try await withTemporaryDirectory { directory in
                let sums =
                    "\(Known.hexA)  tool\n\(Fixtures.sha256(body))  linux/amd64/tool-1.2\n"
                    + "\(Known.hexB)  darwin/arm64/tool-1.2\n"
                try sums.write(toFile: "\(directory)/SUMS", atomically: true, encoding: .utf8)
                let good = await runCLI([
                    "-q", "-o", "\(directory)/tool", "--checksum-file", "\(directory)/SUMS",
                    server.url("/rel/linux/amd64/tool-1.2"),
                ])
                #expect(good.status == 0, "\(good.standardError)")
                #expect(contents("\(directory)/tool") == body)
                let other = await runCLI([
                    "-q", "-o", "\(directory)/other", "--checksum-file", "\(directory)/SUMS",
                    server.url("/rel/darwin/arm64/tool-1.2"),
                ])
                #expect(other.status == 9, "\(other.standardError)")  // darwin's digest, linux's bytes
                #expect(!FileManager.default.fileExists(atPath: "\(directory)/other"))
            }
        }
    }
}
