/// Tells the caller's hook (``FetchOptions/events``) what one file's fetch does: its requests,
/// the answers' deciding fields, its decisions in words (`-v`) and its warnings.
///
/// A value: a segmented phase's helper threads report through their own copy.
struct Reporter: Sendable {
    /// The destination the events name.
    let path: String
    let events: (@Sendable (FetchEvent) -> Void)?

    /// Whether anyone listens (a request line is only worth building then).
    var isListening: Bool { self.events != nil }

    func report(_ event: FetchEvent) { self.events?(event) }

    /// Reports a decision in words (``FetchEvent/decision(path:message:)``, `-v`).
    func decide(_ message: String) { self.report(.decision(path: self.path, message: message)) }

    /// Reports a problem that does not fail the download (``FetchEvent/warning(path:message:)``).
    func warn(_ message: String) { self.report(.warning(path: self.path, message: message)) }
}
