import Testing

@testable import PinFetchCLI

/// `--help` is made from ``OptionTable``: a row for every entry, in the table's order, laid out
/// as it always was.
struct HelpTextTests {
    @Test func `the help has a row for every option, in the table's order`() {
        let help = CommandLineTool.usage
        var rest = help[...]
        for row in OptionTable.all.flatMap(\.helpRows) {
            let line = "\n" + HelpText.margin + row.column + " "
            guard let found = rest.firstRange(of: line) else {
                Issue.record("no row, or one out of order, for \(row.column)")
                continue
            }
            rest = help[found.upperBound...]
        }
        let spellings = Set(OptionTable.all.flatMap(\.spellings))
        #expect(ManPageTests.declared(inHelp: help) == spellings)
        #expect(help.hasPrefix("Usage: pinfetch [options] URL [MIRROR-URL ...]\n"))
        #expect(help.hasSuffix("interrupted (SIGHUP/SIGINT/SIGTERM).\n"))
    }

    @Test(arguments: [
        "  -P, --directory-prefix DIR put outputs under DIR (a relative -o too)\n",
        "      --shard auto --shard-count N  K from JOB_COMPLETION_INDEX (a Kubernetes\n"
            + "                             Indexed Job)\n",
        "      --base-url URL         with -i: FILE is a checksum file; each entry is\n"
            + "                             fetched from URL/name and saved as name under -P\n",
        "  -H @FILE                   one header per line of FILE\n",
        "      --no-remote-time       keep the time of the download\n",
        "  -V, --version              the version\n\nExit status: ",
    ])
    func `rows line up in the text column, or two spaces after a wider first column`(excerpt: String) {
        #expect(CommandLineTool.usage.contains("\n" + excerpt))
    }

    /// An 80-column terminal shows every line whole, and the synopsis names every command.
    @Test func `the help fits 80 columns and names every command`() {
        let help = CommandLineTool.usage
        let wide = help.split(separator: "\n").filter { $0.count > HelpText.width }
        #expect(wide.isEmpty, "\(wide)")
        for command in ["gc [DIR ...]", "completion bash|zsh|fish", "pinfetch help"] {
            #expect(help.contains(command), "\(command)")
        }
    }

    @Test func `a row's further lines go under the text column`() {
        let words = Array(repeating: "word", count: 12)
        let row = OptionSpec.HelpRow(
            column: "--long-option-name SOMETHING",
            lines: [words.joined(separator: " "), "second"]
        )
        let indent = String(repeating: " ", count: HelpText.textColumn)
        #expect(
            HelpText.lines(of: row)
                == "  --long-option-name SOMETHING  " + words.prefix(9).joined(separator: " ") + "\n" + indent
                + "word word word second\n"
        )
    }
}
