extension Arguments {
    /// Reads `arguments` in order: each option is looked up in ``OptionTable`` and applied, and
    /// the other arguments are the URLs. `--` ends the options; `-` is not one.
    ///
    /// A long option's value is the next argument or follows `=` (`--output=PATH`); a short
    /// option's is the next argument (`-o PATH`) or the rest of its argument (`-j4`). Short
    /// options that take no value may be bundled, as getopt allows (`-fsSL`, `-qo PATH`): the
    /// first one that takes a value takes the rest of the bundle, or the next argument. An
    /// argument that is itself a spelling (`-nc`) is that option, not a bundle. A value is taken
    /// as it is, even when it starts with `-` (`-o -`).
    ///
    /// Also returns the long spellings of the options given, and the first argument that gave
    /// one of ``OptionTable/curlStandardOutput`` (`-fsSL` as a whole).
    /// - Throws: ``ArgumentError`` for an unknown option, a missing value, a flag given a value,
    ///   or a value its option refuses.
    static func scan(
        _ arguments: [String]
    ) throws(ArgumentError) -> (parsed: Arguments, urls: [String], given: Set<String>, curlSpelling: String?) {
        var parsed = Arguments()
        var urls: [String] = []
        var given: Set<String> = []
        var curlSpelling: String?
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            if argument == "--" {
                urls += rest
                break
            }
            guard argument.hasPrefix("-"), argument != "-" else {
                urls.append(argument)
                continue
            }
            let (spelling, inlineValue) = Self.split(argument)
            if let option = OptionTable.option(spelled: spelling) {
                var value = ""
                if !option.takesValue {
                    guard inlineValue == nil else { throw .takesNoValue(option: spelling) }
                } else if let inlineValue {
                    value = inlineValue
                } else {
                    guard let next = rest.popFirst() else { throw .missingValue(option: spelling) }
                    try Self.checkNotAnOption(next, after: option, spelling)
                    value = next
                }
                try option.apply(&parsed, OptionUse(spelling: spelling, value: value))
                given.insert(option.long)
                if spelling == "-c", let next = rest.first, !next.hasPrefix("-"), !next.contains("://") {
                    throw .refused(option: spelling, reason: ForeignOption.cookieJar(next))
                }
                if Self.isWgetStandardOutput(option, next: rest.first) {
                    rest.removeFirst()
                    try Self.setStandardOutput(&parsed, spelling: spelling)
                }
            } else if !argument.hasPrefix("--"), argument.count > 2 {
                given.formUnion(try Self.scanBundle(argument, rest: &rest, into: &parsed))
            } else {
                throw .unknownOption(spelling)
            }
            if curlSpelling == nil, !given.isDisjoint(with: OptionTable.curlStandardOutput) { curlSpelling = spelling }
        }
        return (parsed, urls, given, curlSpelling)
    }

    /// wget's `-O -`: `-o -`, refused after another `-o` as that is.
    private static func setStandardOutput(_ parsed: inout Arguments, spelling: String) throws(ArgumentError) {
        guard parsed.output == nil else { throw .conflict(.secondOutput(spelling)) }
        parsed.output = "-"
    }

    /// The short options bundled in `argument` (`-fsSL`, `-j4`, `-qo`), applied in order;
    /// returns their long spellings.
    private static func scanBundle(
        _ argument: String,
        rest: inout ArraySlice<String>,
        into parsed: inout Arguments
    ) throws(ArgumentError) -> Set<String> {
        var given: Set<String> = []
        var letters = Substring(argument).dropFirst()
        while let letter = letters.popFirst() {
            let spelling = "-" + String(letter)
            guard let option = OptionTable.option(spelled: spelling), option.short == spelling else {
                // The whole argument when its first letter is no option (`-nv`, wget's), else the letter.
                throw .unknownOption(letters.count + 2 == argument.count ? argument : spelling)
            }
            given.insert(option.long)
            // wget's `-Ofile` (`-qOout.txt`): `-O` before letters that are not all flags of
            // their own is a file name, never `-O -o ut.txt`; curl's `-OL`, `-OJ` stay a bundle.
            if option.long == "--remote-name", !letters.isEmpty, letters != "-",
                !letters.allSatisfy({ Self.isFlag("-" + String($0)) })
            {
                throw .conflict(.remoteNameWithFile(String(letters)))
            }
            guard option.takesValue else {
                try option.apply(&parsed, OptionUse(spelling: spelling, value: ""))
                if Self.isWgetStandardOutput(option, next: letters.isEmpty ? rest.first : String(letters)) {
                    if letters.isEmpty { rest.removeFirst() }
                    try Self.setStandardOutput(&parsed, spelling: spelling)
                    return given
                }
                continue
            }
            // `-o=a` is taken for `--output=a` misspelled, not for the name `=a`.
            guard !letters.hasPrefix("=") else { throw .unknownOption(argument) }
            var value = String(letters)
            if value.isEmpty {
                guard let next = rest.popFirst() else { throw .missingValue(option: spelling) }
                try Self.checkNotAnOption(next, after: option, spelling)
                value = next
            }
            try option.apply(&parsed, OptionUse(spelling: spelling, value: value))
            return given
        }
        return given
    }

    /// An option's value taken from the next argument must not be one of pinfetch's options
    /// (`-o -q URL`, `-A -o out URL`): that is a value forgotten, and taking it would write a
    /// file named `-q` or send the agent `-o`. A value that begins with `-` goes inline
    /// (`--output=-q`) or as a path (`./-q`); `-` alone is standard output.
    private static func checkNotAnOption(
        _ next: String,
        after option: OptionSpec,
        _ spelling: String
    )
        throws(ArgumentError)
    {
        guard next.count > 1, next.hasPrefix("-") else { return }
        let (name, _) = Self.split(next)
        let known =
            OptionTable.option(spelled: name) != nil
            || (!next.hasPrefix("--") && OptionTable.option(spelled: String(next.prefix(2))) != nil)
        guard known else { return }
        throw .malformed(
            "\(spelling) needs a value, and '\(next)' is an option: give the value first (a value that begins "
                + "with '-' goes as \(option.long)=\(next))"
        )
    }

    /// Whether `spelling` is a one-letter option that takes no value.
    private static func isFlag(_ spelling: String) -> Bool {
        OptionTable.option(spelled: spelling).map { $0.short == spelling && !$0.takesValue } ?? false
    }

    /// Whether `option` followed by `next` is wget's `-O -` (`-O-`, `-qO-`): the file to standard
    /// output, which is `-o -` here. curl's `-O` takes no value, and no URL is `-`.
    private static func isWgetStandardOutput(_ option: OptionSpec, next: String?) -> Bool {
        option.long == "--remote-name" && next == "-"
    }

    /// `--name=value` as `--name` and `value`; any other argument as itself and no value.
    private static func split(_ argument: String) -> (spelling: String, value: String?) {
        guard argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") else { return (argument, nil) }
        return (String(argument[..<equals]), String(argument[argument.index(after: equals)...]))
    }
}
