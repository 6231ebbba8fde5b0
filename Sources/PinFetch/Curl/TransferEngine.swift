internal import CCurl
@preconcurrency import Glibc
import Synchronization

/// One libcurl multi handle and the thread that drives it: every transfer of a batch
/// runs on this one event loop, so they share its connections. Over HTTP/2 (offered in TLS by
/// ALPN, libcurl's default) transfers to one origin are streams of one connection
/// (`CURLPIPE_MULTIPLEX`; each request waits for a connection that may multiplex before it opens
/// another, `CURLOPT_PIPEWAIT`); over HTTP/1.1 a connection carries one request at a time and is
/// kept for the next. At most ``maximumConnectionsPerHost`` transfers run at once to an origin
/// not known to multiplex; the others are held here, by origin, until one of its transfers ends
/// or its first answer shows HTTP/2. (libcurl's own `CURLMOPT_MAX_HOST_CONNECTIONS` queue is
/// not used: in 7.88 a transfer it held could wait behind another host's transfers for seconds.)
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
        case dropUnstarted
        case acknowledge(TransferChannel)
    }

    /// Connections to one host at most (`--max-connections-per-host`).
    let maximumConnectionsPerHost: Int
    /// `--fail-fast`: a transfer that ended keeps its place among its origin's running ones until
    /// its thread has judged it (``acknowledge(_:)``), so a transfer held for that origin does not
    /// start in the moment between a failing answer and the batch's stop.
    let defersRelease: Bool
    /// Ended transfers whose place is kept until acknowledged (engine thread only).
    private var unacknowledged: [ObjectIdentifier: TransferChannel] = [:]
    private let multi: UnsafeMutableRawPointer
    private let condition = Condition()
    private var requests: [Request] = []
    private var stopping = false
    /// Set by ``cancelAll()``: every transfer, running or to come, ends at once.
    private var cancelled = false
    /// Set by ``dropUnstarted()`` (engine thread only).
    private var dropsUnstarted = false
    private var stopped = false
    /// Set right before the multi handle is cleaned up: no request is taken after it.
    private var closed = false
    private var active: [UnsafeMutableRawPointer: TransferChannel] = [:]
    /// Transfers held back, by origin, and those running, by origin (engine thread only).
    private var held: [String: [(handle: UnsafeMutableRawPointer, channel: TransferChannel)]] = [:]
    private var running: [String: Int] = [:]
    /// Of those, the ones on a connection of their own (``TransferRequest/ownConnection``).
    private var runningOwn: [String: Int] = [:]
    /// Origins that just turned out to multiplex, whose held transfers start after the current
    /// `curl_multi_perform` (libcurl refuses `curl_multi_add_handle` from within its callbacks).
    private var released: Set<String> = []
    /// The connections' sockets and protocols (engine thread only).
    let ledger = ConnectionLedger()
    /// Origins whose latest status line said HTTP/2 or later, for any transfer of the batch:
    /// their transfers are streams of a connection, not held, and a HEAD there may leave its
    /// connection for the next request. Written on the engine's thread, read by workers too.
    private let multiplexedOrigins = Mutex<Set<String>>([])

    /// Starts the engine's thread.
    /// - Parameter maximumConnectionsPerHost: At least 1.
    /// - Throws: ``PinFetchError/Code/generic`` when libcurl cannot make a multi handle.
    init(maximumConnectionsPerHost: Int, defersRelease: Bool = false) throws(PinFetchError) {
        guard curlGlobalInit == CURLE_OK else {
            throw PinFetchError(.generic, "curl_global_init failed: \(EasyHandle.describe(curlGlobalInit))")
        }
        guard let multi = curl_multi_init() else { throw PinFetchError(.generic, "curl_multi_init failed") }
        self.multi = multi
        self.maximumConnectionsPerHost = max(1, maximumConnectionsPerHost)
        self.defersRelease = defersRelease
        _ = ccurl_multi_setopt_long(multi, CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX)
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
        self.condition.unlock()
        self.send(.abortAll)
    }

    /// The thread of a transfer that ended has judged it: with ``defersRelease``, its origin's
    /// place goes to a held transfer now.
    func acknowledge(_ channel: TransferChannel) {
        self.send(.acknowledge(channel))
    }

    /// Drops the held first requests of files (``TransferRequest/opensFile``) now and later
    /// (`--fail-fast` after a failure: those files never start); other transfers go on.
    func dropUnstarted() {
        self.send(.dropUnstarted)
    }

    /// Closes the connections and ends the thread once no transfer is left; returns when it ended.
    /// No transfer may be submitted after this.
    func stop() {
        self.condition.lock()
        self.stopping = true
        if !self.closed { curl_multi_wakeup(self.multi) }
        while !self.stopped { self.condition.wait() }
        self.condition.unlock()
    }

    /// Whether the latest answer from `origin` came over HTTP/2 or later.
    func multiplexes(_ origin: String) -> Bool {
        self.multiplexedOrigins.withLock { $0.contains(origin) }
    }

    /// Queues `request` for the engine's thread; dropped once the multi handle is gone (a handle
    /// freed after ``stop()`` acknowledges its last transfer, say). The wake-up happens under the
    /// lock, so the handle cannot be cleaned up in between.
    private func send(_ request: Request) {
        self.condition.lock()
        defer { self.condition.unlock() }
        guard !self.closed else { return }
        self.requests.append(request)
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
            for origin in self.released { self.release(origin) }
            self.released = []
            _ = curl_multi_poll(self.multi, nil, 0, 1000, nil)
        }
        self.condition.lock()
        self.closed = true
        self.condition.unlock()
        curl_multi_cleanup(self.multi)
        self.condition.lock()
        self.stopped = true
        self.condition.broadcast()
        self.condition.unlock()
    }

    private func handle(_ request: Request, cancelled: Bool) {
        switch request {
        case .add(_, let channel) where cancelled:
            Self.abortUnstarted(channel)
        case .add(let handle, let channel):
            self.start(handle, channel)
        case .resume(let handle, let channel):
            guard self.active[handle] === channel else { return }
            _ = curl_easy_pause(handle, CURLPAUSE_CONT)
        case .abort(let handle, let channel):
            if let index = self.held[channel.origin]?.firstIndex(where: { $0.channel === channel }) {
                self.held[channel.origin]?.remove(at: index)
                return channel.finish(CURLE_ABORTED_BY_CALLBACK)
            }
            guard self.active[handle] === channel else { return }
            self.active[handle] = nil
            curl_multi_remove_handle(self.multi, handle)
            channel.finish(CURLE_ABORTED_BY_CALLBACK)
            self.left(channel)
        case .abortAll:
            for (handle, channel) in self.active {
                curl_multi_remove_handle(self.multi, handle)
                channel.finish(CURLE_ABORTED_BY_CALLBACK)
            }
            for (_, channel) in self.held.values.joined() { Self.abortUnstarted(channel) }
            self.active = [:]
            self.held = [:]
            self.running = [:]
            self.unacknowledged = [:]
        case .acknowledge(let channel):
            if let ended = self.unacknowledged.removeValue(forKey: ObjectIdentifier(channel)) { self.ended(ended) }
        case .dropUnstarted:
            self.dropsUnstarted = true
            for (origin, waiting) in self.held {
                for (_, channel) in waiting where channel.opensFile { channel.drop() }
                self.held[origin] = waiting.filter { !$0.channel.opensFile }
                if self.held[origin]?.isEmpty == true { self.held[origin] = nil }
            }
        }
    }

    /// Ends a transfer libcurl never had: dropped when it was its file's first request.
    private static func abortUnstarted(_ channel: TransferChannel) {
        if channel.opensFile { channel.drop() } else { channel.finish(CURLE_ABORTED_BY_CALLBACK) }
    }

    /// Adds a transfer to libcurl, or holds it while its origin has as many running as allowed.
    private func start(_ handle: UnsafeMutableRawPointer, _ channel: TransferChannel) {
        let origin = channel.origin
        guard self.mayStart(channel) else {
            if self.dropsUnstarted, channel.opensFile { return channel.drop() }
            self.held[origin, default: []].append((handle, channel))
            return
        }
        guard curl_multi_add_handle(self.multi, handle) == CURLM_OK else { return channel.finish(CURLE_FAILED_INIT) }
        self.active[handle] = channel
        self.running[origin, default: 0] += 1
        if channel.ownConnection { self.runningOwn[origin, default: 0] += 1 }
    }

    /// Whether `channel` may start now: while its origin has fewer connections in use than
    /// allowed. Over HTTP/1.1 each running transfer has one; on an origin that multiplexes, its
    /// streams share one (in use while any runs), and each transfer on a connection of its own
    /// (a segment) has another.
    private func mayStart(_ channel: TransferChannel) -> Bool {
        let origin = channel.origin
        let running = self.running[origin, default: 0]
        guard self.multiplexes(origin) else { return running < self.maximumConnectionsPerHost }
        let own = self.runningOwn[origin, default: 0]
        let streams = running - own
        if channel.ownConnection { return own + (streams > 0 ? 1 : 0) < self.maximumConnectionsPerHost }
        return streams > 0 || own < self.maximumConnectionsPerHost
    }

    /// A running transfer left libcurl: a held one of its origin may start, at once or (with
    /// ``defersRelease``) once its thread acknowledged it.
    private func left(_ channel: TransferChannel) {
        guard self.defersRelease, !self.cancelled else { return self.ended(channel) }
        self.unacknowledged[ObjectIdentifier(channel)] = channel
    }

    /// A running transfer's place is free: a held one of its origin may start.
    private func ended(_ channel: TransferChannel) {
        let origin = channel.origin
        self.running[origin, default: 1] -= 1
        if self.running[origin] == 0 { self.running[origin] = nil }
        if channel.ownConnection {
            self.runningOwn[origin, default: 1] -= 1
            if self.runningOwn[origin] == 0 { self.runningOwn[origin] = nil }
        }
        self.release(origin)
    }

    /// Starts the transfers held for `origin` that may run now.
    private func release(_ origin: String) {
        guard let waiting = self.held.removeValue(forKey: origin) else { return }
        for next in waiting { self.start(next.handle, next.channel) }  // in order; held again if not yet
    }

    /// A transfer libcurl ended: its waiting thread is told. When its own attempt to connect
    /// timed out and no transfer to its origin has a connection, the transfers of that origin
    /// without one end with it (those held here, those waiting for that connection to show
    /// whether it multiplexes, `CURLOPT_PIPEWAIT`, and one libcurl let start its own attempt as
    /// this one failed): otherwise each would wait out its own connect timeout in turn, one wave
    /// after another, behind a host that never answers. A fast failure (refused, reset) takes
    /// no other along: the next attempt may well work, and costs little.
    private func end(_ handle: UnsafeMutableRawPointer, _ code: CURLcode) {
        curl_multi_remove_handle(self.multi, handle)
        guard let channel = self.active.removeValue(forKey: handle) else { return }
        let origin = channel.origin
        guard code == CURLE_OPERATION_TIMEDOUT, channel.triedConnecting, channel.connection == nil,
            !self.active.values.contains(where: { $0.origin == origin && $0.connection != nil })
        else {
            channel.finish(code)
            return self.left(channel)
        }
        let text = channel.errorText.map { String(cString: $0) } ?? ""  // read before the waiting thread goes on
        channel.finish(code)
        let reason =
            (text.isEmpty ? EasyHandle.describe(code) : text) + " (another download's connection to this host)"
        for (other, waiting) in self.active
        where waiting.origin == origin && waiting.connection == nil {
            self.active[other] = nil
            curl_multi_remove_handle(self.multi, other)
            waiting.finish(code, message: reason)
            self.running[origin, default: 1] -= 1
        }
        for (_, waiting) in self.held.removeValue(forKey: origin) ?? [] { waiting.finish(code, message: reason) }
        self.left(channel)
    }

    // MARK: libcurl's connection callbacks (on the engine's thread)

    /// A transfer took a connection, before its request goes out.
    func took(_ channel: TransferChannel, local: String, localPort: Int, peer: String, peerPort: Int) {
        let name = ConnectionLedger.name(local: local, localPort: localPort, peer: peer, peerPort: peerPort)
        channel.connection = name
        channel.noteConnected()
        self.ledger.taken(name)
    }

    /// A status line came for a transfer: its connection's protocol is known, and an origin
    /// that answers over HTTP/2 or later lets the transfers held for it go (as streams).
    func answered(_ channel: TransferChannel, statusLine: UnsafeRawBufferPointer) {
        guard let name = channel.connection, statusLine.starts(with: "HTTP/".utf8) else { return }
        let http1 = statusLine.starts(with: "HTTP/1".utf8)
        self.ledger.answered(on: name, http1: http1)
        let newlyMultiplexed = self.multiplexedOrigins.withLock { origins in
            if http1 {
                origins.remove(channel.origin)
                return false
            }
            return origins.insert(channel.origin).inserted
        }
        if newlyMultiplexed { self.released.insert(channel.origin) }
    }
}
