/// One GET of a file: from the partial's offset (``AttemptPlan``), its answer read into the
/// partial by an ``AnswerReader`` (over several connections when the ``Segmentation`` cuts it),
/// and its ``AttemptVerdict``.
struct Attempt {
    /// What one attempt returns.
    struct Result {
        var verdict: AttemptVerdict
        var expectation: AttemptVerdict.ExpectationChange
        /// How a segmented phase ended, when the answer had one.
        var segments: Segmentation.End?
    }

    let partial: Partial
    let requests: FileRequests
    let segmentation: Segmentation
    let meter: ProgressMeter
    /// The mirror asked, by index, and as messages name it.
    let mirror: Int
    let label: String
    let expected: AttemptPlan.Expectation?
    /// The condition of an unpinned destination's refresh, if any (``ConditionalRefresh``).
    var refresh: ConditionalRefresh? = nil

    /// Sends the GET and judges its answer.
    /// - Throws: a local failure (disk, checkpoint) or a file not started, which end the run.
    func run() throws(PinFetchError) -> Result {
        let requester = self.requests.requester
        let plan = AttemptPlan.make(
            self.partial.state,
            mirror: requester.mirrors[self.mirror].text,
            mirrorNumber: self.mirror + 1,
            pinned: self.partial.pinned,
            restartPending: self.partial.restartPending,
            expected: self.expected,
            refresh: self.refresh,
            objectStore: requester.mirrors[self.mirror].s3 != nil
        )
        let planned: [String]
        let context: AnswerContext
        switch plan {
        case .startOver(let reason):
            return Result(verdict: .startOver(reason, discard: false), expectation: .keep)
        case .ask(let headers, let judgedBy, let note):
            (planned, context) = (headers, judgedBy)
            if let note { requester.reporter.decide(note) }
        }
        let headers = planned + requester.options.headers
        let requestedOffset = self.partial.state.offset
        let reader = self.reader(context)
        var outcome = try self.requests.send(.get, headers: headers, delegate: reader, mirror: self.mirror)
        var ending = AttemptVerdict.Ending.transfer(outcome)
        var segments: Segmentation.End?
        if let fetch = reader.segments, let file = self.partial.file {
            let end: Segmentation.End
            do throws(PinFetchError) {
                end = try self.segmentation.finish(
                    fetch,
                    leadPiece: reader.leadPiece,
                    partial: file,
                    on: self.requests.easy
                )
            } catch {
                _ = reader.finishBody()
                throw error
            }
            self.partial.takeIn(end)
            segments = end
            switch end.reason {
            case .localFailure(let error):
                _ = reader.finishBody()
                throw error
            case .representationChanged:
                // Start over from byte 0: what the body left goes with the partial.
                _ = reader.finishBody()
                let observed = self.observation(reader, .segments(end.reason, lead: outcome), requestedOffset)
                let (verdict, expectation) = AttemptVerdict.decide(observed)
                return Result(verdict: verdict, expectation: expectation, segments: end)
            default:
                ending = .segments(end.reason, lead: outcome)
            }
        }
        var answered = reader
        try self.settle(reader, outcome)
        if segments == nil, outcome.category == .protocolViolation, outcome.reusedConnection, !reader.hasDeliveredHead {
            // A stray byte left on a kept-alive connection (a body after a HEAD answer, say) broke
            // this answer, not the server: ask once more on a fresh connection.
            answered = self.reader(context)
            outcome = try self.requests.send(
                .get,
                headers: headers,
                delegate: answered,
                mirror: self.mirror,
                freshConnection: true
            )
            try self.settle(answered, outcome)
            ending = .transfer(outcome)
        }
        let (verdict, expectation) = AttemptVerdict.decide(self.observation(answered, ending, requestedOffset))
        return Result(verdict: verdict, expectation: expectation, segments: segments)
    }

    private func reader(_ context: AnswerContext) -> AnswerReader {
        AnswerReader(
            partial: self.partial,
            context: context,
            label: self.label,
            segmentation: self.segmentation,
            meter: self.meter,
            control: self.requests.requester.control
        )
    }

    private func observation(
        _ reader: AnswerReader,
        _ ending: AttemptVerdict.Ending,
        _ requestedOffset: Int64
    ) -> AttemptVerdict.Observation {
        AttemptVerdict.Observation(
            decision: reader.finalDecision,
            ending: ending,
            context: reader.context,
            requestedOffset: requestedOffset,
            offset: self.partial.state.offset,
            totalLength: self.partial.state.totalLength,
            received: reader.received,
            hasReplaced: reader.hasReplaced,
            wroteSuspectBytes: reader.wroteSuspectBytes,
            status: reader.head?.status,
            label: self.label,
            cancelled: self.requests.requester.control.isCancelled,
            proxyAuthentication: reader.head?.status == 407
                ? self.requests.requester.transport.proxyAuthenticationFailure(
                    for: reader.requestURL ?? self.requests.requester.mirrors[self.mirror].text
                ) : nil
        )
    }

    /// Ends an answer's body: an empty representation replaces the partial, the hashing pipeline
    /// is drained, and a provisional range body that fell short is cut off again.
    /// - Throws: a local failure (disk, checkpoint) that ends the run.
    private func settle(_ reader: AnswerReader, _ outcome: TransferOutcome) throws(PinFetchError) {
        if outcome.category == .ok, reader.replacesWithEmptyBody { try reader.beginReplacement() }
        if let failure = reader.finishBody() ?? reader.localFailure { throw failure }
        if let point = reader.rollback, reader.isIncompleteProvisional { try self.partial.rollBack(to: point) }
    }
}
