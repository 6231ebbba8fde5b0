/// A failure that stops the benchmark: a missing tool, a command that failed, a server that
/// did not start. A missed target is not an error (the benchmark is a measurement).
struct BenchError: Error, CustomStringConvertible {
    /// One line (or a short block with a log tail) for people.
    var message: String

    init(_ message: String) {
        self.message = message
    }

    var description: String { self.message }
}
