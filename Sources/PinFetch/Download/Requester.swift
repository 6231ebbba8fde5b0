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

    /// A refresh's conditions (``ConditionalRefresh``): dropped at the first redirect. They name
    /// the bytes the recorded URL led to, and a redirect may now lead elsewhere, to another file
    /// with the same validator (two files of one size and time on one nginx share an ETag).
    static let conditionFields: Set<String> = ["if-none-match", "if-modified-since"]

    /// Whether the run was cancelled or the file's time ran out: what stops a long step.
    var shouldStop: Bool { self.control.isCancelled || self.deadline.isPast }

    /// Signs `request` for `object` (``S3Signing/sign(_:for:payloadSHA256:on:isCancelled:)``); with `-v` it
    /// says with which key id (never the secret) and from where.
    /// - Throws: ``PinFetchError/Code/authentication`` when the credentials cannot be had.
    func sign(_ request: inout TransferRequest, for object: S3Location, on easy: EasyHandle) throws(PinFetchError) {
        let credentials = try S3Signing.sign(&request, for: object, on: easy) { [control = self.control] in
            control.isCancelled
        }
        guard self.reporter.isListening else { return }
        self.reporter.decide(
            credentials.map {
                "signed for \(object.region) with AWS key \($0.accessKeyID) from \($0.source)"
            } ?? "no AWS credentials found: the request goes unsigned"
        )
    }

    /// Adds what the registry of `blob` lets its requests in with (``RegistryAuthorization``):
    /// its `Authorization` replaces one of `--user`; `--user`'s credentials, else docker's
    /// (``DockerConfig``), are asked for it only when the registry wants credentials.
    /// - Throws: ``PinFetchError/Code/authentication`` when it wants credentials that are not
    ///   given or refuses them.
    /// - Parameter refused: The challenge of a `401` to what was sent before: the token is asked
    ///   for again (``RegistryAuthorization/renewed(for:challenge:credentials:on:transport:isCancelled:)``).
    func authorize(
        _ request: inout TransferRequest,
        for blob: OCILocation,
        on easy: EasyHandle,
        refused: String? = nil
    ) throws(PinFetchError) {
        let control = self.control
        let given = self.options.credentials
        let credentials = { () throws(PinFetchError) -> String? in
            if let given { return given }
            let docker = DockerConfig(environment: ProcessInfo.processInfo.environment)
            return try docker.credentials(for: blob.registry) { control.isCancelled }
        }
        let authorization = self.options.registryAuthorization
        let line: String?
        if let refused {
            line = try authorization.renewed(
                for: blob,
                challenge: refused,
                credentials: credentials,
                on: easy,
                transport: request.transport,
                isCancelled: { control.isCancelled }
            )
        } else {
            line = try authorization.header(
                for: blob,
                credentials: credentials,
                on: easy,
                transport: request.transport,
                isCancelled: { control.isCancelled }
            )
        }
        guard let line else { return }
        request.headers.removeAll { Self.fieldName(of: $0) == "authorization" }
        request.headers.append(line)
    }

    /// The header lines the credential helper for `url`'s host gives (none without one);
    /// with `-v` a line says which helper was asked (never what it gave).
    /// - Throws: ``PinFetchError/Code/authentication`` when the helper fails, hangs or answers
    ///   garbage (``CredentialHelperAnswers``).
    func helperHeaders(for url: HTTPURL) throws(PinFetchError) -> [String] {
        guard !self.options.credentialHelpers.isEmpty,
            let answer = try self.options.credentialHelperAnswers.headers(
                for: url.wireText,
                host: url.host,
                helpers: self.options.credentialHelpers,
                timeout: self.options.credentialHelperTimeout,
                isCancelled: { self.control.isCancelled }
            )
        else { return [] }
        if answer.asked, self.reporter.isListening {
            let names = Set(answer.lines.map { $0.prefix { $0 != ":" } }).sorted().joined(separator: ", ")
            self.reporter.decide(
                "credential helper \(answer.helper) for \(url.host): \(names.isEmpty ? "no header fields" : names)"
            )
        }
        return answer.lines
    }

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
        // A 401 to a registry's token or a credential helper's answer is answered once with
        // fresh ones (a token expired, a registry that challenges per request).
        var refused: String?
        var renewed = false
        defer { delegate.interceptsUnauthorized = false }
        while true {
            var request = TransferRequest(
                url: current.wireText,
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
            // HEAD is advisory: a server that never answers it must not hold the GET.
            if method == .head { request.answerTimeout = Self.headAnswerTimeout }
            // A credential helper's fields, for this hop's host; a -H of the same name wins.
            let helped = try self.helperHeaders(for: current)
            let given = Set(request.headers.map(Self.fieldName(of:)))
            request.headers += helped.filter { !given.contains(Self.fieldName(of: $0)) }
            // Every hop on the mirror's origin is its registry's or bucket's (a redirect within
            // it keeps the token and the signature; `--user`'s Basic never replaces them).
            if onOrigin, let blob = origin.oci { try self.authorize(&request, for: blob, on: easy, refused: refused) }
            refused = nil
            delegate.interceptsUnauthorized = !renewed && (onOrigin && origin.oci != nil || !helped.isEmpty)
            // A manifest is asked for in the forms pinfetch reads (a registry may convert otherwise).
            if origin.oci?.isManifest == true, !request.headers.contains(where: { Self.fieldName(of: $0) == "accept" })
            {
                request.headers.append("Accept: " + OCILocation.manifestTypes.joined(separator: ", "))
            }
            if onOrigin, let object = origin.s3 {
                try self.sign(&request, for: object, on: easy)
                // An `Authorization` of -u or -H would replace libcurl's signature.
                if request.signing != nil,
                    request.headers.contains(where: { Self.fieldName(of: $0) == "authorization" })
                {
                    request.headers.removeAll { Self.fieldName(of: $0) == "authorization" }
                    headers.removeAll { Self.fieldName(of: $0) == "authorization" }
                    if opensFile, hops == 0 {
                        self.reporter.warn(
                            "\(object.text) is signed with AWS keys: the Authorization of -u/-H is not sent to it"
                        )
                    }
                }
            }
            if self.reporter.isListening {
                var shown =
                    headers.map { userHeaders.contains($0) ? Redaction.hidingValue($0) : Redaction.headerLine($0) }
                    + helped.filter { request.headers.contains($0) }.map(Redaction.hidingValue)
                // The registry's Authorization, in place of --user's: its scheme shown, never its value.
                if let line = request.headers.first(where: { Self.fieldName(of: $0) == "authorization" }),
                    !headers.contains(line), !helped.contains(line)
                {
                    let scheme = line.drop { $0 != ":" }.dropFirst().trimmingWhitespace().prefix { $0 != " " }
                    shown.removeAll { Self.fieldName(of: $0) == "authorization" }
                    shown.append("Authorization: \(scheme) ***")
                }
                self.reporter.report(
                    .request(
                        path: self.reporter.path,
                        method: method == .head ? "HEAD" : "GET",
                        url: current.redacted,
                        headers: shown
                    )
                )
            }
            delegate.requestURL = current.text
            let outcome = try easy.perform(request, delegate: delegate)
            if self.reporter.isListening, let head = delegate.head {
                let shown = head.fields.filter { Self.decidingFields.contains($0.name) }
                    .map { Redaction.headerLine("\($0.name): \($0.value)") }
                self.reporter.report(.response(path: self.reporter.path, status: head.status, headers: shown))
            }
            if outcome.category != .notStarted, let challenge = delegate.refusedChallenge {
                renewed = true
                if !helped.isEmpty { self.options.credentialHelperAnswers.forget(current.wireText) }
                if onOrigin, origin.oci != nil { refused = challenge }
                self.reporter.decide(
                    "HTTP 401 to the \(onOrigin && origin.oci != nil ? "registry's token" : "credential helper's fields"): "
                        + "asking again"
                )
                delegate.prepareForNextResponse(redirect: false)
                continue
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
            headers.removeAll { Self.conditionFields.contains(Self.fieldName(of: $0)) }
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

    /// Seconds after its connection is up within which a `HEAD` must be answered, or the fetch
    /// goes on without it (its stall timeout would hold every run for a minute).
    static let headAnswerTimeout = 5.0

    /// The lower-cased field name of a header line `Name: value`.
    static func fieldName(of line: String) -> String {
        line.prefix { $0 != ":" }.trimmingWhitespace().lowercased()
    }
}
