/// `pinfetch --help`: the synopsis, a row for each option of ``OptionTable`` in its order, and
/// the exit statuses.
enum HelpText {
    /// The lines above the options.
    static let synopsis = """
        Usage: pinfetch [options] URL [MIRROR-URL ...]
               pinfetch [options] -i MANIFEST
               pinfetch gc [DIR ...] [--older-than DURATION]   remove abandoned partials
               pinfetch gc --cache-dir DIR --max-size SIZE    evict least recently used cache entries

        Downloads URL to a file, resumes an interrupted download without rereading it, and puts
        the file in place only once its digest matches the pin.


        """

    /// The lines below the options.
    static let exitStatuses = """

        Exit status: 0 ok, 1 generic, 2 usage or bad input, 3 local file I/O, 4 network,
        5 TLS verification, 6 authentication, 7 protocol error, 8 server error response,
        9 checksum mismatch, 10 destination locked, 129/130/143 interrupted (SIGHUP/SIGINT/SIGTERM).

        """

    /// The margin before an option's first column.
    static let margin = "  "
    /// Where the text beside an option starts, margin included, unless its first column is too
    /// wide: then two spaces after it.
    static let textColumn = 29

    /// The whole text, for `options` in their order.
    static func text(for options: [OptionSpec]) -> String {
        Self.synopsis + options.flatMap(\.helpRows).map(Self.lines(of:)).joined() + Self.exitStatuses
    }

    /// One row's lines: the first column and the first line beside it, then each further line
    /// under the text column.
    static func lines(of row: OptionSpec.HelpRow) -> String {
        let column = Self.margin + row.column
        let gap = column.count < Self.textColumn ? Self.textColumn - column.count : 2
        let indent = String(repeating: " ", count: Self.textColumn)
        var text = column + String(repeating: " ", count: gap) + (row.lines.first ?? "") + "\n"
        for line in row.lines.dropFirst() { text += indent + line + "\n" }
        return text
    }
}
