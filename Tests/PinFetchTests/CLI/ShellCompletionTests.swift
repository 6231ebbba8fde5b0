import Foundation
import Testing

@testable import PinFetchCLI

/// `pinfetch completion bash|zsh|fish`: each script is valid in its shell and completes the
/// options of the table, asked as a user's Tab would ask it.
struct ShellCompletionTests {
    /// Runs `/usr/bin/SHELL` with `arguments`; its standard output, and its exit status. Its
    /// output goes to a file (``ChildProcess``), never a pipe: a tmux server another test starts
    /// meanwhile could inherit a pipe's end and hold it open.
    static func run(_ shell: String, _ arguments: [String]) async throws -> (output: String, status: Int32) {
        let logs = FileManager.default.temporaryDirectory.appending(path: "pinfetch-shell-\(UUID().uuidString)").path
        defer { for suffix in [".out", ".err"] { try? FileManager.default.removeItem(atPath: logs + suffix) } }
        let child = try await ChildProcess.run("/usr/bin/\(shell)", arguments, logs: logs, timeout: .seconds(60))
        guard case .exited(let status) = child.termination else { return (child.standardOutput, -1) }
        return (child.standardOutput, status)
    }

    /// The script for `shell`, written to a file in `directory`.
    static func scriptFile(_ shell: String, in directory: String) async throws -> String {
        let run = await runCLI(["completion", shell])
        #expect(run.status == 0)
        let path = "\(directory)/pinfetch.\(shell)"
        try run.standardOutput.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test(arguments: [("bash", ["-n"]), ("zsh", ["-n"]), ("fish", ["--no-execute"])])
    func `each script is valid in its shell`(shell: String, check: [String]) async throws {
        try await withTemporaryDirectory { directory in
            let path = try await Self.scriptFile(shell, in: directory)
            #expect(try await Self.run(shell, check + [path]).status == 0)
        }
    }

    @Test func `bash completes options, and files or directories where the option takes one`() async throws {
        try await withTemporaryDirectory { directory in
            let path = try await Self.scriptFile("bash", in: directory)
            try Data().write(to: URL(fileURLWithPath: "\(directory)/manifest.txt"))
            try Data().write(to: URL(fileURLWithPath: "\(directory)/my list.txt"))
            try FileManager.default.createDirectory(atPath: "\(directory)/outdir", withIntermediateDirectories: false)
            func complete(_ words: [String]) async throws -> [String] {
                let list = words.map { "'\($0)'" }.joined(separator: " ")
                let script = """
                    source '\(path)'; cd '\(directory)'
                    COMP_WORDS=(\(list)); COMP_CWORD=\(words.count - 1); _pinfetch
                    printf '%s\\n' "${COMPREPLY[@]}"
                    """
                let run = try await Self.run("bash", ["-c", script])
                return run.output.split(separator: "\n").map(String.init).sorted()
            }
            #expect(try await complete(["pinfetch", "--no-c"]) == ["--no-cache", "--no-clobber"])
            #expect(try await complete(["pinfetch", "--output-"]) == ["--output-dir"])
            #expect(try await complete(["pinfetch", "-i", "man"]) == ["manifest.txt"])
            #expect(try await complete(["pinfetch", "-P", "o"]) == ["outdir"])
            #expect(try await complete(["pinfetch", "co"]) == ["completion"])
            // A name with a space is one candidate, not two.
            #expect(try await complete(["pinfetch", "-i", "my"]) == ["my list.txt"])
            #expect(try await complete(["pinfetch", "completion", ""]) == ["bash", "fish", "zsh"])
            // An option that is always refused is not offered.
            #expect(try await complete(["pinfetch", "--ins"]) == [])
            #expect(try await complete(["pinfetch", "-k"]) == [])
            // gc's own options; -H @FILE's files.
            #expect(try await complete(["pinfetch", "gc", "--ol"]) == ["--older-than"])
            #expect(try await complete(["pinfetch", "gc", "--sha"]) == [])
            #expect(try await complete(["pinfetch", "-H", "@man"]) == ["@manifest.txt"])
        }
    }

    @Test func `fish completes every long option of the table`() async throws {
        try await withTemporaryDirectory { directory in
            let path = try await Self.scriptFile("fish", in: directory)
            let run = try await Self.run("fish", ["-c", "source '\(path)'; complete -C 'pinfetch --'"])
            let offered = Set(run.output.split(separator: "\n").map { String($0.prefix { $0 != "\t" }) })
            let expected = Set(OptionTable.all.map(\.long)).subtracting(OptionTable.alwaysRefused)
            #expect(offered == expected, "\(offered.symmetricDifference(expected))")
            let shells = try await Self.run("fish", ["-c", "source '\(path)'; complete -C 'pinfetch completion '"])
            let names = Set(shells.output.split(separator: "\n").map { String($0.prefix { $0 != "\t" }) })
            #expect(names.isSuperset(of: ["bash", "zsh", "fish"]), "\(names)")
            // gc's options, not the download's, after gc; -H @FILE's files.
            let gc = try await Self.run("fish", ["-c", "source '\(path)'; complete -C 'pinfetch gc --'"])
            let gcOffered = Set(gc.output.split(separator: "\n").map { String($0.prefix { $0 != "\t" }) })
            #expect(gcOffered == Set(GarbageCommand.options.map(\.long)), "\(gcOffered)")
            try Data().write(to: URL(fileURLWithPath: "\(directory)/headers.txt"))
            let header = try await Self.run(
                "fish",
                ["-c", "source '\(path)'; cd '\(directory)'; complete -C 'pinfetch -H @hea'"]
            )
            #expect(header.output.hasPrefix("@headers.txt"), "\(header.output)")
        }
    }

    @Test func `zsh's script offers every spelling of the table`() async throws {
        let script = await runCLI(["completion", "zsh"]).standardOutput
        #expect(!script.contains("--insecure"))
        #expect(script.contains("compadd bash zsh fish"))
        for option in OptionTable.all where !OptionTable.alwaysRefused.contains(option.long) {
            for name in option.spellings {
                let form = option.takesValue ? (name.hasPrefix("--") ? "=" : "+") : ""
                #expect(script.contains(name + form + "'["), "\(name)")
            }
        }
    }

    /// zsh asked as a user's Tab asks it, in a terminal (tmux): the subcommands, a long
    /// option's value after `=`, `-H @FILE`, a URL's scheme (only http and https), gc's options.
    @Test func `zsh completes subcommands, values after =, header files, URL schemes and gc's options`()
        async throws
    {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/zsh") else {
            Issue.record("zsh is not installed (Debian: zsh)")
            return
        }
        try await withTemporaryDirectory { directory in
            let functions = "\(directory)/functions"
            try FileManager.default.createDirectory(atPath: functions, withIntermediateDirectories: false)
            try await runCLI(["completion", "zsh"]).standardOutput
                .write(toFile: "\(functions)/_pinfetch", atomically: true, encoding: .utf8)
            for name in ["manifest.txt", "headers.txt"] {
                try Data().write(to: URL(fileURLWithPath: "\(directory)/\(name)"))
            }
            let setup = "fpath=(\(functions) $fpath); autoload -U compinit; compinit -u -D; PS1='> '; cd \(directory)"
            let tmux = TerminalDisplayTests.Tmux(logs: "\(directory)/tmux")
            try await tmux.run(["new-session", "-d", "-x", "120", "-y", "20", "-s", "t", "zsh -f -i"])
            try await tmux.run(["send-keys", "-t", "t", setup, "Enter"])
            // The prompt set last: compinit is done (tmux drops a row's trailing blanks).
            _ = try await TerminalDisplayTests.waitFor("the prompt", tmux) { $0.last == ">" }
            /// Types `line`, then Tab, and returns the screen's last prompt line once it shows `expected`.
            func complete(_ line: String, expecting expected: String) async throws -> Bool {
                try await tmux.run(["send-keys", "-t", "t", "C-u", line, "Tab"])
                let rows = try await TerminalDisplayTests.waitFor(expected, tmux) { rows in
                    rows.contains { $0.contains(expected) }
                }
                return rows.contains { $0.contains(expected) }
            }
            #expect(try await complete("pinfetch co", expecting: "> pinfetch completion"))
            #expect(try await complete("pinfetch --output=ma", expecting: "> pinfetch --output=manifest.txt"))
            #expect(try await complete("pinfetch -H @hea", expecting: "> pinfetch -H @headers.txt"))
            #expect(try await complete("pinfetch gc --ol", expecting: "> pinfetch gc --older-than="))
            // Only the schemes pinfetch fetches are offered.
            #expect(try await complete("pinfetch https:", expecting: "> pinfetch https://"))
            try await tmux.run(["send-keys", "-t", "t", "C-u", "pinfetch -q ", "Tab", "Tab"])
            let offered = try await TerminalDisplayTests.waitFor("the schemes", tmux) { rows in
                rows.contains { $0.contains("https://") }
            }
            #expect(!offered.contains { $0.contains("ftp://") || $0.contains("gopher") }, "\(offered)")
            await tmux.kill()
        }
    }

    @Test func `another shell is a usage error`() async {
        let run = await runCLI(["completion", "tcsh"])
        #expect(run.status == 2)
        #expect(run.standardError.contains("pinfetch completion bash|zsh|fish"))
    }
}
