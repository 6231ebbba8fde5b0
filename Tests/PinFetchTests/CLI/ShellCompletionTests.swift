import Foundation
import Testing

@testable import PinFetchCLI

/// `pinfetch completion bash|zsh|fish`: each script is valid in its shell and completes the
/// options of the table, asked as a user's Tab would ask it.
struct ShellCompletionTests {
    /// Runs `/usr/bin/SHELL` with `arguments`; its standard output, and its exit status.
    static func run(_ shell: String, _ arguments: [String]) async throws -> (output: String, status: Int32) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/\(shell)")
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (String(decoding: data, as: UTF8.self), process.terminationStatus)
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
        }
    }

    @Test func `zsh's script offers every spelling of the table`() async throws {
        let script = await runCLI(["completion", "zsh"]).standardOutput
        #expect(!script.contains("--insecure"))
        #expect(script.contains("compadd bash zsh fish"))
        for option in OptionTable.all where !OptionTable.alwaysRefused.contains(option.long) {
            let names = option.spellings
            let spec =
                names.count > 1
                ? "{\(names.joined(separator: ","))}'[" : option.long + (option.takesValue ? "='[" : "'[")
            #expect(script.contains(spec), "\(spec)")
        }
    }

    @Test func `another shell is a usage error`() async {
        let run = await runCLI(["completion", "tcsh"])
        #expect(run.status == 2)
        #expect(run.standardError.contains("pinfetch completion bash|zsh|fish"))
    }
}
