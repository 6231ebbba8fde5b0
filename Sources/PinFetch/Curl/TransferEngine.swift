internal import CCurl
@preconcurrency import Glibc
import Synchronization

/// One libcurl multi handle and the thread that drives it (issue 13): every transfer of a batch
/// runs on this one event loop, so they share its connections. Over HTTP/2 (offered in TLS by
/// ALPN, libcurl's default) transfers to one origin are streams of one connection
/// (`CURLPIPE_MULTIPLEX`; each request waits for a connection that may multiplex before it opens
/// another, `CURLOPT_PIPEWAIT`); over HTTP/1.1 a connection carries one request at a time and is
/// kept for the next. At most ``maximumConnectionsPerHost`` connections go to one host
/// (`CURLMOPT_MAX_HOST_CONNECTIONS`); transfers beyond them wait in libcurl's queue.
///
/// A transfer's callbacks only queue what they get into its ``TransferChannel``; the thread that
/// submitted it (``EasyHandle/perform(_:delegate:)``) does the rest, so no disk write, hash or
/// decision runs on the event loop.
///
/// `@unchecked Sendable`: `requests`, `stopping` and `stopped` are guarded by `condition`, the
/// origins by their mutex; `multi` and `active` belong to the engine's thread once
/// ``init(maximumConnectionsPerHost:)`` returned.
final class TransferEngine: @unchecked Sendable {
    private enum Request {
        case add(UnsafeMutableRawPointer, TransferChannel)
        case resume(UnsafeMutableRawPointer, TransferChannel)
        case abort(UnsafeMutableRawPointer, TransferChannel)
        case abortAll
    }

    /// Connections to one host at most (`--max-connections-per-host`).
    let maximumConnectionsPerHost: Int
    private let multi: UnsafeMutableRawPointer
    private let condition = Condition()
    private var requests: [Request] = []
    private var stopping = false
    /// Set by ``cancelAll()``: every transfer, running or to come, ends at once.
    private var cancelled = false
    private var stopped = false
    private var active: [UnsafeMutableRawPointer: TransferChannel] = [:]
    /// The connections' sockets and protocols (engine thread only).
    let ledger = ConnectionLedger()
    /// Origins whose latest answer came over HTTP/2 or later (`CURLINFO_HTTP_VERSION`), for any
    /// handle of the batch: there a HEAD may leave its connection for the next request.
    private let multiplexedOrigins = Mutex<Set<String>>([])

    /// Starts the engine's thread.
    /// - Parameter maximumConnectionsPerHost: At least 1.
    /// - Throws: ``PinFetchError/Code/generic`` when libcurl cannot make a multi handle.
    init(maximumConnectionsPerHost: Int) throws(PinFetchError) {
        guard curlGlobalInit == CURLE_OK else {
            throw PinFetchError(.generic, "curl_global_init failed: \(EasyHandle.describe(curlGlobalInit))")
        }
        guard let multi = curl_multi_init() else { throw PinFetchError(.generic, "curl_multi_init failed") }
        self.multi = multi
        self.maximumConnectionsPerHost = max(1, maximumConnectionsPerHost)
        _ = ccurl_multi_setopt_long(multi, CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX)
        _ = ccurl_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, self.maximumConnectionsPerHost)
        // libcurl's default keeps 4 idle connections per transfer in the multi handle; between two
        // files a worker has none in it (it is verifying and syncing), so kept connections were
        // closed and opened again. Keep enough for every host of a mirror list instead.
        _ = ccurl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, max(64, 4 * self.maximumConnectionsPerHost))
        Threads.detach(name: "pinfetch.curl") { [self] in self.run() }
    }

    /// Adds a transfer whose options are set on `handle`; its events come in `channel`.
    func submit(_ handle: UnsafeMutableRawPointer, _ channel: TransferChannel) {
        self.send(.add(handle, channel))
    }

    /// Lets a transfer its channel paused go on.
    func resume(_ handle: UnsafeMutableRawPointer, _ channel: TransferChannel) {
        self.send(.resume(handle, channel))
    }

    /// Ends a transfer now (`CURLE_ABORTED_BY_CALLBACK`), unless it ended already.
    func abort(_ handle: UnsafeMutableRawPointer, _ channel: TransferChannel) {
        self.send(.abort(handle, channel))
    }

    /// Ends every transfer now and every one submitted later (`CURLE_ABORTED_BY_CALLBACK`), before
    /// it connects: when a run is cancelled, transfers waiting for a connection must not take the
    /// ones the others leave.
    func cancelAll() {
        self.condition.lock()
        self.cancelled = true
        self.requests.append(.abortAll)
        self.condition.unlock()
        curl_multi_wakeup(self.multi)
    }

    /// Closes the connections and ends the thread once no transfer is left; returns when it ended.
    /// No transfer may be submitted after this.
    func stop() {
        self.condition.lock()
        self.stopping = true
        self.condition.unlock()
        curl_multi_wakeup(self.multi)
        self.condition.lock()
        while !self.stopped { self.condition.wait() }
        self.condition.unlock()
    }

    /// Whether the latest answer from `origin` came over HTTP/2 or later.
    func multiplexes(_ origin: String) -> Bool {
        self.multiplexedOrigins.withLock { $0.contains(origin) }
    }

    /// Records the HTTP version of an answer from `origin`.
    func note(_ origin: String, multiplexes: Bool) {
        self.multiplexedOrigins.withLock { origins in
            if multiplexes { origins.insert(origin) } else { origins.remove(origin) }
        }
    }

    private func send(_ request: Request) {
        self.condition.lock()
        self.requests.append(request)
        self.condition.unlock()
        curl_multi_wakeup(self.multi)
    }

    private func run() {
        while true {
            self.condition.lock()
            let requests = self.requests
            self.requests = []
            let stopping = self.stopping
            let cancelled = self.cancelled
            self.condition.unlock()
            for request in requests { self.handle(request, cancelled: cancelled) }
            if stopping, self.active.isEmpty { break }
            var running: Int32 = 0
            _ = curl_multi_perform(self.multi, &running)
            var left: Int32 = 0
            while let message = curl_multi_info_read(self.multi, &left) {
                guard message.pointee.msg == CURLMSG_DONE, let handle = message.pointee.easy_handle else { continue }
                self.end(handle, ccurl_message_result(message))
            }
            _ = curl_multi_poll(self.multi, nil, 0, 1000, nil)
        }
        curl_multi_cleanup(self.multi)
        self.condition.lock()
        self.stopped = true
        self.condition.broadcast()
        self.condition.unlock()
    }

    private func handle(_ request: Request, cancelled: Bool) {
        switch request {
        case .add(_, let channel) where cancelled:
            channel.finish(CURLE_ABORTED_BY_CALLBACK)
        case .add(let handle, let channel):
            let code = curl_multi_add_handle(self.multi, handle)
            guard code == CURLM_OK else { return channel.finish(CURLE_FAILED_INIT) }
            self.active[handle] = channel
        case .resume(let handle, let channel):
            guard self.active[handle] === channel else { return }
            _ = curl_easy_pause(handle, CURLPAUSE_CONT)
        case .abort(let handle, let channel):
            guard self.active[handle] === channel else { return }
            self.active[handle] = nil
            curl_multi_remove_handle(self.multi, handle)
            channel.finish(CURLE_ABORTED_BY_CALLBACK)
        case .abortAll:
            for (handle, channel) in self.active {
                curl_multi_remove_handle(self.multi, handle)
                channel.finish(CURLE_ABORTED_BY_CALLBACK)
            }
            self.active = [:]
        }
    }

    /// A transfer libcurl ended: its waiting thread is told. When its own attempt to connect
    /// failed while others to its origin waited for that connection to show whether it
    /// multiplexes (`CURLOPT_PIPEWAIT`), they end with it: otherwise each would wait out its own
    /// connect timeout in turn, one after another, behind a host that never answers. (One that
    /// only waited, for `--max-time` say, takes no other with it.)
    private func end(_ handle: UnsafeMutableRawPointer, _ code: CURLcode) {
        curl_multi_remove_handle(self.multi, handle)
        guard let channel = self.active.removeValue(forKey: handle) else { return }
        guard Self.connectFailures.contains(code), channel.triedConnecting, channel.connection == nil,
            channel.waitsForMultiplexing
        else {
            return channel.finish(code)
        }
        let text = channel.errorText.map { String(cString: $0) } ?? ""  // read before the waiting thread goes on
        channel.finish(code)
        let reason =
            (text.isEmpty ? EasyHandle.describe(code) : text) + " (the connection to this host it waited for)"
        for (other, waiting) in self.active
        where waiting.origin == channel.origin && waiting.waitsForMultiplexing && waiting.connection == nil {
            self.active[other] = nil
            curl_multi_remove_handle(self.multi, other)
            waiting.finish(code, message: reason)
        }
    }

    /// Codes of a transfer that got no usable connection.
    private static let connectFailures: Set<CURLcode> = [
        CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY, CURLE_COULDNT_CONNECT, CURLE_OPERATION_TIMEDOUT,
        CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION,
    ]

    // MARK: libcurl's connection callbacks (on the engine's thread)

    /// A transfer took a connection, before its request goes out.
    func took(_ channel: TransferChannel, local: String, localPort: Int, peer: String, peerPort: Int) {
        let name = ConnectionLedger.name(local: local, localPort: localPort, peer: peer, peerPort: peerPort)
        channel.connection = name
        self.ledger.taken(name)
    }

    /// A status line came for a transfer.
    func answered(_ channel: TransferChannel, statusLine: UnsafeRawBufferPointer) {
        guard let name = channel.connection, statusLine.starts(with: "HTTP/".utf8) else { return }
        self.ledger.answered(on: name, http1: statusLine.starts(with: "HTTP/1".utf8))
    }
}
