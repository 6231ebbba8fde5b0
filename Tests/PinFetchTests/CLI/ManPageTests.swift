import Foundation
import Testing

/// `Sources/pinfetch/pinfetch.1` and `--help` never drift: every option `--help` (and
/// `gc --help`) declares has an entry in the man page, every entry there is an option, and groff
/// renders the page without a warning.
struct ManPageTests {
    static let page = ReadmeExampleTests.root.appending(path: "Sources/pinfetch/pinfetch.1")

    /// `-x` and `--long-name` tokens in `text` that are not part of a word (`x-amz`, `sha256-B64`).
    static func options(in text: some StringProtocol) -> Set<String> {
        let pattern = /(^|[^A-Za-z0-9_\-])(--?[A-Za-z][A-Za-z0-9\-]*)/
        return Set(String(text).matches(of: pattern).map { String($0.output.2) })
    }

    /// The options `--help` declares: those in its first column.
    static func declared(inHelp help: String) -> Set<String> {
        var found: Set<String> = []
        for line in help.split(separator: "\n") where line.hasPrefix("  ") {
            let head = line.drop { $0 == " " }
            guard head.hasPrefix("-") else { continue }
            // "-o, --output PATH   text": the column ends at the first run of two spaces.
            let column = head.range(of: "  ").map { head[..<$0.lowerBound] } ?? head
            found.formUnion(Self.options(in: column))
        }
        return found
    }

    /// The options of the man page's `.TP` entries (the line after each `.TP`), roff escapes undone.
    static func entries(inPage page: String) -> Set<String> {
        let lines = page.split(separator: "\n", omittingEmptySubsequences: false)
        var found: Set<String> = []
        for (index, line) in lines.enumerated() where line == ".TP" && index + 1 < lines.count {
            let heading = lines[index + 1].replacingOccurrences(of: "\\-", with: "-")
                .replacingOccurrences(of: #"\\f[BIRP]"#, with: "", options: .regularExpression)
            guard heading.hasPrefix(".B") || heading.hasPrefix(".I") else { continue }
            found.formUnion(Self.options(in: heading))
        }
        return found
    }

    @Test func `every option of --help has a man page entry, and every entry is an option`() async throws {
        let help = await runCLI(["--help"])
        let gc = await runCLI(["gc", "--help"])
        #expect(help.status == 0 && gc.status == 0)
        let page = try String(contentsOf: Self.page, encoding: .utf8)
        let declared = Self.declared(inHelp: help.standardOutput).union(Self.options(in: gc.standardOutput))
        let entries = Self.entries(inPage: page)
        #expect(declared.count > 40, "\(declared.sorted())")  // the parser found the options at all
        #expect(
            declared.subtracting(entries).isEmpty,
            "in --help, not in the man page: \(declared.subtracting(entries).sorted())"
        )
        #expect(
            entries.subtracting(declared).isEmpty,
            "in the man page, not in --help: \(entries.subtracting(declared).sorted())"
        )
    }

    @Test func `the parsers see an option that is missing`() {
        let help = "  -o, --output PATH   the destination\n      --new-flag      a flag nobody documented\n"
        let page = ".TP\n.BR \\-o \", \" \\-\\-output \" \\fIPATH\\fR\"\nThe destination.\n"
        #expect(Self.declared(inHelp: help) == ["-o", "--output", "--new-flag"])
        #expect(Self.entries(inPage: page) == ["-o", "--output"])
    }

    @Test func `groff renders the page without a warning`() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/groff") else {
            Issue.record("groff is not installed (Debian: groff-base)")
            return
        }
        let process = Process()
        process.executableURL = URL(filePath: "/usr/bin/groff")
        process.arguments = ["-man", "-ww", "-z", "-Tutf8", Self.page.path]
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let warnings = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(warnings.isEmpty, "\(warnings)")
    }
}
