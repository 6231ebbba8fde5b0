import FoundationEssentials

/// Tells the caller's hooks (``FetchOptions/progress``, ``FetchOptions/events``) how far one
/// file's fetch is, at most five times a second.
final class ProgressMeter {
    let path: String
    let options: FetchOptions
    /// Body bytes this run received outside the partial (a remote cache's blob).
    var receivedElsewhere: Int64 = 0
    private var last = Date.distantPast

    init(path: String, options: FetchOptions) {
        self.path = path
        self.options = options
    }

    /// Reports where `partial` stands, unless that was done less than 0.2 s ago.
    func report(_ partial: Partial) {
        guard self.options.progress != nil || self.options.events != nil else { return }
        let now = Date()
        guard now.timeIntervalSince(self.last) >= 0.2 else { return }
        self.last = now
        let progress = FetchProgress(
            path: self.path,
            completedBytes: partial.state.offset,
            totalBytes: partial.state.totalLength,
            receivedBytes: partial.receivedBytes + self.receivedElsewhere
        )
        self.options.progress?(progress)
        self.options.events?(.progress(progress))
    }
}
