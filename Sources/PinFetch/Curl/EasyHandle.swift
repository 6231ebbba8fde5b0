internal import CCurl
import FoundationEssentials
@preconcurrency import Glibc

/// libcurl's global state, set up once before the first handle (`curl_global_init` is not
/// thread-safe against other libcurl calls, so it runs in a lazy global's initializer).
/// libcrypto is initialized first, without its atexit cleanup (``openSSLInitialized``).
let curlGlobalInit: CURLcode = openSSLInitialized ? curl_global_init(Int(CURL_GLOBAL_ALL)) : CURLE_FAILED_INIT

/// Owns one libcurl easy handle and frees it once. Its transfers run on a ``TransferEngine``, whose
/// connections every handle of a batch shares (the connection of a HEAD is not kept on HTTP/1.x;
/// see ``perform(_:delegate:)``).
///
/// A class (not `~Copyable`) because a worker hands it to one ``Download`` after another.
/// `@unchecked Sendable` only so it can be created on one thread and moved to another: libcurl
/// forbids using a handle from two threads at once, and nothing here does: options are set while
/// the handle is not in the engine, and information read after it left.
final class EasyHandle: @unchecked Sendable {
    private let raw: UnsafeMutableRawPointer  // `CURL` is `typedef void`
    /// The event loop its transfers run on (another handle for the same file uses it too).
    let engine: TransferEngine

    init(engine: TransferEngine) throws(PinFetchError) {
        self.engine = engine
        guard curlGlobalInit == CURLE_OK else {
            throw PinFetchError(.generic, "curl_global_init failed: \(Self.describe(curlGlobalInit))")
        }
        guard let raw = curl_easy_init() else { throw PinFetchError(.generic, "curl_easy_init failed") }
        self.raw = raw
    }

    /// With ``TransferEngine/defersRelease``: the last transfer, until its place is given back.
    private var unacknowledged: TransferChannel?

    deinit {
        self.acknowledge()
        curl_easy_cleanup(self.raw)
    }

    /// Gives back the place of this handle's last transfer among its origin's running ones
    /// (``TransferEngine/acknowledge(_:)``): its answer was judged. The next ``perform(_:delegate:)``
    /// does it too.
    func acknowledge() {
        guard let channel = self.unacknowledged else { return }
        self.unacknowledged = nil
        self.engine.acknowledge(channel)
    }

    /// Runs `request` to completion on the engine, feeding `delegate` on the calling thread, which
    /// it blocks.
    ///
    /// HEAD is advisory, and some servers send a body after their answer to it anyway (RFC 9110
    /// §9.3.2 forbids it). libcurl (`CURLOPT_NOBODY`) does not read those bytes and keeps the
    /// connection; on HTTP/1.x the next request on it then reads them as its status line and fails
    /// with "Received HTTP/0.9 when not allowed". So a HEAD's connection is closed after it
    /// (`CURLOPT_FORBID_REUSE`), unless this handle saw the origin answer over HTTP/2 or later,
    /// where stray bytes stay on the HEAD's own stream and the connection is safe to share.
    /// - Returns: the `CURLcode` of the transfer (`CURLE_OK` = 0), libcurl's error text, and
    ///   whether the request went out on a reused connection.
    func perform(_ request: TransferRequest, delegate: TransferDelegate) throws(PinFetchError) -> TransferOutcome {
        self.acknowledge()
        let origin = request.origin ?? (try? HTTPURL(request.url))?.origin
        let forbidReuse = request.method == .head && !(origin.map { self.engine.multiplexes($0) } ?? false)
        curl_easy_reset(self.raw)
        var headerList: UnsafeMutablePointer<curl_slist>?
        defer { curl_slist_free_all(headerList) }
        for line in request.headers {
            guard let appended = curl_slist_append(headerList, line) else {
                throw PinFetchError(.generic, "curl_slist_append failed")
            }
            headerList = appended
        }
        var errorBuffer = [CChar](repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        let raw = self.raw
        let engine = Unmanaged.passUnretained(self.engine).toOpaque()
        // Over TLS, ALPN tells at once whether a connection may carry streams (HTTP/2): a request
        // waits for that answer instead of opening another connection. Over plain HTTP nothing
        // tells, and libcurl 7.88 held every later request to the host until the first ended.
        let pipewait = request.url.utf8.starts(with: "https:".utf8)
        let started = ContinuousClock.now
        let (code, channel): (CURLcode, TransferChannel?) = errorBuffer.withUnsafeMutableBufferPointer { errorText in
            let channel = TransferChannel(
                engine: self.engine,
                origin: origin ?? request.url,
                waitsForMultiplexing: pipewait,
                errorText: UnsafePointer(errorText.baseAddress),
                rateLimit: request.transport.maximumReceiveRate,
                opensFile: request.opensFile,
                ownConnection: request.ownConnection
            )
            channel.answerTimeout = request.answerTimeout
            let context = Unmanaged.passUnretained(channel).toOpaque()
            var setup = CURLE_OK
            func set(_ result: CURLcode) { if setup == CURLE_OK { setup = result } }
            set(ccurl_easy_setopt_pointer(raw, CURLOPT_URL, request.url))
            set(ccurl_easy_setopt_pointer(raw, CURLOPT_ERRORBUFFER, errorText.baseAddress))
            set(ccurl_easy_setopt_long(raw, CURLOPT_NOSIGNAL, 1))
            set(ccurl_easy_setopt_pointer(raw, CURLOPT_PROTOCOLS_STR, "http,https"))
            set(ccurl_easy_setopt_pointer(raw, CURLOPT_REDIR_PROTOCOLS_STR, "http,https"))
            set(ccurl_easy_setopt_long(raw, CURLOPT_FOLLOWLOCATION, 0))  // Download follows, per origin
            set(ccurl_easy_setopt_pointer(raw, CURLOPT_USERAGENT, "pinfetch/\(PinFetchVersion.current)"))
            // A hint, so its result is not checked: libcurl 7.88 refuses it (CURLE_BAD_FUNCTION_ARGUMENT)
            // on a handle whose last transfer failed before connecting (a host that did not
            // resolve), and every retry then failed with exit 1.
            _ = ccurl_easy_setopt_long(raw, CURLOPT_BUFFERSIZE, 512 * 1024)
            set(ccurl_easy_setopt_slist(raw, CURLOPT_HTTPHEADER, headerList))
            if let signing = request.signing {
                set(ccurl_easy_setopt_pointer(raw, CURLOPT_AWS_SIGV4, signing.provider))
                set(ccurl_easy_setopt_pointer(raw, CURLOPT_USERPWD, signing.user))
            }
            if request.method == .head { set(ccurl_easy_setopt_long(raw, CURLOPT_NOBODY, 1)) }
            if request.method == .put, let upload = request.upload {
                set(ccurl_easy_setopt_long(raw, CURLOPT_UPLOAD, 1))
                set(ccurl_easy_setopt_off_t(raw, CURLOPT_INFILESIZE_LARGE, curl_off_t(upload.size)))
                set(ccurl_easy_setopt_pointer(raw, CURLOPT_READDATA, Unmanaged.passUnretained(upload).toOpaque()))
                set(
                    ccurl_easy_setopt_read_function(raw) { data, size, count, context in
                        guard let data, let context else { return Int(CURL_READFUNC_ABORT) }
                        let source = Unmanaged<UploadSource>.fromOpaque(context).takeUnretainedValue()
                        let buffer = UnsafeMutableRawBufferPointer(start: data, count: size * count)
                        return source.read(into: buffer) ?? Int(CURL_READFUNC_ABORT)
                    }
                )
            }
            if request.method == .post {
                let form = request.form ?? ""
                set(ccurl_easy_setopt_off_t(raw, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(form.utf8.count)))
                set(ccurl_easy_setopt_pointer(raw, CURLOPT_COPYPOSTFIELDS, form))
            }
            if forbidReuse { set(ccurl_easy_setopt_long(raw, CURLOPT_FORBID_REUSE, 1)) }
            if request.freshConnection { set(ccurl_easy_setopt_long(raw, CURLOPT_FRESH_CONNECT, 1)) }
            if let seconds = request.connectTimeout {
                set(ccurl_easy_setopt_long(raw, CURLOPT_CONNECTTIMEOUT_MS, Int(max(1, seconds * 1000))))
            }
            if let rate = request.minimumRate, let seconds = request.stallTimeout {
                set(ccurl_easy_setopt_long(raw, CURLOPT_LOW_SPEED_LIMIT, rate))
                set(ccurl_easy_setopt_long(raw, CURLOPT_LOW_SPEED_TIME, Int(max(1, seconds.rounded(.up)))))
            }
            if let seconds = request.timeout {
                set(ccurl_easy_setopt_long(raw, CURLOPT_TIMEOUT_MS, Int(max(1, seconds * 1000))))
            }
            set(request.transport.apply(to: raw, netrc: request.netrc, url: request.url))
            set(ccurl_easy_setopt_pointer(raw, CURLOPT_HEADERDATA, context))
            set(
                ccurl_easy_setopt_header_function(raw) { data, size, count, context in
                    guard let data, let context else { return 0 }
                    let channel = Unmanaged<TransferChannel>.fromOpaque(context).takeUnretainedValue()
                    let line = UnsafeRawBufferPointer(start: data, count: size * count)
                    channel.engine.answered(channel, statusLine: line)
                    return channel.deliverHeader(line) ? size * count : 0
                }
            )
            set(ccurl_easy_setopt_pointer(raw, CURLOPT_WRITEDATA, context))
            set(
                ccurl_easy_setopt_write_function(raw) { data, size, count, context in
                    guard let data, let context else { return 0 }
                    let channel = Unmanaged<TransferChannel>.fromOpaque(context).takeUnretainedValue()
                    return channel.deliverBody(UnsafeRawBufferPointer(start: data, count: size * count))
                }
            )
            if request.ownConnection {
                set(ccurl_easy_setopt_long(raw, CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_1_1)))
            } else if pipewait {
                set(ccurl_easy_setopt_long(raw, CURLOPT_PIPEWAIT, 1))
            }
            set(ccurl_easy_setopt_pointer(raw, CURLOPT_PREREQDATA, context))
            set(
                ccurl_easy_setopt_prereq_function(raw) { context, peer, local, peerPort, localPort in
                    guard let context, let peer, let local else { return 0 }  // CURL_PREREQFUNC_OK
                    let channel = Unmanaged<TransferChannel>.fromOpaque(context).takeUnretainedValue()
                    channel.engine.took(
                        channel,
                        local: String(cString: local),
                        localPort: Int(localPort),
                        peer: String(cString: peer),
                        peerPort: Int(peerPort)
                    )
                    return 0
                }
            )
            // The engine's ledger learns of every socket a connection is made on, until it closes
            // (the close callback stays with the connection, so it gets the engine, which outlives
            // it; the socket callback comes during this transfer, so it gets the transfer).
            set(ccurl_easy_setopt_pointer(raw, CURLOPT_SOCKOPTDATA, context))
            set(
                ccurl_easy_setopt_sockopt_function(raw) { context, fd, _ in
                    guard let context else { return 0 }
                    let channel = Unmanaged<TransferChannel>.fromOpaque(context).takeUnretainedValue()
                    channel.triedConnecting = true
                    channel.engine.ledger.opened(fd)
                    return 0  // CURL_SOCKOPT_OK
                }
            )
            set(ccurl_easy_setopt_pointer(raw, CURLOPT_CLOSESOCKETDATA, engine))
            set(
                ccurl_easy_setopt_closesocket_function(raw) { engine, fd in
                    if let engine {
                        Unmanaged<TransferEngine>.fromOpaque(engine).takeUnretainedValue().ledger.closed(fd)
                    }
                    return close(fd)
                }
            )
            set(ccurl_easy_setopt_long(raw, CURLOPT_NOPROGRESS, 0))
            set(ccurl_easy_setopt_pointer(raw, CURLOPT_XFERINFODATA, context))
            set(
                ccurl_easy_setopt_xferinfo_function(raw) { context, _, received, _, _ in
                    guard let context else { return 1 }
                    let channel = Unmanaged<TransferChannel>.fromOpaque(context).takeUnretainedValue()
                    return channel.noteProgress(received: Int64(received)) ? 0 : 1
                }
            )
            guard setup == CURLE_OK else { return (setup, nil) }
            delegate.begin(
                stallTimeout: request.stallTimeout,
                rateLimit: request.transport.maximumReceiveRate,
                timeout: request.timeout
            )
            let deadline = request.timeout.map { started + .milliseconds(Int64($0 * 1000)) }
            let code = self.run(channel, delegate: delegate, deadline: deadline)
            if self.engine.defersRelease { self.unacknowledged = channel }
            return (code, channel)
        }
        if let channel, channel.wasDropped {
            return TransferOutcome(code: Int(code.rawValue), message: "not started", category: .notStarted)
        }
        // No body (HEAD, a 3xx or an empty answer): the head is still looked at.
        if code == CURLE_OK || delegate.head != nil, !delegate.hasDeliveredHead { _ = delegate.deliverHeadIfNeeded() }
        var text = errorBuffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        if text.isEmpty, let message = channel?.message { text = message }
        if code == CURLE_OPERATION_TIMEDOUT, let channel, channel.wasAborted, request.timeout != nil {
            // Ended at its deadline by ``run(_:delegate:deadline:)``: libcurl's text is for the
            // abort it saw ("Callback aborted"), which says nothing to a user.
            text = "out of time"
        }
        if code == CURLE_OPERATION_TIMEDOUT, let channel, channel.connection == nil, let limit = request.timeout,
            ContinuousClock.now - started >= .milliseconds(Int64(limit * 1000) - 50)
        {
            // Transfers beyond --max-connections-per-host wait for a connection; libcurl's words
            // ("Failed to resolve host … after 0 ms") would name a step that never ran.
            text = "out of time (--max-time) while waiting for a connection to \(channel.origin)"
        }
        // No new connection (`CURLINFO_NUM_CONNECTS` 0) although a request went out (`CURLINFO_REQUEST_SIZE`
        // > 0; a failed connect sends none): the request used a connection kept from an earlier one.
        var connects = 0
        var requestSize = 0
        let reusedConnection =
            ccurl_easy_getinfo_long(self.raw, CURLINFO_NUM_CONNECTS, &connects) == CURLE_OK && connects == 0
            && ccurl_easy_getinfo_long(self.raw, CURLINFO_REQUEST_SIZE, &requestSize) == CURLE_OK && requestSize > 0
        if delegate.timedOut {
            return TransferOutcome(
                code: Int(code.rawValue),
                message: "out of time (--max-time) while keeping to --limit-rate",
                category: .network,
                reusedConnection: reusedConnection
            )
        }
        if let channel, channel.unanswered, let seconds = request.answerTimeout {
            return TransferOutcome(
                code: Int(code.rawValue),
                message: "no answer within \(Text.number(seconds)) s of connecting",
                category: .network,
                reusedConnection: reusedConnection
            )
        }
        if delegate.stalled {
            let seconds = request.stallTimeout ?? 0
            return TransferOutcome(
                code: Int(code.rawValue),
                message: "no data for \(Text.number(seconds)) s (--stall-timeout)",
                category: .network,
                reusedConnection: reusedConnection
            )
        }
        var connectCode = 0
        if code != CURLE_OK, ccurl_easy_getinfo_long(self.raw, CURLINFO_HTTP_CONNECTCODE, &connectCode) == CURLE_OK,
            connectCode == 407
        {
            // A proxy refused the CONNECT tunnel for want of credentials (RFC 9110 §15.5.8).
            return TransferOutcome(
                code: Int(code.rawValue),
                message: request.transport.proxyAuthenticationFailure(for: request.url),
                category: .authentication,
                reusedConnection: reusedConnection
            )
        }
        // libcurl refuses a header line over 100 KB with "Out of memory", and a head over 300 KB
        // with "Too large response headers" (a receive error; CURLE_TOO_LARGE, 100, from 8.6 on):
        // an answer that cannot be used, not a local or a network failure.
        let tooLarge =
            code == CURLE_OUT_OF_MEMORY || code.rawValue == 100 || text.hasPrefix("Too large response headers")
        if tooLarge, delegate.head == nil {
            return TransferOutcome(
                code: Int(code.rawValue),
                message: "the answer's header section is larger than libcurl accepts (libcurl: "
                    + "\(text.isEmpty ? Self.describe(code) : text))",
                category: .protocolViolation,
                reusedConnection: reusedConnection
            )
        }
        return TransferOutcome(
            code: Int(code.rawValue),
            message: text.isEmpty ? Self.describe(code) : Redaction.text(text),  // libcurl may name the proxy URL
            category: Self.category(of: code),
            reusedConnection: reusedConnection
        ).pointingToTheFix(request.transport, url: request.url)
    }

    /// Submits the transfer set up on this handle to the engine and feeds `delegate` its events
    /// until it ends; a `false` from the delegate aborts it (`CURLE_WRITE_ERROR`, as a write
    /// callback that takes nothing; `CURLE_ABORTED_BY_CALLBACK` from ``TransferDelegate/progress(received:)``).
    ///
    /// A transfer still running at `deadline` (``TransferRequest/timeout``) is ended there with
    /// `CURLE_OPERATION_TIMEDOUT`: libcurl looks at the time of a transfer that waits for a
    /// connection only about once a second.
    private func run(
        _ channel: TransferChannel,
        delegate: TransferDelegate,
        deadline: ContinuousClock.Instant?
    ) -> CURLcode {
        self.engine.submit(self.raw, channel)
        let answerLimit = channel.answerTimeout.map { Duration.milliseconds(Int64(($0 * 1000).rounded())) }
        var abortedWith: CURLcode?
        func abort(_ code: CURLcode) {
            guard abortedWith == nil else { return }
            abortedWith = code
            channel.abort()
            self.engine.abort(self.raw, channel)
        }
        var consumed: Int64 = 0
        while true {
            let batch = channel.take(waitingAtMost: 0.1)
            for event in batch.events where abortedWith == nil {
                switch event {
                case .header(let line):
                    line.withUnsafeBytes { delegate.headerLine($0) }
                case .body(let piece):
                    if !piece.withUnsafeBytes({ delegate.body($0) }) { abort(CURLE_WRITE_ERROR) }
                    consumed += Int64(piece.count)
                }
            }
            if let code = batch.finished { return abortedWith ?? code }
            // A transfer waiting for a connection has no progress yet, but a cancel must stop it
            // before it connects.
            if abortedWith == nil, delegate.isCancelled { abort(CURLE_ABORTED_BY_CALLBACK) }
            if abortedWith == nil, let deadline, ContinuousClock.now >= deadline + .milliseconds(20) {
                abort(CURLE_OPERATION_TIMEDOUT)
            }
            if abortedWith == nil, let limit = answerLimit, delegate.head == nil, let since = batch.connectedAt,
                ContinuousClock.now - since >= limit
            {
                channel.unanswered = true
                abort(CURLE_OPERATION_TIMEDOUT)
            }
            // Progress is what libcurl received plus what was taken from the queue: over HTTP/2
            // libcurl may receive a stream's window ahead, then nothing while the queue drains.
            delegate.connected = batch.connectedAt != nil
            if abortedWith == nil, batch.received >= 0, !delegate.tick(received: batch.received + consumed) {
                abort(CURLE_ABORTED_BY_CALLBACK)
            }
            if batch.resume, abortedWith == nil { self.engine.resume(self.raw, channel) }
        }
    }

    static func describe(_ code: CURLcode) -> String { String(cString: curl_easy_strerror(code)) }

    private static func category(of code: CURLcode) -> TransferOutcome.Category {
        switch code {
        case CURLE_OK: .ok
        // URLs are validated before any request, so at transfer time these mean a broken answer
        // (e.g. "Received HTTP/0.9 when not allowed" is CURLE_UNSUPPORTED_PROTOCOL).
        // A reply libcurl cannot parse (a malformed Content-Length, a header line without a colon)
        // or a transfer coding it does not know is an answer that cannot be used: exit 7.
        case CURLE_UNSUPPORTED_PROTOCOL, CURLE_URL_MALFORMAT, CURLE_WEIRD_SERVER_REPLY, CURLE_BAD_CONTENT_ENCODING:
            .protocolViolation
        case CURLE_COULDNT_RESOLVE_PROXY, CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_CONNECT, CURLE_OPERATION_TIMEDOUT,
            CURLE_SEND_ERROR, CURLE_RECV_ERROR, CURLE_GOT_NOTHING, CURLE_PARTIAL_FILE, CURLE_HTTP2, CURLE_HTTP2_STREAM,
            CURLE_SSL_CONNECT_ERROR, CURLE_HTTP3, CURLE_QUIC_CONNECT_ERROR:
            .network
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_CERTPROBLEM,
            CURLE_SSL_PINNEDPUBKEYNOTMATCH,
            CURLE_SSL_ISSUER_ERROR, CURLE_SSL_CRL_BADFILE:
            .tls
        case CURLE_TOO_MANY_REDIRECTS: .protocolViolation
        case CURLE_WRITE_ERROR, CURLE_ABORTED_BY_CALLBACK: .aborted
        default: .other
        }
    }
}
