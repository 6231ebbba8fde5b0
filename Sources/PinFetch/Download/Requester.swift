import FoundationEssentials
@preconcurrency import Glibc

/// Sends the requests of one file's fetch, to one of its mirrors, following redirects itself.
///
/// A `Sendable` value holding all a request needs (the mirrors, the options, the transport, the
/// run's control, the deadline and where events go): the download and each helper thread of a
/// segmented phase use their own copy with their own ``EasyHandle``, and none reaches back into
/// the download.
struct Requester: Sendable {
    /// The mirrors of the file, hash-addressed ones first (``hashedMirrorCount`` of them).
    let mirrors: [HTTPURL]
    let hashedMirrorCount: Int
    let options: FetchOptions
    let transport: TransportSettings
    let control: TransferControl
    let deadline: Deadline
    let reporter: Reporter

    /// Response fields that drive pinfetch's decisions, shown with `-v` (lower case).
    static let decidingFields: Set<String> = [
        "content-length", "content-range", "accept-ranges", "etag", "last-modified", "content-encoding",
        "transfer-encoding", "location", "retry-after", "content-disposition", "repr-digest", "content-digest",
        "digest", "www-authenticate", "proxy-authenticate",
    ]

    /// Header fields that carry credentials: dropped once a redirect leaves the origin.
    static let credentialFields: Set<String> = ["authorization", "cookie", "proxy-authorization"]

    /// Whether the run was cancelled or the file's time ran out: what stops a long step.
    var shouldStop: Bool { self.control.isCancelled || self.deadline.isPast }

    /// Performs one request to mirror `mirror` on `easy`, following redirects itself (at most
    /// ``FetchOptions/maximumRedirects``), so each attempt re-resolves an expired signed target.
    ///
    /// A `Location` is encoded as curl and browsers do (a raw space or bracket is escaped, an
    /// existing `%XX` kept) and resolved against the URL that sent it (RFC 9110 §10.2.2).
    /// Headers given with `-H` (any of them may carry a token), credentials from
    /// ``FetchOptions/credentials`` (Basic, RFC 7617) or from the netrc file are sent only until a
    /// hop leaves the mirror's origin (scheme, host, port; RFC 6454); an `https` → `http`
    /// hop is refused unless ``FetchOptions/allowInsecureRedirect``. A refused or broken redirect
    /// comes back as a `protocolViolation` outcome. A hash-addressed mirror is a public store
    /// the user's tokens are not for: it gets no `-H` and no `--user`.
    /// - Parameters:
    ///   - freshConnection: Open a new connection for the first hop instead of reusing one.
    ///   - opensFile: This is the file's first request (``TransferRequest/opensFile``).
    ///   - ownConnection: A helper's piece, on a connection of its own (``TransferRequest/ownConnection``).
    /// - Throws: ``PinFetchError`` only for a request libcurl could not even set up.
    func perform(
        _ method: TransferRequest.Method,
        headers: [String],
        delegate: TransferDelegate,
        mirror: Int,
        on easy: EasyHandle,
        freshConnection: Bool = false,
        opensFile: Bool = false,
        ownConnection: Bool = false
    ) throws(PinFetchError) -> TransferOutcome {
        let origin = self.mirrors[mirror]
        var current = origin
        var headers = headers
        let userHeaders = Set(self.options.headers)
        let hashed = mirror < self.hashedMirrorCount
        if hashed { headers.removeAll { userHeaders.contains($0) } }
        if !hashed, let credentials = self.options.credentials,
            !headers.contains(where: { Self.fieldName(of: $0) == "authorization" })
        {
            headers.append("Authorization: Basic \(Data(credentials.utf8).base64EncodedString())")
        }
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
            request.timeout = self.deadline.remaining.map { max(0.001, $0) }
            request.freshConnection = freshConnection && hops == 0
            request.opensFile = opensFile && hops == 0
            request.ownConnection = ownConnection
            if self.reporter.isListening {
                self.reporter.report(
                    .request(
                        path: self.reporter.path,
                        method: method == .head ? "HEAD" : "GET",
                        url: current.redacted,
                        headers: headers.map {
                            userHeaders.contains($0) ? Redaction.hidingValue($0) : Redaction.headerLine($0)
                        }
                    )
                )
            }
            let outcome = try easy.perform(request, delegate: delegate)
            if self.reporter.isListening, let head = delegate.head {
                let shown = head.fields.filter { Self.decidingFields.contains($0.name) }
                    .map { Redaction.headerLine("\($0.name): \($0.value)") }
                self.reporter.report(.response(path: self.reporter.path, status: head.status, headers: shown))
            }
            guard outcome.category != .notStarted, let location = delegate.redirectLocation else { return outcome }
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
