import Foundation
import Testing

@testable import PinFetch

/// `SafeFileName`: output names stay inside `-P DIR`, and `Content-Disposition` names are reduced
/// to a base name (RFC 6266, RFC 8187).
struct SafeFileNameTests {
    struct Resolved: Sendable, CustomTestStringConvertible {
        var output: String
        var directory: String
        var expected: String
        var testDescription: String { "'\(self.output)' in '\(self.directory)'" }
    }

    static let resolved = [
        Resolved(output: "a.tar.gz", directory: "downloads", expected: "downloads/a.tar.gz"),
        Resolved(output: "dists/a.tar.gz", directory: "downloads/", expected: "downloads/dists/a.tar.gz"),
        Resolved(output: "dists/stable/main/a.deb", directory: ".", expected: "./dists/stable/main/a.deb"),
        Resolved(output: "./a.tar.gz", directory: ".", expected: "./a.tar.gz"),
        Resolved(output: "a//b/./c.txt", directory: "d", expected: "d/a/b/c.txt"),
        Resolved(output: "..a", directory: "d", expected: "d/..a"),
        Resolved(output: "a..b", directory: "d", expected: "d/a..b"),
        Resolved(output: "...", directory: "d", expected: "d/..."),
        Resolved(output: ".hidden", directory: "d", expected: "d/.hidden"),
        Resolved(output: "naïve file (1).txt", directory: "", expected: "./naïve file (1).txt"),
        Resolved(output: "x", directory: "/abs/dir", expected: "/abs/dir/x"),
        Resolved(output: "x", directory: "/", expected: "/x"),
        // A file name of 240 bytes leaves room for its sidecars (NAME.part.state.tmp) in NAME_MAX;
        // a directory segment may have all 255.
        Resolved(
            output: String(repeating: "s", count: 255) + "/" + String(repeating: "n", count: 240),
            directory: "d",
            expected: "d/" + String(repeating: "s", count: 255) + "/" + String(repeating: "n", count: 240)
        ),
    ]

    @Test(arguments: Self.resolved)
    func `relative output names resolve inside the directory`(item: Resolved) throws {
        #expect(try SafeFileName.resolve(item.output, in: item.directory) == item.expected)
    }

    static let refused = [
        "",
        ".",
        "..",
        "./",
        "././.",
        "../x",
        "a/../b",
        "a/..",
        "a/b/../../../c",
        "/etc/passwd",
        "//server/share",
        "a\\b",
        "..\\x",
        "a\u{0}b",
        "\u{0}",
        "a\nb",
        "a\rb",
        "a\tb",
        "a\u{7F}",
        "\u{1B}[31mred",
        "a/",
        "dists/",
        // To `String` `/\u{301}` is one Character; to the kernel `..` is a segment of its own.
        "../\u{301}x",
        "\u{301}/../x",
        String(repeating: "n", count: 256),
        String(repeating: "n", count: 241),
        String(repeating: "s", count: 256) + "/n",
        "d/" + String(repeating: "é", count: 128),
        // C1 controls and bidirectional overrides: the name shown is not the name.
        "a\u{85}b",
        "\u{9B}31mred",
        "invoice\u{202E}fdp.exe",
        "a\u{2066}b\u{2069}",
    ]

    @Test(arguments: Self.refused)
    func `unsafe output names are usage errors`(output: String) {
        let error = #expect(throws: PinFetchError.self) { try SafeFileName.resolve(output, in: "downloads") }
        #expect(error?.code == .usage)
        #expect(error?.code.exitStatus == 2)
        #expect(error?.message.contains("\n") == false)
        let plain = output.unicodeScalars.allSatisfy {
            $0.value >= 0x20 && $0.properties.generalCategory != .control && $0 != "\\"
                && !SafeFileName.isBidirectionalControl($0)
        }
        #expect(error?.message.unicodeScalars.contains(where: SafeFileName.isBidirectionalControl) == false)
        if plain, output.unicodeScalars.count <= 100 {
            #expect(error?.message.contains("'\(output)'") == true, "names the value: \(error?.message ?? "")")
        }
    }

    @Test func `the value in the message is truncated and its control characters escaped`() {
        let output = "bad\u{0}\n\u{7F}\u{85}\\" + String(repeating: "x", count: 300)
        let error = #expect(throws: PinFetchError.self) { try SafeFileName.resolve(output, in: ".") }
        let message = error?.message ?? ""
        #expect(message.contains("'bad\\x00\\x0A\\x7F\\u{85}\\\\xxx"))
        #expect(message.contains("…'"))
        // 100 scalars: "bad", four control characters, a backslash and 92 "x".
        #expect(!message.contains(String(repeating: "x", count: 93)))
        #expect(message.contains(String(repeating: "x", count: 92) + "…'"))
        #expect(!message.unicodeScalars.contains { $0.properties.generalCategory == .control })
    }

    struct Disposition: Sendable, CustomTestStringConvertible {
        var header: String
        var expected: String?
        var testDescription: String { self.header.debugDescription }
    }

    static let dispositions = [
        Disposition(header: #"attachment; filename="a.tar.gz""#, expected: "a.tar.gz"),
        Disposition(
            header: #"attachment; filename*=UTF-8''na%C3%AFve%20file.txt; filename="fallback.txt""#,
            expected: "naïve file.txt"
        ),
        Disposition(
            header: #"attachment; filename="fallback.txt"; filename*=UTF-8''na%C3%AFve%20file.txt"#,
            expected: "naïve file.txt"
        ),
        Disposition(header: "attachment; filename*=iso-8859-1'en'%A3%20rates", expected: "£ rates"),
        Disposition(header: "attachment; filename*=UTF-8'en-US'%E2%82%AC%20rates", expected: "€ rates"),
        Disposition(header: #"attachment; filename*="UTF-8''quoted.txt""#, expected: "quoted.txt"),
        Disposition(header: #"attachment; filename="../../etc/passwd""#, expected: "passwd"),
        Disposition(header: "attachment; filename*=UTF-8''..%2F..%2Fetc%2Fpasswd", expected: "passwd"),
        Disposition(header: #"attachment; filename="..\..\win.ini""#, expected: "win.ini"),
        Disposition(header: #"attachment; filename="..\\..\\win.ini""#, expected: "win.ini"),
        Disposition(header: #"attachment; filename="C:\temp\report.pdf""#, expected: "report.pdf"),
        Disposition(header: "attachment; filename=\"\u{0}evil\"", expected: "evil"),
        Disposition(header: "attachment; filename=\"\u{7F}\u{85}x\u{1B}\"", expected: "x"),
        Disposition(header: "attachment; filename=\"evil\u{202E}txt.exe\"", expected: "eviltxt.exe"),
        Disposition(header: #"attachment; filename="..""#, expected: nil),
        Disposition(header: #"attachment; filename=".""#, expected: nil),
        Disposition(header: #"attachment; filename="""#, expected: nil),
        Disposition(header: #"attachment; filename="/""#, expected: nil),
        Disposition(header: #"attachment; filename="  ..hidden ""#, expected: "hidden"),
        Disposition(header: #"attachment; filename=" spaced name.txt ""#, expected: "spaced name.txt"),
        Disposition(header: "inline", expected: nil),
        Disposition(header: "attachment", expected: nil),
        Disposition(header: "", expected: nil),
        Disposition(header: "attachment; size=12", expected: nil),
        Disposition(header: #"attachment; filename="unterminated.txt"#, expected: nil),
        Disposition(header: #"attachment; filename*=UTF-8''x.txt; filename="unterminated"#, expected: "x.txt"),
        Disposition(header: #"attachment; filename="a\"b.txt""#, expected: #"a"b.txt"#),
        Disposition(header: #"attachment; filename="a;b.txt""#, expected: "a;b.txt"),
        Disposition(header: #"attachment; filename="a.txt"junk; x=y"#, expected: "a.txt"),
        Disposition(header: #"attachment; filename="first.txt"; filename="second.txt""#, expected: "first.txt"),
        Disposition(header: "attachment; FILENAME=plain.txt", expected: "plain.txt"),
        Disposition(header: "attachment;filename=report.pdf;size=12", expected: "report.pdf"),
        Disposition(header: "attachment; filename = spaced.pdf ; size=12", expected: "spaced.pdf"),
        Disposition(header: #"filename="no-type.txt""#, expected: "no-type.txt"),
        Disposition(header: #"attachment; filename*=UTF-8''%E2%82; filename="fallback.txt""#, expected: "fallback.txt"),
        Disposition(header: #"attachment; filename*=UTF-8''100%; filename="fallback.txt""#, expected: "fallback.txt"),
        Disposition(header: #"attachment; filename*=UTF-8''%zz; filename="fallback.txt""#, expected: "fallback.txt"),
        Disposition(header: #"attachment; filename*=utf-16''x; filename="fallback.txt""#, expected: "fallback.txt"),
        Disposition(header: #"attachment; filename*=noquotes; filename="fallback.txt""#, expected: "fallback.txt"),
        Disposition(header: #"attachment; filename*=UTF-8''..; filename="ok.txt""#, expected: "ok.txt"),
        Disposition(header: "attachment; filename*=UTF-8''%E2%82", expected: nil),
        Disposition(
            header: "attachment; filename=\"" + String(repeating: "a", count: 240) + "\"",
            expected: String(repeating: "a", count: 240)
        ),
        Disposition(header: "attachment; filename=\"" + String(repeating: "a", count: 241) + "\"", expected: nil),
    ]

    @Test(arguments: Self.dispositions)
    func `Content-Disposition gives a safe base name`(item: Disposition) {
        #expect(SafeFileName.fromContentDisposition(item.header) == item.expected)
    }

    @Test(arguments: Self.dispositions)
    func `every name from Content-Disposition resolves inside the directory`(item: Disposition) throws {
        guard let name = SafeFileName.fromContentDisposition(item.header) else { return }
        #expect(try SafeFileName.resolve(name, in: "downloads") == "downloads/\(name)")
    }
}
