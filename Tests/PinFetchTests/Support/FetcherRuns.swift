import PinFetch
import Synchronization

extension Fetcher {
    /// A fetcher that retries at once, as the command line's `--retry-delay 0` does, at most
    /// `retries` times (5 by default, as the command line's), with what `configure` sets.
    static func immediate(retries: Int = 5, _ configure: (inout FetchOptions) -> Void = { _ in }) -> Fetcher {
        var options = FetchOptions()
        options.retryDelay = 0
        options.retries = retries
        configure(&options)
        return Fetcher(options: options)
    }
}

/// The error's kind and message of `result`, for a failure message that says what went wrong.
func failure(_ result: FetchResult) -> String {
    result.error.map { "\($0.code): \($0.message)" } ?? "no error"
}

/// What a fetch's events said, as the command line prints it unless `-v`: the warnings
/// (``FetchEvent/warning(path:message:)``, printed even with `-q`), and the reasons of its
/// retries and restarts (printed without `-q`). Set ``record(_:)`` as the options' `events`.
final class EventNotes: Sendable {
    private let notes = Mutex<(warnings: [String], others: [String])>(([], []))

    /// Keeps what `event` says, when it is a warning, a retry or a restart.
    func record(_ event: FetchEvent) {
        switch event {
        case .warning(_, let message): self.notes.withLock { $0.warnings.append(message) }
        case .retrying(let retry): self.notes.withLock { $0.others.append("\(retry.reason); \(retry.url)") }
        case .restarted(_, let reason): self.notes.withLock { $0.others.append(reason) }
        default: break
        }
    }

    /// Every warning so far.
    var warnings: [String] { self.notes.withLock { $0.warnings } }

    /// Every warning, retry and restart so far.
    var all: [String] { self.notes.withLock { $0.warnings + $0.others } }

    /// Whether a warning so far contains `text` (what `-q` still prints).
    func warned(_ text: String) -> Bool { self.warnings.contains { $0.contains(text) } }

    /// Whether a warning, retry or restart so far contains `text` (what a run without `-q` prints).
    func said(_ text: String) -> Bool { self.all.contains { $0.contains(text) } }
}
