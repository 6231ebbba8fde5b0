extension Arguments {
    /// Reads `arguments` in order: each option is looked up in ``OptionTable`` and applied, and
    /// the other arguments are the URLs. `--` ends the options; `-` is not one.
    ///
    /// A long option's value is the next argument or follows `=` (`--output=PATH`); a short
    /// option's is the next argument (`-o PATH`). A value is taken as it is, even when it
    /// starts with `-` (`-o -`).
    /// - Throws: ``ArgumentError`` for an unknown option, a missing value, a flag given a value,
    ///   or a value its option refuses.
    static func scan(_ arguments: [String]) throws(ArgumentError) -> (parsed: Arguments, urls: [String]) {
        var parsed = Arguments()
        var urls: [String] = []
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
            guard let option = OptionTable.option(spelled: spelling) else { throw .unknownOption(spelling) }
            var value = ""
            if !option.takesValue {
                guard inlineValue == nil else { throw .takesNoValue(option: spelling) }
            } else if let inlineValue {
                value = inlineValue
            } else {
                guard let next = rest.popFirst() else { throw .missingValue(option: spelling) }
                value = next
            }
            try option.apply(&parsed, OptionUse(spelling: spelling, value: value))
        }
        return (parsed, urls)
    }

    /// `--name=value` as `--name` and `value`; any other argument as itself and no value.
    private static func split(_ argument: String) -> (spelling: String, value: String?) {
        guard argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") else { return (argument, nil) }
        return (String(argument[..<equals]), String(argument[argument.index(after: equals)...]))
    }
}
