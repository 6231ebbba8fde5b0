import FoundationEssentials

/// When one file's fetch must end: ``FetchOptions/maximumTime`` seconds after it started.
///
/// A value: the download, its attempts and the helper threads of a segmented phase each read
/// their own copy.
struct Deadline: Sendable {
    /// When the fetch of the file started.
    let started: Date
    /// Seconds the whole fetch may take, or `nil` without a limit (`--max-time`).
    let maximumTime: Double?

    init(started: Date = Date(), maximumTime: Double?) {
        self.started = started
        self.maximumTime = maximumTime
    }

    /// Seconds left, or `nil` without a limit; 0 or less once it ran out.
    var remaining: Double? { self.maximumTime.map { $0 - Date().timeIntervalSince(self.started) } }

    /// Whether the time ran out.
    var isPast: Bool { self.remaining.map { $0 <= 0 } ?? false }

    /// Seconds since the fetch started.
    var elapsed: Double { Date().timeIntervalSince(self.started) }
}
