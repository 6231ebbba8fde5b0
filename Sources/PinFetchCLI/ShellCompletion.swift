/// `pinfetch completion bash|zsh|fish`: a completion script for the shell, made from
/// ``OptionTable`` (every spelling, whether it takes a value, and whether that value is a file or
/// a directory), so it never drifts from the options. The package installs all three.
enum ShellCompletion {
    /// The shells a script is made for.
    static let shells = ["bash", "zsh", "fish"]

    /// What an option's value is, for completion: read off its placeholder (`DIR`, `PATH`,
    /// `FILE`, `F|URL`).
    enum Value {
        case none, file, directory, other
    }

    static func value(of option: OptionSpec) -> Value {
        guard case .value(let placeholder) = option.kind else { return .none }
        if placeholder.contains("DIR") { return .directory }
        if ["PATH", "FILE", "F|URL", "MANIFEST"].contains(where: placeholder.contains) { return .file }
        return .other
    }

    /// The script for `shell`, or `nil` for a shell it is not made for. Options that are always
    /// refused (``OptionTable/alwaysRefused``) are not offered.
    static func script(for shell: String, options: [OptionSpec] = OptionTable.all) -> String? {
        let options = options.filter { !OptionTable.alwaysRefused.contains($0.long) }
        return switch shell {
        case "bash": Self.bash(options)
        case "zsh": Self.zsh(options)
        case "fish": Self.fish(options)
        default: nil
        }
    }

    /// Runs `pinfetch completion SHELL`: the script on standard output, exit 0; a usage error
    /// (exit 2) for anything else.
    static func run(_ arguments: [String], output: CommandLineTool.Output) -> Int32 {
        guard arguments.count == 1, let script = Self.script(for: arguments[0]) else {
            output.standardError("pinfetch: usage: pinfetch completion bash|zsh|fish\n")
            return 2
        }
        output.standardOutput(script)
        return 0
    }

    /// The first line of an option's help, for the shells that show one.
    private static func summary(_ option: OptionSpec) -> String {
        (option.helpRows.first?.lines ?? []).joined(separator: " ")
    }

    private static func bash(_ options: [OptionSpec]) -> String {
        func spellings(_ kind: Value) -> String {
            options.filter { Self.value(of: $0) == kind }.flatMap(\.spellings).joined(separator: "|")
        }
        let all = options.flatMap(\.spellings).joined(separator: " ")
        // gc's options taking a value that is not a directory; after --cache-dir, directories come anyway.
        func gcSpellings(directory: Bool) -> String {
            GarbageCommand.options.filter { $0.long != "--help" && $0.directory == directory }.map(\.long)
                .joined(separator: "|")
        }
        let gcAll = GarbageCommand.options.map(\.long).joined(separator: " ")
        // Names come one per line (`mapfile`), so a name with a space stays one; `-o filenames`
        // quotes it and marks a directory with a slash.
        return """
            # bash completion for pinfetch (made by `pinfetch completion bash`)
            _pinfetch() {
                local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}"
                COMPREPLY=()
                if [[ $COMP_CWORD -eq 2 && "${COMP_WORDS[1]}" == completion ]]; then
                    mapfile -t COMPREPLY < <(compgen -W "\(Self.shells.joined(separator: " "))" -- "$cur"); return
                fi
                if [[ $COMP_CWORD -ge 2 && "${COMP_WORDS[1]}" == gc ]]; then
                    case "$prev" in
                        \(gcSpellings(directory: false))) return ;;
                    esac
                    compopt -o filenames 2>/dev/null
                    if [[ "$cur" == -* ]]; then
                        mapfile -t COMPREPLY < <(compgen -W "\(gcAll)" -- "$cur")
                    else
                        mapfile -t COMPREPLY < <(compgen -d -- "$cur")
                    fi
                    return
                fi
                # -H @FILE: the headers of a file.
                if [[ ( "$prev" == -H || "$prev" == --header ) && "$cur" == @* ]]; then
                    compopt -o filenames 2>/dev/null
                    mapfile -t COMPREPLY < <(compgen -f -P @ -- "${cur#@}"); return
                fi
                case "$prev" in
                    \(spellings(.file)))
                        compopt -o filenames 2>/dev/null; mapfile -t COMPREPLY < <(compgen -f -- "$cur"); return ;;
                    \(spellings(.directory)))
                        compopt -o filenames 2>/dev/null; mapfile -t COMPREPLY < <(compgen -d -- "$cur"); return ;;
                    \(spellings(.other))) return ;;
                esac
                if [[ "$cur" == -* ]]; then
                    mapfile -t COMPREPLY < <(compgen -W "\(all)" -- "$cur")
                elif [[ $COMP_CWORD -eq 1 ]]; then
                    mapfile -t COMPREPLY < <(compgen -W "gc completion help" -- "$cur")
                fi
            }
            complete -o default -F _pinfetch pinfetch

            """
    }

    private static func zsh(_ options: [OptionSpec]) -> String {
        func escaped(_ text: String) -> String {
            var result = ""
            for character in text {
                if "[]:\\".contains(character) { result.append("\\") }
                result.append(character)
            }
            return result.replacing("'", with: "'\\''")
        }
        let specs = options.flatMap { option -> [String] in
            let action =
                switch Self.value(of: option) {
                case .none: ""
                case .file: ":file:_files"
                case .directory: ":directory:_files -/"
                case .other: option.long == "--header" ? ":header:_pinfetch_header" : ":value: "
                }
            let names = option.spellings
            let exclusion = names.count > 1 ? "'(\(names.joined(separator: " ")))'" : ""
            let help = escaped(Self.summary(option))
            // A long option's value in the same word (`--output=FILE`) or the next; a short
            // one's in the next word or stuck to it (`-oFILE`).
            return names.map { name in
                let form = option.takesValue ? (name.hasPrefix("--") ? "=" : "+") : ""
                return "    \(exclusion)\(name)\(form)'[\(help)]\(action)'"
            }
        }
        let gc = GarbageCommand.options.map { option in
            let action = option.long == "--help" ? "" : option.directory ? ":directory:_files -/" : ":value: "
            return "        '\(option.long)\(option.long == "--help" ? "" : "=")[\(escaped(option.help))]\(action)'"
        }
        return """
            #compdef pinfetch
            # zsh completion for pinfetch (made by `pinfetch completion zsh`)
            _pinfetch_header() {
                if compset -P '@'; then _files; else _message 'Name: value, or @FILE'; fi
            }
            _pinfetch_url() {
                if [[ $PREFIX == *://* ]]; then _urls; else compadd -S '' -- http:// https://; fi
            }
            if [[ $words[2] == completion ]]; then
                (( CURRENT == 3 )) && compadd \(Self.shells.joined(separator: " "))
                return
            fi
            if [[ $words[2] == gc ]] && (( CURRENT > 2 )); then
                shift words; (( CURRENT-- ))
                _arguments \\
            \(gc.joined(separator: " \\\n")) \\
                    '*:directory:_files -/'
                return
            fi
            if (( CURRENT == 2 )) && [[ $PREFIX != -* ]]; then
                _alternative 'commands:command:(gc completion help)' 'urls:URL:_pinfetch_url'
                return
            fi
            _arguments -s \\
            \(specs.joined(separator: " \\\n")) \\
                '*:URL:_pinfetch_url'

            """
    }

    private static func fish(_ options: [OptionSpec]) -> String {
        func quoted(_ text: String) -> String { "'" + text.replacing("'", with: "\\'") + "'" }
        var lines = ["# fish completion for pinfetch (made by `pinfetch completion fish`)"]
        lines.append("complete -c pinfetch -n __fish_use_subcommand -a 'gc completion help'")
        // -H @FILE: the files, each after its @.
        lines.append(
            "function __fish_pinfetch_header; set -l token (commandline -ct); string match -q -- '@*' $token; "
                + "or return; __fish_complete_path (string sub -s 2 -- $token) | string replace -r '^' '@'; end"
        )
        for option in GarbageCommand.options {
            var line = "complete -c pinfetch -n '__fish_seen_subcommand_from gc' -l \(option.long.dropFirst(2))"
            if option.long != "--help" { line += option.directory ? " -r -a '(__fish_complete_directories)'" : " -x" }
            lines.append(line + " -d " + quoted(option.help))
        }
        lines.append(
            "complete -c pinfetch -n '__fish_seen_subcommand_from completion' -f -a '"
                + Self.shells.joined(separator: " ") + "'"
        )
        for option in options {
            var line = "complete -c pinfetch -n 'not __fish_seen_subcommand_from gc'"
            if let short = option.short {
                // One letter is -s; wget's -nc is an old-style option (-o).
                line += short.count == 2 ? " -s \(short.dropFirst())" : " -o \(short.dropFirst())"
            }
            line += " -l \(option.long.dropFirst(2))"
            switch Self.value(of: option) {
            case .none: break
            case .file: line += " -r -F"
            case .directory: line += " -r -a '(__fish_complete_directories)'"
            case .other: line += option.long == "--header" ? " -x -a '(__fish_pinfetch_header)'" : " -x"
            }
            lines.append(line + " -d " + quoted(Self.summary(option)))
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
