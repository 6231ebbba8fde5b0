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
        #expect(help.hasSuffix("129/130/143 interrupted (SIGHUP/SIGINT/SIGTERM).\n"))
    }

    @Test(arguments: [
        "  -o, --output PATH          destination (default: last segment of the URL path)\n",
        "  -P, --directory-prefix DIR put outputs under DIR (a relative -o too)\n",
        "      --shard auto --shard-count N  K from JOB_COMPLETION_INDEX (a Kubernetes Indexed Job)\n",
        "      --base-url URL         with -i: FILE is a checksum file; each entry is fetched from URL/name\n"
            + "                             and saved as name under -P (its directories kept); repeat it\n",
        "  -H @FILE                   one header per line of FILE\n",
        "      --no-remote-time       keep the time of the download\n",
        "  -V, --version              the version\n\nExit status: ",
    ])
    func `rows line up in the text column, or two spaces after a wider first column`(excerpt: String) {
        #expect(CommandLineTool.usage.contains("\n" + excerpt))
    }

    @Test func `a row's further lines go under the text column`() {
        let row = OptionSpec.HelpRow(column: "--long-option-name SOMETHING", lines: ["first", "second"])
        let indent = String(repeating: " ", count: HelpText.textColumn)
        #expect(HelpText.lines(of: row) == "  --long-option-name SOMETHING  first\n" + indent + "second\n")
    }
}
