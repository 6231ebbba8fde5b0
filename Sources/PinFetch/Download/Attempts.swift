import FoundationEssentials
@preconcurrency import Glibc

extension Download {
    /// How one GET ended, for the loop of attempts.
    enum AttemptResult {
        case complete
        case moreToFetch
        case finalize
        /// Start over from byte 0; `discard`: empty the partial now, its bytes are suspect.
        case startOver(String, discard: Bool = false)
        case failed(PinFetchError, retryable: Bool, retryAfter: Double?)
    }

    /// GETs until the partial holds the whole representation, with retries, back-off and mirrors.
    /// - Parameter excluded: Mirrors not to go to (they delivered other bytes than the pin).
    func download(excluding excluded: Set<Int> = []) throws(PinFetchError) {
        self.excludedMirrors = excluded
        var policy = RetryPolicy(options: self.options, mirrorCount: self.mirrors.count, excluding: excluded)
        while true {
            if !self.madeRequest, let stop = self.control.notStarting { throw self.notStarted(stop) }
            if self.control.isCancelled { try self.stopForCancellation() }
            if let remaining = self.remainingTime, remaining <= 0 { try self.stopForMaximumTime() }
            self.attempts += 1
            if !self.mirrorOutcomes.contains(where: { $0.index == self.mirrorIndex }) {
                self.note(self.mirrorIndex, "tried")
            }
            let before = self.state.offset
            let result: AttemptResult
            do {
                result = try self.attempt()
            } catch {
                // e.g. a full disk: cut back to the checkpoint; a file not started keeps all it had
                if self.notStartedBecause == nil { try self.keepForLaterRun(after: error) }
                throw error
            }
            switch result {
            case .complete, .finalize:
                return
            case .moreToFetch:
                continue
            case .startOver(let reason, let discard):
                guard self.restarts < self.maximumRestarts else {
                    try self.discardPartial()
                    throw PinFetchError(.protocolViolation, "gave up after \(self.restarts) restarts: \(reason)")
                }
                self.report(.restarted(path: self.destination, reason: reason))
                if discard {
                    try self.startOver()
                } else {
                    self.restarts += 1
                    self.restartPending = true  // the partial goes once an answer replaces it
                }
            case .failed(let error, let retryable, let retryAfter):
                self.note(self.mirrorIndex, error.code.description)
                if error.code == .cancelled { try self.stopForCancellation() }
                let retriesBefore = policy.retriesUsed
                guard
                    let next = policy.next(
                        after: error.code,
                        retryable: retryable,
                        retryAfter: retryAfter,
                        current: self.mirrorIndex,
                        madeProgress: self.state.offset > before
                    )
                else {
                    if self.pastDeadline { try self.stopForMaximumTime(after: error) }
                    try self.keepForLaterRun(after: error)
                    throw error
                }
                if let remaining = self.remainingTime, next.delay >= remaining {
                    try self.stopForMaximumTime(after: error)
                }
                self.report(
                    .retrying(
                        FetchRetry(
                            path: self.destination,
                            reason: error.message,
                            url: self.mirrors[next.mirror].redacted,
                            delaySeconds: next.delay,
                            retry: policy.retriesUsed > retriesBefore ? policy.retriesUsed : nil,
                            retries: self.options.retries,
                            mirror: next.mirror + 1,
                            mirrors: self.mirrors.count
                        )
                    )
                )
                if next.mirror != self.mirrorIndex {
                    try self.switchMirror(to: next.mirror)
                } else if self.state.resumable {
                    try self.saveCheckpoint()
                } else if self.state.offset > 0 {
                    try self.startOver()  // nothing ties these bytes to the next answer
                }
                if next.delay > 0 { self.control.wait(seconds: next.delay) }
            }
        }
    }

    /// Seconds left of ``FetchOptions/maximumTime`` for this file, or `nil` without a limit.
    var remainingTime: Double? {
        self.options.maximumTime.map { $0 - Date().timeIntervalSince(self.started) }
    }

    /// Whether ``FetchOptions/maximumTime`` has run out.
    var pastDeadline: Bool { self.remainingTime.map { $0 <= 0 } ?? false }

    /// The failure when ``FetchOptions/maximumTime`` ran out: a network failure (exit 4), naming
    /// the last failure that led to it (a `Retry-After` longer than the time left), if any.
    func maximumTimeError(after last: PinFetchError? = nil) -> PinFetchError {
        let seconds = self.options.maximumTime ?? 0
        let cause = last.map { "; last: \($0.message)" } ?? ""
        return PinFetchError(
            .network,
            "\(self.currentLabel): --max-time of \(Text.number(seconds)) s reached\(self.atByte)\(cause)"
        )
    }

    /// Ends the file when ``FetchOptions/maximumTime`` ran out, the partial kept for a later run.
    private func stopForMaximumTime(after last: PinFetchError? = nil) throws(PinFetchError) -> Never {
        let error = self.maximumTimeError(after: last)
        try self.keepForLaterRun(after: error)
        throw error
    }

    /// ` (at byte N)` when bytes of this file are on disk, else nothing: an offset of 0 says nothing.
    var atByte: String { self.state.offset > 0 ? " (at byte \(self.state.offset))" : "" }

    /// Moves to mirror `index`. With a pin, a partial is resumed there with a plain `Range`, the
    /// pin deciding at the end; without one the next mirror is asked from byte 0 (DESIGN.md,
    /// "Mirrors"), but a resumable partial stays on disk, checkpointed for its own mirror, until
    /// an answer replaces it: a mirror that fails before answering costs none of its bytes.
    private func switchMirror(to index: Int) throws(PinFetchError) {
        if self.state.offset > 0 {
            if self.state.resumable { try self.saveCheckpoint() }
            if self.pin != nil {
                self.state.crossMirror = true
            } else if !self.state.resumable {
                try self.startOver()  // nothing ties these bytes to any answer
            }
        }
        self.mirrorIndex = index
        self.decide("mirror \(index + 1) of \(self.mirrors.count): \(self.mirrors[index].redacted)")
    }

    /// One GET: from the partial's offset (`Range`, with `If-Range` on the same mirror), its
    /// answer decided by ``AnswerDecision`` and streamed by an ``AnswerReader``.
    private func attempt() throws(PinFetchError) -> AttemptResult {
        var headers = ["Accept-Encoding: identity"]
        let offset = self.state.offset
        var context = AnswerContext(pinned: self.pin != nil)
        // Without a pin, a partial belongs to the mirror that served it: another mirror is asked
        // from byte 0, and its answer replaces the partial.
        let foreign =
            offset > 0 && self.pin == nil
            && self.state.source.map { $0 != self.mirrors[self.mirrorIndex].text } ?? false
        if offset > 0, foreign {
            let from = self.state.source.map { Redaction.url($0) } ?? "another mirror"
            self.decide("the partial came from \(from): asking from byte 0")
        } else if offset > 0, self.restartPending {
            // Asked again from byte 0: an answer for the same representation (same strong
            // validator) must still have its known length, or the server is sending a slice.
            if self.state.validator?.ifRangeValue != nil, !self.state.crossMirror {
                context.validator = self.state.validator
                context.totalLength = self.state.totalLength
            }
        } else if offset > 0, self.state.crossMirror {
            self.decide(
                "resuming at byte \(offset) on mirror \(self.mirrorIndex + 1) with a plain Range: the pin decides"
            )
            headers += ["Range: bytes=\(offset)-"]  // another mirror's validator means nothing here
            context.requestedOffset = offset
            context.totalLength = self.state.totalLength
        } else if offset > 0, self.state.resumable, let ifRange = self.state.validator?.ifRangeValue {
            self.decide("resuming at byte \(offset) with If-Range \(ifRange)")
            headers += ["Range: bytes=\(offset)-", "If-Range: \(ifRange)"]
            context.requestedOffset = offset
            context.validator = self.state.validator
            context.totalLength = self.state.totalLength
        } else if offset > 0 {
            // Without any validator only a pin makes a resume safe: plain Range, the pin decides.
            guard self.state.resumable, self.pin != nil, self.state.validator?.isAbsent ?? false else {
                return .startOver("no strong validator to resume with")
            }
            self.decide("resuming at byte \(offset) without a validator: the pin decides")
            headers += ["Range: bytes=\(offset)-"]
            context.requestedOffset = offset
            context.totalLength = self.state.totalLength
            context.unvalidatedPartial = true
        } else if let expected = self.expectedAgain {
            context.validator = expected.validator
            context.totalLength = expected.totalLength
        }
        headers += self.options.headers
        let reader = AnswerReader(download: self, context: context)
        var outcome = try self.request(.get, headers: headers, delegate: reader)
        if let segments = reader.segments {
            do throws(PinFetchError) {
                outcome = try self.finishSegments(segments, leadPiece: reader.leadPiece, lead: outcome)
            } catch {
                _ = reader.finishBody()
                throw error
            }
            if let reason = self.segmentRestart {
                self.segmentRestart = nil
                _ = reader.finishBody()
                return .startOver(reason, discard: true)
            }
            if let paused = self.segmentsPaused {
                self.segmentsPaused = nil
                try self.settle(reader, outcome)
                let error = PinFetchError(.serverResponse, "\(self.currentLabel): \(paused.reason)\(self.atByte)")
                return .failed(error, retryable: true, retryAfter: paused.retryAfter)
            }
        }
        try self.settle(reader, outcome)
        if outcome.category == .protocolViolation, outcome.reusedConnection, !reader.hasDeliveredHead {
            // A stray byte left on a kept-alive connection (a body after a HEAD answer, say) broke
            // this answer, not the server: ask once more on a fresh connection.
            let again = AnswerReader(download: self, context: context)
            outcome = try self.request(.get, headers: headers, delegate: again, freshConnection: true)
            try self.settle(again, outcome)
            return self.result(of: again, outcome: outcome, requestedOffset: offset)
        }
        return self.result(of: reader, outcome: outcome, requestedOffset: offset)
    }

    /// Ends an answer's body: an empty representation replaces the partial, the hashing pipeline
    /// is drained, and a provisional range body that fell short is cut off again.
    /// - Throws: a local failure (disk, checkpoint) that ends the run.
    private func settle(_ reader: AnswerReader, _ outcome: TransferOutcome) throws(PinFetchError) {
        if outcome.category == .ok, reader.replacesWithEmptyBody { try reader.beginReplacement() }
        if let failure = reader.finishBody() ?? reader.localFailure { throw failure }
        if let point = reader.rollback, reader.isIncompleteProvisional { try self.rollBack(to: point) }
    }

    private func result(of reader: AnswerReader, outcome: TransferOutcome, requestedOffset: Int64) -> AttemptResult {
        switch reader.decision {
        case .replaceExpecting(let length):
            guard outcome.category == .ok else { return self.failure(from: outcome) }
            if reader.received < length {
                let verdict = AnswerDecision.decideShortBody(length: length, received: reader.received, reader.context)
                guard case .restart(let reason) = verdict else { return self.result(of: verdict, reader: reader) }
                if let validator = reader.context.validator {
                    self.expectedAgain = (validator, length)  // the same slice again is a protocol error
                }
                return .startOver(reason, discard: reader.hasReplaced)  // the bytes it wrote were a slice
            }
            self.expectedAgain = nil
            return .complete
        case .append(_, let end, _), .replace(let end, _):
            guard outcome.category == .ok else { return self.failure(from: outcome) }
            self.expectedAgain = nil
            if let end, self.state.offset < end {
                return .failed(
                    PinFetchError(.network, "\(self.currentLabel): body ended at byte \(self.state.offset) of \(end)"),
                    retryable: true,
                    retryAfter: nil
                )
            }
            if let total = self.state.totalLength, self.state.offset < total {
                // A 206 that covered less than asked: ask for the rest if it brought anything.
                guard self.state.offset > requestedOffset else {
                    return .failed(
                        PinFetchError(
                            .protocolViolation,
                            "\(self.currentLabel): empty range answer at byte \(self.state.offset)"
                        ),
                        retryable: true,
                        retryAfter: nil
                    )
                }
                return .moreToFetch
            }
            return .complete
        case .finalize:
            return .finalize
        case .restart, .retry, .fail:
            return self.result(of: reader.decision!, reader: reader)
        case nil:
            guard outcome.category == .ok else { return self.failure(from: outcome) }
            return .failed(
                PinFetchError(.protocolViolation, "\(self.currentLabel): no usable answer"),
                retryable: true,
                retryAfter: nil
            )
        }
    }

    /// The attempt's result for a decision that writes nothing: a restart, a retry or a failure.
    private func result(of decision: AnswerDecision, reader: AnswerReader) -> AttemptResult {
        let status = reader.head?.status
        switch decision {
        case .restart(let reason):
            return .startOver(reason, discard: reader.wroteSuspectBytes)
        case .retry(let code, let reason, let retryAfter):
            let error = PinFetchError(code, "\(self.currentLabel): \(reason)", underlying: status)
            return .failed(error, retryable: true, retryAfter: retryAfter)
        case .fail(let code, let reason):
            let error = PinFetchError(code, "\(self.currentLabel): \(reason)", underlying: status)
            return .failed(error, retryable: false, retryAfter: nil)
        case .append, .replace, .replaceExpecting, .finalize:
            return .failed(
                PinFetchError(.generic, "internal: \(decision) is not a failure"),
                retryable: false,
                retryAfter: nil
            )
        }
    }

    /// The attempt's failure for a transfer that did not end well: its kind, and whether
    /// another attempt may help (network trouble may pass; a bad certificate will not).
    private func failure(from outcome: TransferOutcome) -> AttemptResult {
        if outcome.category == .aborted, self.control.isCancelled {
            let error = PinFetchError(.cancelled, "\(self.currentLabel): cancelled\(self.atByte)")
            return .failed(error, retryable: false, retryAfter: nil)
        }
        let code = outcome.failureCode
        let message = "\(self.currentLabel): \(outcome.message)\(self.atByte)"
        return .failed(
            PinFetchError(code, message, underlying: outcome.code),
            retryable: code == .network,
            retryAfter: nil
        )
    }

    /// Ends a segmented phase and takes in what it reports: the outcome to judge the answer by.
    /// - Throws: a local failure (disk) of any fetcher.
    private func finishSegments(
        _ fetch: SegmentedFetch,
        leadPiece: Int,
        lead: TransferOutcome
    ) throws(PinFetchError) -> TransferOutcome {
        guard let partial = self.partial else { throw PinFetchError(.generic, "internal: segments without a partial") }
        let end = try self.segmentation.finish(fetch, leadPiece: leadPiece, partial: partial, on: self.easy)
        if let ceiling = end.helperCeiling { self.segmentHelperCeiling = ceiling }
        for (mirror, outcome) in end.otherMirrors {
            self.note(mirror, outcome)
            if outcome == "ok" { self.piecesFrom = .severalMirrors }
        }
        // Bytes of several answers: a mismatch then asks for the file over one stream (one clean
        // download decides).
        if end.helperBytes > 0 {
            self.state.spliced = true
            if self.piecesFrom == nil { self.piecesFrom = .severalConnections }
        }
        self.downloadedBytes += end.helperBytes
        self.rehashedBytes += end.rehashedBytes
        self.state.offset = end.prefix
        self.writtenAhead = end.writtenAhead
        switch end.reason {
        case .complete:
            self.state.resumedFrom += end.keptBytes  // earlier data in the final file (`resumed_from`)
            return TransferOutcome(code: 0, message: "", category: .ok)
        case .paused(let reason, let retryAfter):
            self.segmentsPaused = (reason, retryAfter)
            return TransferOutcome(code: 0, message: reason, category: .network)
        case .outOfTime:
            return TransferOutcome(code: 0, message: "out of time", category: .network)
        case .cancelled:
            return TransferOutcome(code: 0, message: "cancelled", category: .aborted)
        case .localFailure(let error):
            throw error
        case .representationChanged(let reason):
            self.segmentsStopped = true
            self.segmentRestart = reason
            return TransferOutcome(code: 0, message: reason, category: .protocolViolation)
        case .stopped(let reason):
            self.segmentsStopped = true
            return TransferOutcome(code: 0, message: reason, category: .network)
        case .endedEarly:
            self.segmentsStopped = true
            return lead.category == .ok
                ? TransferOutcome(code: 0, message: "segments ended early", category: .network) : lead
        }
    }
}
