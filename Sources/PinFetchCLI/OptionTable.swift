/// Every option of `pinfetch` (but `gc`'s), in the order `--help` lists them: the one place an
/// option is declared. Parsing looks options up here, `--help` is made from it (``HelpText``),
/// and the tests check the manual page against it.
enum OptionTable {
    /// The options, in `--help` order.
    static let all: [OptionSpec] =
        Self.files + Self.checksumFiles + Self.savingAndCaches + Self.pins + Self.network + Self.familiar
        + Self.output

    /// The options by each of their spellings (`-o` and `--output`).
    private static let bySpelling: [String: OptionSpec] = {
        var table: [String: OptionSpec] = [:]
        for option in Self.all {
            for spelling in option.spellings {
                precondition(table.updateValue(option, forKey: spelling) == nil, "\(spelling) is in the table twice")
            }
        }
        return table
    }()

    /// The option spelled `spelling` (`-o`, `--output`; no `=value`), if there is one.
    static func option(spelled spelling: String) -> OptionSpec? { Self.bySpelling[spelling] }
}
