@preconcurrency import Glibc
import Synchronization

/// The shared state of one ``Fetcher/run(_:parallelism:failFast:onResult:)`` call: a queue of
/// job indices that worker threads take from, and the results they leave.
///
/// Workers take jobs in order, but pass over (for a while) one that would only wait: a job for
/// a host that has as many files in flight as `--max-connections-per-host` allows (the engine
/// would hold it, and its worker with it, while another host's file could run), or a copy of an
/// entry pinned the same that is still running (``sibling(of:)``). A job is never taken while an
/// earlier entry pinned the same is not, so no worker waits for a job no worker has.
final class Batch: Sendable {
    private struct State {
        /// Indices of the jobs not taken yet, in order.
        var pending: [Int]
        /// Jobs taken whose transfer slot is held (not committing, not finished), by the origin
        /// of their first URL.
        var inFlight: [String: Int] = [:]
        /// For each group of entries pinned the same, the position in it of the first one not
        /// finished (its count once all are).
        var firstUnfinished: [Int]
        var results: [FetchResult?]
        var running: Int
        /// The code of the first failure, once there was one.
        var firstFailure: PinFetchError.Code?
        var done: (@Sendable ([FetchResult]) -> Void)?
    }

    let jobs: [FetchJob]
    let options: FetchOptions
    let control: TransferControl
    let failFast: Bool
    let onResult: (@Sendable (Int, FetchResult) -> Void)?
    private let state: Mutex<State>
    /// Trust anchors (`--cacert` read once) and the rest of the transport, for every file of the batch.
    private let transport: Result<TransportSettings, PinFetchError>
    /// The batch's destinations, so a server-chosen name never lands on another file of it.
    private let claims: DestinationClaims
    /// Signalled as each file ends, and the count of files ended (changed under its lock): what
    /// a copy of an earlier entry pinned the same waits for (``sibling(of:)``).
    private let ended = Condition()
    private let endedCount = Atomic<Int>(0)
    /// The event loop every transfer of the batch runs on, started by ``start(workers:done:)``.
    private let engine: Result<TransferEngine, PinFetchError>
    /// The entries pinned the same, in order, for each pin of more than one entry.
    private let groups: [[Int]]
    /// For each job, its group in ``groups``, if it has one.
    private let groupOf: [Int?]
    /// For each job, the origin of its first URL (`nil` when it does not parse).
    private let origins: [String?]
    /// How far past the first pending job a worker looks for one that would not wait.
    private static let lookahead = 256
    /// The batch's transfers at once (`-j`); its workers may be twice as many, the others
    /// committing files (``TransferSlots``).
    private let slots: TransferSlots

    init(
        jobs: [FetchJob],
        options: FetchOptions,
        control: TransferControl,
        failFast: Bool,
        transfers: Int = 64,
        onResult: (@Sendable (Int, FetchResult) -> Void)?
    ) {
        self.jobs = jobs
        self.slots = TransferSlots(transfers)
        self.options = options
        self.control = control
        self.failFast = failFast
        self.onResult = onResult
        self.transport = Result { () throws(PinFetchError) in try TransportSettings(options) }
        var byPin: [Pin: [Int]] = [:]
        for index in jobs.indices { if let pin = jobs[index].pin { byPin[pin, default: []].append(index) } }
        let groups = byPin.values.filter { $0.count > 1 }.sorted { $0[0] < $1[0] }
        var groupOf: [Int?] = Array(repeating: nil, count: jobs.count)
        for (group, members) in groups.enumerated() { for index in members { groupOf[index] = group } }
        self.groups = groups
        self.groupOf = groupOf
        self.state = Mutex(
            State(
                pending: Array(jobs.indices),
                firstUnfinished: Array(repeating: 0, count: groups.count),
                results: Array(repeating: nil, count: jobs.count),
                running: 0
            )
        )
        self.origins = jobs.map { job in (try? job.urls.get())?.first?.origin }
        self.claims = DestinationClaims(jobs.filter { $0.namingDirectory == nil }.map(\.destination))
        self.engine =
            jobs.isEmpty
            ? .failure(PinFetchError(.generic, "internal: no transfer engine for an empty batch"))
            : Result { () throws(PinFetchError) in
                try TransferEngine(
                    maximumConnectionsPerHost: options.maximumConnectionsPerHost,
                    defersRelease: failFast
                )
            }
    }

    func start(workers: Int, done: @escaping @Sendable ([FetchResult]) -> Void) {
        guard !self.jobs.isEmpty else { return done([]) }
        self.state.withLock {
            $0.done = done
            $0.running = workers
        }
        for _ in 0..<workers {
            Threads.detach(name: "pinfetch.fetch") { [self] in self.work() }
        }
    }

    private func work() {
        var easy: EasyHandle?
        while true {
            // The slot first: a job is chosen when its transfer can start, among the hosts'
            // transfers in flight then. Without one (a stop came), the job is reported skipped.
            let slot = self.slots.acquire(unless: { self.control.notStarting != nil })
            guard let (index, skip) = self.take() else {
                slot?.release()
                break
            }
            if let origin = self.origins[index] {
                let transferEnded: @Sendable () -> Void = { [self] in
                    self.state.withLock { $0.inFlight[origin, default: 1] -= 1 }
                }
                if let slot { slot.whenReleased(transferEnded) } else { transferEnded() }
            }
            let job = self.jobs[index]
            var result: FetchResult
            let stop: (PinFetchError.Code, String)? =
                self.control.isCancelled
                ? (.cancelled, "the run was interrupted") : skip.map { ($0, "an earlier file failed (fail-fast)") }
            if let (cause, reason) = stop {
                result = .skipped(job, cause: cause, reason: reason)
                // A file not taken still names the partial an earlier run left for it.
                if job.namingDirectory == nil { result.partial = .found(for: job.destination) }
            } else {
                let sibling = self.sibling(of: index)
                if sibling.waited, let stop = self.control.notStarting {
                    result = .skipped(job, cause: stop.cause, reason: stop.reason)
                    if job.namingDirectory == nil { result.partial = .found(for: job.destination) }
                } else if let slot {
                    result = self.fetch(job, easy: &easy, sibling: sibling.path, slot: slot)
                } else {
                    let stop = self.control.notStarting ?? (.cancelled, "the run was interrupted")
                    result = .skipped(job, cause: stop.cause, reason: stop.reason)
                    if job.namingDirectory == nil { result.partial = .found(for: job.destination) }
                }
            }
            // After the result is out: a failure stops the next file from starting (fail-fast)
            // before this slot can be taken. A placed file gave its slot up when it committed.
            self.finish(index, result)
            slot?.release()
            easy?.acknowledge()  // after a failure's stop (fail-fast): its connection goes to no new file
        }
        easy = nil  // freed before the engine stops
        let results: [FetchResult]? = self.state.withLock { state in
            state.running -= 1
            guard state.running == 0 else { return nil }
            return state.results.map { $0! }
        }
        guard let results else { return }
        try? self.engine.get().stop()
        self.state.withLock { $0.done }?(results)
    }

    /// For a pinned entry, the file of an earlier entry pinned the same that was verified, so
    /// this one is a copy of it rather than a second download of the same bytes: waits while an
    /// earlier one still runs (if the first fails, the next one that downloads is waited for).
    /// `nil` when none was verified (this entry is downloaded). `waited` says whether there were
    /// earlier ones (a stop may have come meanwhile).
    private func sibling(of index: Int) -> (path: String?, waited: Bool) {
        let job = self.jobs[index]
        guard let group = self.groupOf[index], self.groups[group][0] < index else { return (nil, false) }
        let earlier = self.groups[group].prefix { $0 < index }
        while true {
            let seen = self.endedCount.load(ordering: .acquiring)
            let (verified, running): (String?, Bool) = self.state.withLock { state in
                for member in earlier {
                    guard let ended = state.results[member], ended.error == nil, ended.path != job.destination,
                        ended.status != .skipped, ended.status != .failed
                    else { continue }
                    return (ended.path, false)
                }
                let first = state.firstUnfinished[group]
                return (nil, first < self.groups[group].count && self.groups[group][first] < index)
            }
            guard verified == nil, running else { return (verified, true) }
            if self.control.isCancelled || self.control.notStarting != nil { return (nil, true) }
            // Until another file ends (an interrupt or a fail-fast stop is seen within 0.1 s).
            self.ended.lock()
            while self.endedCount.load(ordering: .acquiring) == seen, self.control.notStarting == nil {
                self.ended.wait(seconds: 0.1)
            }
            self.ended.unlock()
        }
    }

    private func fetch(_ job: FetchJob, easy: inout EasyHandle?, sibling: String?, slot: TransferSlot) -> FetchResult {
        do throws(PinFetchError) {
            if easy == nil { easy = try EasyHandle(engine: try self.engine.get()) }
            let handle = easy!
            let download = try Download(
                job,
                options: self.options,
                control: self.control,
                easy: handle,
                transport: try self.transport.get(),
                claims: self.claims,
                sibling: sibling,
                slot: slot
            )
            return download.execute()
        } catch {
            return .failed(
                url: job.shownURL,
                path: job.destination,
                algorithm: job.pin?.algorithm ?? .sha256,
                error: error
            )
        }
    }

    /// Ends every transfer of the batch at once, and those its workers start later.
    func cancelTransfers() {
        try? self.engine.get().cancelAll()
    }

    /// The next job index, and the code of the failure to skip it for (fail-fast) or `nil`;
    /// `nil` when none is left.
    private func take() -> (Int, PinFetchError.Code?)? {
        self.state.withLock { state in
            guard !state.pending.isEmpty else { return nil }
            // The first pending job unless one a little further would not wait (see the type's
            // comment); the first one's earlier entries are all taken, so it never waits for
            // one no worker has.
            var position = 0
            for (offset, index) in state.pending.prefix(Self.lookahead).enumerated() {
                if self.waitsForEarlier(index, state) { continue }
                if let origin = self.origins[index], self.isBusy(origin, state) { continue }
                position = offset
                break
            }
            let index = state.pending.remove(at: position)
            if let origin = self.origins[index] { state.inFlight[origin, default: 0] += 1 }
            return (index, self.failFast ? state.firstFailure : nil)
        }
    }

    /// Whether an earlier entry pinned like job `index` has not finished: taken now, the job's
    /// worker would wait for it (``sibling(of:)``).
    private func waitsForEarlier(_ index: Int, _ state: State) -> Bool {
        guard let group = self.groupOf[index] else { return false }
        let first = state.firstUnfinished[group]
        return first < self.groups[group].count && self.groups[group][first] < index
    }

    /// Whether a file for `origin` would be held by the engine now: as many are in flight as
    /// `--max-connections-per-host` allows, and the origin is not known to multiplex.
    private func isBusy(_ origin: String, _ state: State) -> Bool {
        guard state.inFlight[origin, default: 0] >= self.options.maximumConnectionsPerHost else { return false }
        return (try? self.engine.get().multiplexes(origin)) != true
    }

    private func finish(_ index: Int, _ result: FetchResult) {
        // First: a copy of this file (an entry pinned the same) starts only after its result is
        // out, as it did when one worker ran the files one after the other.
        self.onResult?(index, result)
        let firstFailure: PinFetchError.Code? = self.state.withLock { state in
            state.results[index] = result
            if let group = self.groupOf[index] {
                let members = self.groups[group]
                while state.firstUnfinished[group] < members.count,
                    state.results[members[state.firstUnfinished[group]]] != nil
                {
                    state.firstUnfinished[group] += 1
                }
            }
            guard let error = result.error, state.firstFailure == nil else { return nil }
            state.firstFailure = error.code
            return error.code
        }
        self.ended.lock()
        self.endedCount.add(1, ordering: .releasing)
        self.ended.broadcast()
        self.ended.unlock()
        if self.failFast, let firstFailure, result.status != .skipped {
            // Files waiting for a connection to their host have not started either.
            self.control.stopStarting(after: firstFailure)
            try? self.engine.get().dropUnstarted()
        }
    }
}
