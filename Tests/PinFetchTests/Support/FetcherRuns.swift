import PinFetch

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
