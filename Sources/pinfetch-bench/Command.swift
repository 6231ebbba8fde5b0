/// A program with its arguments and where its output goes.
struct Command: Sendable {
    /// An absolute path (no `PATH` search at spawn time).
    var executable: String
    var arguments: [String]
    /// The file that receives standard output (truncated first); `nil` is `/dev/null`.
    var standardOutput: String?
    /// The file that receives standard error (truncated first); `nil` is `/dev/null`.
    var standardError: String?

    init(_ executable: String, _ arguments: [String], standardOutput: String? = nil, standardError: String? = nil) {
        self.executable = executable
        self.arguments = arguments
        self.standardOutput = standardOutput
        self.standardError = standardError
    }

    /// `/bin/sh -c script sh arguments...`: the script sees `arguments` as `$1`, `$2`, ...,
    /// so paths and URLs need no quoting.
    static func shell(_ script: String, _ arguments: [String], standardError: String? = nil) -> Command {
        Command("/bin/sh", ["-c", script, "sh"] + arguments, standardError: standardError)
    }

    /// The command as one line, for error messages.
    var commandLine: String { ([self.executable] + self.arguments).joined(separator: " ") }
}
