/// One option of the command line, as ``OptionTable`` lists it: its spellings, the value it
/// takes, its rows in `--help`, and what it does to the ``Arguments`` being read.
struct OptionSpec: Sendable {
    /// What follows the option's name.
    enum Kind: Equatable, Sendable {
        /// Nothing: the option is a switch (`--json`); `--json=yes` is an error.
        case flag
        /// One value, as the next argument (`-o PATH`, `--output PATH`) or after `=` (`--output=PATH`,
        /// long spelling only); `placeholder` is how `--help` names it.
        case value(placeholder: String)
    }

    /// A row of `--help`: the first column (without the two-space margin) and the text beside
    /// it, one line per element.
    struct HelpRow: Equatable, Sendable {
        var column: String
        var lines: [String]
    }

    /// What giving the option does: applies its use to the arguments read so far, or throws
    /// when the value is not one the option takes.
    typealias Effect = @Sendable (inout Arguments, OptionUse) throws(ArgumentError) -> Void

    /// The long spelling, `--` included (`--output`).
    let long: String
    /// The one-letter spelling, `-` included (`-o`), if there is one.
    let short: String?
    /// Whether the option takes a value.
    let kind: Kind
    /// Whether giving it again adds to what it gave (`-H`), rather than replacing it or failing.
    let repeatable: Bool
    /// Its rows in `--help`: its own first, then any about a special value (`-H @FILE`).
    let helpRows: [HelpRow]
    /// What it does.
    let apply: Effect

    /// An option; `help` is the text beside it in `--help`. `helpColumn` replaces the first
    /// column after the short spelling's place (`--shard auto --shard-count N`), and
    /// `moreHelp` adds rows below it.
    init(
        _ long: String,
        short: String? = nil,
        _ kind: Kind = .flag,
        repeatable: Bool = false,
        help: [String],
        helpColumn: String? = nil,
        moreHelp: [HelpRow] = [],
        apply: @escaping Effect
    ) {
        self.long = long
        self.short = short
        self.kind = kind
        self.repeatable = repeatable
        self.apply = apply
        var column = long
        if case .value(let placeholder) = kind { column += " " + placeholder }
        column = (short.map { "\($0), " } ?? "    ") + (helpColumn ?? column)
        self.helpRows = [HelpRow(column: column, lines: help)] + moreHelp
    }

    /// Its spellings: the short one first, if any, then the long one.
    var spellings: [String] { [self.short, self.long].compactMap { $0 } }

    /// Whether it takes a value.
    var takesValue: Bool { self.kind != .flag }
}
