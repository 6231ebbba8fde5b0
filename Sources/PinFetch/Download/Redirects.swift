import FoundationEssentials
@preconcurrency import Glibc

extension Download {
    /// Response fields that drive pinfetch's decisions, shown with `-v` (lower case).
    static let decidingFields: Set<String> = [
        "content-length", "content-range", "accept-ranges", "etag", "last-modified", "content-encoding",
        "transfer-encoding", "location", "retry-after", "content-disposition", "repr-digest", "content-digest",
        "digest", "www-authenticate", "proxy-authenticate",
    ]

    /// Header fields that carry credentials: dropped once a redirect leaves the origin.
    static let credentialFields: Set<String> = ["authorization", "cookie", "proxy-authorization"]

    /// Performs one request to the current mirror, following redirects itself (at most
    /// ``FetchOptions/maximumRedirects``), so each attempt re-resolves an expired signed target.
    ///
    /// A `Location` is encoded as curl and browsers do (a raw space or bracket is escaped, an
    /// existing `%XX` kept) and resolved against the URL that sent it (RFC 9110 §10.2.2).
    /// Headers given with `-H` (any of them may carry a token), credentials from
    /// ``FetchOptions/credentials`` (Basic, RFC 7617) or from the netrc file are sent only until a
    /// hop leaves the mirror's origin (scheme, host, port; RFC 6454); an `https` → `http`
    /// hop is refused unless ``FetchOptions/allowInsecureRedirect``. A refused or broken redirect
    /// comes back as a `protocolViolation` outcome.
    /// - Parameter freshConnection: Open a new connection instead of reusing one.
    /// - Parameter mirror: The mirror to ask (a segment's piece from another mirror); the
    ///   current one by default.
    /// - Throws: ``PinFetchError`` only for a request libcurl could not even set up.
    func perform(
        _ method: TransferRequest.Method,
        headers: [String],
        delegate: TransferDelegate,
        freshConnection: Bool = false,
        on helper: EasyHandle? = nil,
        mirror: Int? = nil
    ) throws(PinFetchError) -> TransferOutcome {
        let origin = self.mirrors[mirror ?? self.mirrorIndex]
        var current = origin
        var headers = headers
        let userHeaders = Set(self.options.headers)
        // A hash-addressed mirror is a public store the user's tokens are not for: no -H, no -u.
        let hashed = (mirror ?? self.mirrorIndex) < self.hashedMirrorCount
        if hashed { headers.removeAll { userHeaders.contains($0) } }
        if !hashed, let credentials = self.options.credentials,
            !headers.contains(where: { Self.fieldName(of: $0) == "authorization" })
        {
            headers.append("Authorization: Basic \(Data(credentials.utf8).base64EncodedString())")
        }
        if helper == nil, !self.madeRequest, let stop = self.control.notStarting { throw self.notStarted(stop) }
        var onOrigin = true
        var hops = 0
        while true {
            var request = TransferRequest(
                url: current.text,
                method: method,
                headers: headers,
                connectTimeout: self.options.connectTimeout,
                stallTimeout: self.options.stallTimeout
            )
            request.origin = current.origin
            request.transport = self.transport
            request.netrc = onOrigin
            request.timeout = self.remainingTime.map { max(0.001, $0) }
            request.freshConnection = freshConnection && hops == 0
            request.opensFile = helper == nil && !self.madeRequest
            request.ownConnection = helper != nil
            if self.options.events != nil {
                self.report(
                    .request(
                        path: self.destination,
                        method: method == .head ? "HEAD" : "GET",
                        url: current.redacted,
                        headers: headers.map {
                            userHeaders.contains($0) ? Redaction.hidingValue($0) : Redaction.headerLine($0)
                        }
                    )
                )
            }
            let outcome = try (helper ?? self.easy).perform(request, delegate: delegate)
            if helper == nil {
                if outcome.category == .notStarted {
                    throw self.notStarted(self.control.notStarting ?? (.cancelled, "the run was interrupted"))
                }
                self.madeRequest = true
            }
            if self.options.events != nil, let head = delegate.head {
                let shown = head.fields.filter { Self.decidingFields.contains($0.name) }
                    .map { Redaction.headerLine("\($0.name): \($0.value)") }
                self.report(.response(path: self.destination, status: head.status, headers: shown))
            }
            guard let location = delegate.redirectLocation else { return outcome }
            func refuse(_ reason: String) -> TransferOutcome {
                TransferOutcome(code: 0, message: reason, category: .protocolViolation)
            }
            hops += 1
            guard hops <= self.options.maximumRedirects else {
                return refuse("more than \(self.options.maximumRedirects) redirects")
            }
            guard let next = current.resolving(location: location) else {
                return refuse(
                    "redirect to a malformed or non-HTTP Location \(SafeFileName.quoted(Redaction.url(location)))"
                )
            }
            if current.scheme == "https", next.scheme == "http", !self.options.allowInsecureRedirect {
                return refuse("redirect from https to http refused (--allow-insecure-redirect allows it)")
            }
            if !next.isSameOrigin(as: origin) {  // and never again, even on the way back
                onOrigin = false
                // Every header the user gave may be a token (`PRIVATE-TOKEN`, `X-Api-Key`): none
                // goes to another origin.
                headers.removeAll { userHeaders.contains($0) || Self.credentialFields.contains(Self.fieldName(of: $0)) }
            }
            current = next
            delegate.prepareForNextResponse()
        }
    }

    /// The lower-cased field name of a header line `Name: value`.
    static func fieldName(of line: String) -> String {
        line.prefix { $0 != ":" }.trimmingWhitespace().lowercased()
    }
}
