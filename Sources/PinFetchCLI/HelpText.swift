/// `pinfetch --help`: the synopsis, a row for each option of ``OptionTable`` in its order, and
/// the exit statuses.
enum HelpText {
    /// The lines above the options.
    static let synopsis = """
        Usage: pinfetch [options] URL [MIRROR-URL ...]
               pinfetch [options] -i MANIFEST
               pinfetch gc [DIR ...] [--older-than DURATION]
               pinfetch gc --cache-dir DIR --max-size SIZE
               pinfetch completion bash|zsh|fish
               pinfetch help

        Downloads URL to a file, resumes an interrupted download without rereading
        it, and puts the file in place only once its digest matches the pin. gc
        removes abandoned partials, or evicts a cache's least recently used entries;
        completion prints a shell's completion script.


        """

    /// The lines below the options.
    static let exitStatuses = """

        Exit status: 0 ok, 1 generic, 2 usage or bad input, 3 local file I/O,
        4 network, 5 TLS verification, 6 authentication, 7 protocol error, 8 server
        error response, 9 checksum mismatch, 10 destination locked, 129/130/143
        interrupted (SIGHUP/SIGINT/SIGTERM).

        """

    /// The widest line, in columns: the help fits an 80-column terminal without wrapping.
    static let width = 79

    /// The margin before an option's first column.
    static let margin = "  "
    /// Where the text beside an option starts, margin included, unless its first column is too
    /// wide: then two spaces after it.
    static let textColumn = 29

    /// The whole text, for `options` in their order.
    static func text(for options: [OptionSpec]) -> String {
        Self.synopsis + options.flatMap(\.helpRows).map(Self.lines(of:)).joined() + Self.exitStatuses
    }

    /// One row's lines: the first column, then its text filled to ``width`` beside it and
    /// under the text column (a row's lines are one paragraph; a word wider than the room
    /// keeps its own line).
    static func lines(of row: OptionSpec.HelpRow) -> String {
        let column = Self.margin + row.column
        let gap = column.count < Self.textColumn ? Self.textColumn - column.count : 2
        let indent = String(repeating: " ", count: Self.textColumn)
        var text = ""
        var line = column + String(repeating: " ", count: gap)
        var empty = true
        for word in row.lines.joined(separator: " ").split(separator: " ") {
            if !empty, line.count + 1 + word.count > Self.width {
                text += line + "\n"
                line = indent
                empty = true
            }
            line += (empty ? "" : " ") + word
            empty = false
        }
        return text + line + "\n"
    }
}
