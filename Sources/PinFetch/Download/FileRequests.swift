import FoundationEssentials

/// The requests of one file on the download's own handle: until the file made one, `--fail-fast`
/// or an interrupt stops it as not started (``FetchResult/Status/skipped``); a `HEAD` probe is
/// asked once per mirror.
final class FileRequests {
    var requester: Requester
    let easy: EasyHandle
    /// Whether a request of this file reached libcurl.
    private(set) var madeRequest = false
    /// Why the file was not started, once it stopped for that.
    private(set) var notStartedBecause: (cause: PinFetchError.Code, reason: String)?
    /// What each mirror's `HEAD` said (a ``Probe`` when usable) and its final head, by mirror.
    private var probes: [Int: (probe: Probe?, head: ResponseHead?)] = [:]

    init(requester: Requester, easy: EasyHandle) {
        self.requester = requester
        self.easy = easy
    }

    /// Stops a file that made no request yet, for `stop` (``TransferControl/notStarting``).
    func notStarted(_ stop: (cause: PinFetchError.Code, reason: String)) -> PinFetchError {
        self.notStartedBecause = stop
        return PinFetchError(stop.cause, "\(self.requester.reporter.path): not started: \(stop.reason)")
    }

    /// Throws when the file has made no request and must not make one.
    func checkStarting() throws(PinFetchError) {
        if !self.madeRequest, let stop = self.requester.control.notStarting { throw self.notStarted(stop) }
    }

    /// One request to mirror `mirror` (``Requester/perform(_:headers:delegate:mirror:on:freshConnection:opensFile:ownConnection:)``).
    func send(
        _ method: TransferRequest.Method,
        headers: [String],
        delegate: TransferDelegate,
        mirror: Int,
        freshConnection: Bool = false
    ) throws(PinFetchError) -> TransferOutcome {
        try self.checkStarting()
        let outcome = try self.requester.perform(
            method,
            headers: headers,
            delegate: delegate,
            mirror: mirror,
            on: self.easy,
            freshConnection: freshConnection,
            opensFile: !self.madeRequest
        )
        if outcome.category == .notStarted {
            throw self.notStarted(self.requester.control.notStarting ?? (.cancelled, "the run was interrupted"))
        }
        self.madeRequest = true
        return outcome
    }

    /// `HEAD` of mirror `mirror` (advisory): `nil` unless a `2xx` without a content coding came
    /// back. The first call asks; later calls on the same mirror return what it learned.
    func probe(_ mirror: Int) -> Probe? {
        self.probeAnswer(mirror).probe
    }

    /// The final head of mirror `mirror`'s `HEAD`, whatever its status (``probe(_:)``).
    func probeAnswer(_ mirror: Int) -> (probe: Probe?, head: ResponseHead?) {
        if let known = self.probes[mirror] { return known }
        let delegate = TransferDelegate()
        let headers = ["Accept-Encoding: identity"] + self.requester.options.headers
        let outcome = try? self.send(.head, headers: headers, delegate: delegate, mirror: mirror)
        var probe: Probe?
        if let outcome, outcome.category == .ok, let head = delegate.head, (200..<300).contains(head.status),
            !head.hasContentCoding
        {
            probe = Probe(length: head.contentLength, validator: head.validator)
        }
        self.probes[mirror] = (probe, delegate.head)
        return (probe, delegate.head)
    }
}
