import FoundationEssentials

extension MirrorSource {
    /// GETs until the partial holds the whole representation, with retries, back-off and mirrors
    /// (``RetryPolicy``): each GET is an ``Attempt``, and the loop acts on its verdict.
    /// - Parameter excluded: Mirrors not to go to (they delivered other bytes than the pin).
    func download(excluding excluded: Set<Int> = []) throws(PinFetchError) {
        self.mirrors.excluded = excluded
        self.segmentPolicy.excludedMirrors = excluded
        var policy = RetryPolicy(options: self.options, mirrorCount: self.mirrors.count, excluding: excluded)
        while true {
            try self.requests.checkStarting()
            if self.control.isCancelled { try self.stopForCancellation() }
            if self.deadline.isPast { try self.stopForMaximumTime() }
            self.attempts += 1
            self.mirrors.noteTried()
            let before = self.partial.state.offset
            self.partial.mirror = self.mirrors.urls[self.mirrors.current].text
            let result: Attempt.Result
            do {
                result = try Attempt(
                    partial: self.partial,
                    requests: self.requests,
                    segmentation: self.segmentation,
                    meter: self.meter,
                    mirror: self.mirrors.current,
                    label: self.mirrors.label,
                    expected: self.expected,
                    refresh: self.refresh
                ).run()
            } catch {
                // e.g. a full disk: cut back to the checkpoint; a file not started keeps all it had
                if self.requests.notStartedBecause == nil { try self.partial.keepForLaterRun(after: error) }
                throw error
            }
            switch result.expectation {
            case .keep: break
            case .clear: self.expected = nil
            case .set(let expectation): self.expected = expectation
            }
            if let end = result.segments { self.takeIn(end) }
            switch result.verdict {
            case .complete:
                try self.partial.recordComplete()
                return
            case .finalize:
                return
            case .unchanged:
                self.unchanged = true
                return
            case .moreToFetch:
                continue
            case .startOver(let reason, let discard):
                self.refresh = nil  // asked again without the condition
                guard self.partial.restarts < self.maximumRestarts else {
                    try self.partial.discard()
                    throw PinFetchError(
                        .protocolViolation,
                        "gave up after \(self.partial.restarts) restarts: \(reason)"
                    )
                }
                self.reporter.report(.restarted(path: self.destination, reason: reason))
                if discard {
                    try self.partial.startOver()
                } else {
                    self.partial.decideRestart()  // the partial goes once an answer replaces it
                }
            case .failed(let error, let retryable, let retryAfter):
                self.mirrors.note(self.mirrors.current, error.code.description)
                if error.code == .cancelled { try self.stopForCancellation() }
                let offset = self.partial.state.offset
                if !self.partial.restartPending,
                    RepeatedFailure.repeats(
                        self.partial.previousFailure,
                        error,
                        at: offset,
                        madeProgress: offset > before
                    )
                {
                    // Every run would fail the same way: the whole file instead (the partial
                    // stays until an answer replaces it).
                    self.partial.previousFailure = nil
                    self.reporter.report(
                        .restarted(
                            path: self.destination,
                            reason: "the last run ended the same way at byte \(offset) (\(error.message))"
                        )
                    )
                    self.partial.decideRestart()
                    continue
                }
                let retriesBefore = policy.retriesUsed
                guard
                    let next = policy.next(
                        after: error.code,
                        retryable: retryable,
                        retryAfter: retryAfter,
                        current: self.mirrors.current,
                        madeProgress: self.partial.state.offset > before
                    )
                else {
                    if self.deadline.isPast { try self.stopForMaximumTime(after: error) }
                    // The next run learns how the last request at this offset failed, when it
                    // brought nothing (``RepeatedFailure``).
                    if offset == before { self.partial.state.failure = RepeatedFailure.record(error, at: offset) }
                    try self.partial.keepForLaterRun(after: error)
                    throw error
                }
                if let remaining = self.deadline.remaining, next.delay >= remaining {
                    try self.stopForMaximumTime(after: error)
                }
                self.reporter.report(
                    .retrying(
                        FetchRetry(
                            path: self.destination,
                            reason: error.message,
                            url: self.mirrors.urls[next.mirror].redacted,
                            delaySeconds: next.delay,
                            retry: policy.retriesUsed > retriesBefore ? policy.retriesUsed : nil,
                            retries: self.options.retries,
                            mirror: next.mirror + 1,
                            mirrors: self.mirrors.count
                        )
                    )
                )
                if next.mirror != self.mirrors.current {
                    try self.switchMirror(to: next.mirror)
                } else if self.partial.state.resumable {
                    try self.partial.saveCheckpoint()
                } else if self.partial.state.offset > 0 {
                    try self.partial.startOver()  // nothing ties these bytes to the next answer
                }
                if next.delay > 0 { self.waitToRetry(seconds: next.delay) }
            }
        }
    }

    /// Waits `seconds` before the next attempt, reporting ``FetchProgress/Phase/waitingToRetry``
    /// each second, so a long `Retry-After` shows as a wait, not as a stall; returns early once
    /// the run is cancelled.
    private func waitToRetry(seconds: Double) {
        let end = ContinuousClock.now + .milliseconds(Int64(seconds * 1000))
        while !self.control.isCancelled {
            self.meter.report(self.partial, phase: .waitingToRetry)
            let left = end - ContinuousClock.now
            guard left > .zero else { return }
            let leftSeconds = Double(left.components.seconds) + Double(left.components.attoseconds) / 1e18
            self.control.wait(seconds: min(1, leftSeconds))
        }
    }

    /// What a segmented phase of the current answer may do, from this run's policy.
    var segmentation: Segmentation {
        Segmentation(
            requester: self.requester,
            engine: self.requests.easy.engine,
            mirror: self.mirrors.current,
            pinned: self.pin != nil,
            policy: self.segmentPolicy
        )
    }

    /// Takes in what a segmented phase reports about this run's later phases and the mirrors.
    private func takeIn(_ end: Segmentation.End) {
        if let ceiling = end.helperCeiling { self.segmentPolicy.helperCeiling = ceiling }
        for (mirror, outcome) in end.otherMirrors {
            self.mirrors.note(mirror, outcome)
            if outcome == "ok" {
                self.segmentPolicy.piecesFrom = .severalMirrors
                self.pieceMirrors.insert(mirror)
            }
        }
        if end.helperBytes > 0, self.segmentPolicy.piecesFrom == nil {
            self.segmentPolicy.piecesFrom = .severalConnections
        }
        switch end.reason {
        case .representationChanged, .stopped, .endedEarly: self.segmentPolicy.stopped = true
        case .complete, .paused, .outOfTime, .cancelled, .localFailure: break
        }
    }

    /// Moves to mirror `index`. With a pin, a partial is resumed there with a plain `Range`, the
    /// pin deciding at the end; without one the next mirror is asked from byte 0, but a
    /// resumable partial stays on disk, checkpointed for its own mirror, until an answer
    /// replaces it: a mirror that fails before answering costs none of its bytes.
    private func switchMirror(to index: Int) throws(PinFetchError) {
        if self.partial.state.offset > 0 {
            if self.partial.state.resumable { try self.partial.saveCheckpoint() }
            if self.pin != nil {
                self.partial.state.crossMirror = true
            } else if !self.partial.state.resumable {
                try self.partial.startOver()  // nothing ties these bytes to any answer
            }
        }
        self.mirrors.current = index
        self.reporter.decide("mirror \(index + 1) of \(self.mirrors.count): \(self.mirrors.urls[index].redacted)")
    }

    /// The failure when ``FetchOptions/maximumTime`` ran out: a network failure (exit 4), naming
    /// the last failure that led to it (a `Retry-After` longer than the time left), if any.
    func maximumTimeError(after last: PinFetchError? = nil) -> PinFetchError {
        let seconds = self.options.maximumTime ?? 0
        let at = AttemptVerdict.atByte(self.partial.state.offset)
        // The last attempt's message without what this one says already (its label, its byte).
        var lastMessage = last?.message ?? ""
        if lastMessage.hasPrefix(self.mirrors.label + ": ") { lastMessage.removeFirst(self.mirrors.label.count + 2) }
        if !at.isEmpty, lastMessage.hasSuffix(at) { lastMessage.removeLast(at.count) }
        let cause = lastMessage.isEmpty ? "" : "; last: \(lastMessage)"
        return PinFetchError(
            .network,
            "\(self.mirrors.label): --max-time of \(Text.number(seconds)) s reached\(at)\(cause)"
        )
    }

    /// Ends the file when ``FetchOptions/maximumTime`` ran out, the partial kept for a later run.
    private func stopForMaximumTime(after last: PinFetchError? = nil) throws(PinFetchError) -> Never {
        let error = self.maximumTimeError(after: last)
        try self.partial.keepForLaterRun(after: error)
        throw error
    }

    private func stopForCancellation() throws(PinFetchError) -> Never {
        let error = PinFetchError(
            .cancelled,
            "\(self.mirrors.label): cancelled at byte \(self.partial.state.offset)"
        )
        try self.partial.keepForLaterRun(after: error)
        throw error
    }
}
