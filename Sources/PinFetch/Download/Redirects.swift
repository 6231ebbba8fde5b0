extension Download {
    /// Header fields that carry credentials: dropped once a redirect leaves the origin.
    static let credentialFields: Set<String> = ["authorization", "cookie", "proxy-authorization"]

    /// Performs one request to the current mirror, following redirects itself (at most
    /// ``FetchOptions/maximumRedirects``), so each attempt re-resolves an expired signed target.
    ///
    /// A `Location` is encoded as curl and browsers do (a raw space or bracket is escaped, an
    /// existing `%XX` kept) and resolved against the URL that sent it (RFC 9110 §10.2.2).
    /// Credentials given with `-H` (`Authorization`, `Cookie`, `Proxy-Authorization`) are dropped
    /// once a hop leaves the mirror's origin (scheme, host, port; RFC 6454); an `https` → `http`
    /// hop is refused unless ``FetchOptions/allowInsecureRedirect``. A refused or broken redirect
    /// comes back as a `protocolViolation` outcome.
    /// - Parameter freshConnection: Open a new connection instead of reusing one.
    /// - Throws: ``PinFetchError`` only for a request libcurl could not even set up.
    func perform(
        _ method: TransferRequest.Method,
        headers: [String],
        delegate: TransferDelegate,
        freshConnection: Bool = false
    ) throws(PinFetchError) -> TransferOutcome {
        let origin = self.mirrors[self.mirrorIndex]
        var current = origin
        var headers = headers
        var hops = 0
        while true {
            var request = TransferRequest(
                url: current.text,
                method: method,
                headers: headers,
                connectTimeout: self.options.connectTimeout,
                stallTimeout: self.options.stallTimeout,
                caBundle: self.caBundle
            )
            request.freshConnection = freshConnection && hops == 0
            let outcome = try self.easy.perform(request, delegate: delegate)
            guard let location = delegate.redirectLocation else { return outcome }
            func refuse(_ reason: String) -> TransferOutcome {
                TransferOutcome(code: 0, message: reason, category: .protocolViolation)
            }
            hops += 1
            guard hops <= self.options.maximumRedirects else {
                return refuse("more than \(self.options.maximumRedirects) redirects")
            }
            guard let next = current.resolving(location: location) else {
                return refuse("redirect to a malformed or non-HTTP Location '\(location.prefix(200))'")
            }
            if current.scheme == "https", next.scheme == "http", !self.options.allowInsecureRedirect {
                return refuse("redirect from https to http refused (--allow-insecure-redirect allows it)")
            }
            if !next.isSameOrigin(as: origin) {
                headers.removeAll { line in
                    Self.credentialFields.contains(line.prefix { $0 != ":" }.trimmingWhitespace().lowercased())
                }
            }
            current = next
            delegate.prepareForNextResponse()
        }
    }
}
