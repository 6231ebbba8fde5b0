import FoundationEssentials
@preconcurrency import Glibc
import Synchronization

extension Download {
    /// A ``SegmentedFetch`` for the answer whose body begins now at `state.offset`, with its
    /// helpers started, or `nil` when this answer is fetched over one stream: `--segments 1`
    /// (unless a resumed partial holds pieces ahead: they are kept, one piece after another), a
    /// segmented phase of this run stopped already, a content coding, no strong validator for
    /// `If-Range`, no complete length, or not more than one piece left; and, for a `200` from
    /// byte 0, no `Accept-Ranges: bytes` (a `206` shows ranges work). Pieces that a resumed
    /// partial holds whole (``writtenAhead``) are kept, and read back when the hash reaches them.
    func segmentation(
        for head: ResponseHead,
        totalLength: Int64?,
        pipeline: HashingPipeline,
        writer: CheckpointWriter?
    ) -> SegmentedFetch? {
        let pieceSize = max(1, self.options.segmentPieceSize)
        let offset = self.state.offset
        let acceptsRanges =
            head.status == 206
            || head.values("accept-ranges").contains(where: { $0.lowercased().contains("bytes") })
        // One connection too goes piece by piece when an earlier run left pieces ahead: they are
        // kept, not fetched again.
        let keepsPieces = head.status == 206 && self.writtenAhead != nil
        guard self.options.segments > 1 || keepsPieces, !self.segmentsStopped, let partial = self.partial,
            (head.status == 200 && offset == 0) || (head.status == 206 && offset > 0), acceptsRanges,
            let length = totalLength, length > offset, let ifRange = head.validator.ifRangeValue,
            !head.hasContentCoding
        else { return nil }
        // `auto` cuts only what is worth several connections (issue 14: 64 MiB).
        if self.options.segmentsAutomatic, length - offset < 64 << 20, !keepsPieces { return nil }
        var plan = SegmentPlan(length: length, pieceSize: pieceSize, writtenUpTo: offset)
        let leadPiece = plan.piece(at: offset)
        // What the partial holds of the pieces after the lead's (from their start): kept, read
        // back when the hash reaches it; a piece held whole is not asked for again, one held in
        // part is asked for from where it stops.
        var kept: [Range<Int64>] = []
        var startsAt: [Int: Int64] = [:]
        if let ahead = self.writtenAhead {
            for index in (leadPiece + 1)..<plan.pieces.count {
                let range = plan.range(of: index)
                guard let span = ahead.ranges.first(where: { $0.contains(range.lowerBound) }) else { continue }
                let held = range.lowerBound..<min(range.upperBound, span.upperBound)
                kept.append(held)
                if held.upperBound == range.upperBound {
                    plan.markWritten(index)
                } else {
                    startsAt[index] = held.upperBound
                }
            }
        }
        let open = plan.pieces.filter { $0 == .open }.count
        guard open > 1 || !kept.isEmpty else { return nil }
        _ = plan.claim(leadPiece, for: 0)
        let assembler = SegmentAssembler(
            pipeline: pipeline,
            partial: partial,
            prefix: offset,
            memoryBound: self.options.segmentMemoryBound,
            onDisk: kept
        )
        writer?.recordSpans { assembler.written(beyond: $0) }
        // A pinned file takes pieces from every listed mirror not excluded (the pin decides,
        // issue 14); the partial then holds bytes of several, and only a pinned run resumes it.
        var mirrors = [self.mirrorIndex]
        if self.pin != nil, self.piecesFromOtherMirrors {
            mirrors += self.mirrors.indices.filter { $0 != self.mirrorIndex && !self.excludedMirrors.contains($0) }
        }
        if mirrors.count > 1 {
            writer?.markMixedSources()
            self.state.mixedSources = true
        }
        let fetch = SegmentedFetch(
            plan: plan,
            leadPiece: leadPiece,
            leadStart: offset,
            startsAt: startsAt,
            keptBytes: kept.reduce(0) { $0 + Int64($1.count) },
            validator: head.validator,
            ifRange: ifRange,
            assembler: assembler,
            mirrors: mirrors
        )
        // A server that refused pieces earlier in this run (429, 503) gets no more than it took.
        let helpers = min(min(self.options.segments, open) - 1, self.segmentHelperCeiling ?? .max)
        if !kept.isEmpty { self.decide("\(kept.count) pieces kept from an earlier run") }
        // Helpers only read what the download does not change during the phase (its mirror,
        // options and transport) and call `perform` with their own handle.
        nonisolated(unsafe) let download = self
        let engine = self.easy.engine
        fetch.prepareHelpers {
            download.decide(
                "fetching bytes \(offset)-\(length - 1) over up to \(helpers + 1) connections, in pieces of "
                    + "\(pieceSize) bytes, doubling them while the rate keeps up"
            )
            fetch.ramp(maximum: helpers, note: { download.decide($0) }) { fetcher in
                guard let easy = try? EasyHandle(engine: engine) else { return }
                fetch.startHelper {
                    fetch.runHelper(fetcher, stops: { download.control.isCancelled || download.pastDeadline }) {
                        claim in
                        switch download.fetchPiece(fetch, claim, by: fetcher, on: easy) {
                        case .written, .handedOver: return true
                        case .stopped: return false
                        case .mirrorFailed(let reason, let mirror):
                            download.decide("\(download.mirrors[mirror].redacted): \(reason); asked no more")
                            fetch.dropMirror(mirror, claim: claim, because: reason)
                            return true
                        case .refused(let reason, let retryAfter):
                            download.decide("\(reason): one connection fewer")
                            return fetch.backOff(
                                fetcher: fetcher,
                                claim: claim,
                                reason: reason,
                                retryAfter: retryAfter
                            )
                        }
                    }
                }
            }
        }
        return fetch
    }

    /// Ends the segmented phase once the lead's GET returned: this thread fetches pieces too
    /// (first the rest of the lead's own piece, if its stream broke off), then waits for the
    /// helpers. Afterwards `state.offset` is the hashed prefix. Cancelled, or stopped by a local
    /// failure, the spans past it are kept (``writtenAhead``: the checkpoint taken on the way out
    /// lists them); stopped by a piece's answer, they are cut off and a retry goes on from the
    /// prefix over one stream (or from byte 0, for another representation). Returns the outcome
    /// to judge the answer by: success once every piece is in, else the reason it stopped.
    /// - Throws: a local failure (disk) of any fetcher.
    func finishSegments(
        _ fetch: SegmentedFetch,
        leadPiece: Int,
        lead: TransferOutcome
    ) throws(PinFetchError) -> TransferOutcome {
        fetch.startHelpers()  // if the lead did not: what is left goes faster over more connections
        // The lead's piece, unless it is whole or its stream stopped behind the stream that
        // raced it (which brings the rest).
        let stops = { [self] in self.control.isCancelled || self.pastDeadline }
        var claim: SegmentedFetch.Claim? =
            fetch.isWritten(leadPiece) || fetch.isRaced(leadPiece)
            ? fetch.claimNext(for: 0, stops: stops) : .init(piece: leadPiece, isRace: false)
        while let next = claim {
            switch self.fetchPiece(fetch, next, by: 0, on: nil) {
            case .written, .handedOver: claim = fetch.claimNext(for: 0, stops: stops)
            case .stopped, .mirrorFailed: claim = nil  // fetcher 0 asks the lead's mirror
            case .refused(let reason, let retryAfter):
                guard fetch.backOff(fetcher: 0, claim: next, reason: reason, retryAfter: retryAfter) else {
                    claim = nil
                    break
                }
                // Within --max-time: past it the phase ends, and the download says so.
                let wait = min(retryAfter ?? 1, self.options.maximumRetryDelay, max(0, self.remainingTime ?? .infinity))
                self.decide("\(reason): one connection fewer; this one waits \(wait) s")
                self.sleep(seconds: wait)
                claim = self.pastDeadline ? nil : fetch.claimNext(for: 0, stops: stops)
            }
        }
        fetch.waitForHelpers()
        if fetch.backedOff { self.segmentHelperCeiling = fetch.helpersAllowed }
        for (mirror, outcome) in fetch.otherMirrorOutcomes.sorted(by: { $0.key < $1.key }) {
            self.note(mirror, outcome == "ok" ? "ok" : "failed")
            if outcome == "ok" { self.piecesFrom = .severalMirrors }
        }
        // Bytes of several answers: a mismatch then asks for the file over one stream (DESIGN.md,
        // "Finalize": one clean download decides).
        if fetch.helperBytes.load(ordering: .relaxed) > 0 {
            self.state.spliced = true
            if self.piecesFrom == nil { self.piecesFrom = .severalConnections }
        }
        let prefix = fetch.assembler.hashedPrefix
        self.downloadedBytes += fetch.helperBytes.load(ordering: .relaxed)
        self.rehashedBytes += fetch.assembler.rehashedBytes
        self.state.offset = prefix
        if fetch.isComplete, prefix == fetch.length {
            self.writtenAhead = nil
            self.state.resumedFrom += fetch.keptBytes  // earlier data in the final file (`resumed_from`)
            return TransferOutcome(code: 0, message: "", category: .ok)
        }
        if case .backedOff(let reason, let retryAfter) = fetch.stop, !self.control.isCancelled,
            fetch.localFailure == nil
        {
            // Every connection was refused: the pieces stay for the next attempt, which waits.
            let spans = fetch.assembler.written(beyond: prefix)
            self.writtenAhead = spans.isEmpty ? nil : WrittenSpans(spans)
            self.segmentsPaused = (reason, retryAfter)
            self.decide("segments paused at byte \(prefix): \(reason)")
            return TransferOutcome(code: 0, message: reason, category: .network)
        }
        if self.control.isCancelled || fetch.localFailure != nil || self.pastDeadline {
            // Kept for a later run: the checkpoint taken on the way out lists these spans.
            let spans = fetch.assembler.written(beyond: prefix)
            self.writtenAhead = spans.isEmpty ? nil : WrittenSpans(spans)
            if let failure = fetch.localFailure { throw failure }
            if !self.control.isCancelled {  // out of time: the download stops for --max-time
                return TransferOutcome(code: 0, message: "out of time", category: .network)
            }
            return TransferOutcome(code: 0, message: "cancelled", category: .aborted)
        }
        self.segmentsStopped = true
        self.writtenAhead = nil
        try self.partial?.truncate(to: prefix)  // one stream goes on from the prefix
        switch fetch.stop {
        case .representationChanged(let reason):
            self.segmentRestart = reason
            return TransferOutcome(code: 0, message: reason, category: .protocolViolation)
        case .failed(let reason), .backedOff(let reason, _):
            self.decide("segments stopped at byte \(prefix): \(reason); going on over one stream")
            return TransferOutcome(code: 0, message: reason, category: .network)
        case nil:
            return lead.category == .ok
                ? TransferOutcome(code: 0, message: "segments ended early", category: .network) : lead
        }
    }

    /// How a piece's fetch ended.
    enum PieceOutcome: Equatable {
        /// Every byte of the piece is written (by this stream or a racing one).
        case written
        /// Another stream of the piece (a race) is ahead and brings the rest.
        case handedOver
        /// The phase stopped (by this fetcher or another), or the run was cancelled.
        case stopped
        /// The server refused the piece (`429`, `503`), with its `Retry-After` in seconds.
        case refused(String, retryAfter: Double?)
        /// Another mirror than the lead's (`mirror`) gave no usable answer: it is asked no more.
        case mirrorFailed(String, mirror: Int)
    }

    /// Fetches what is left of `claim`'s piece for `fetch` with ranged GETs, a few attempts,
    /// each from the first byte no stream wrote, from `fetcher`'s mirror. `helper` is the easy
    /// handle of a helper thread, `nil` for the download's own. Another mirror than the lead's
    /// is asked without `If-Range` (its validator is not the lead's): the length and range must
    /// match, and the pin decides the bytes.
    func fetchPiece(
        _ fetch: SegmentedFetch,
        _ claim: SegmentedFetch.Claim,
        by fetcher: Int,
        on helper: EasyHandle?
    ) -> PieceOutcome {
        guard let partial = self.partial else { return .stopped }
        let mirror = fetch.mirror(for: fetcher)
        let other = mirror != fetch.mirrors[0]
        let first = fetch.remaining(of: claim.piece)
        defer { if claim.isRace { fetch.endRace(claim.piece) } }
        if claim.isRace {
            self.decide("bytes \(first.lowerBound)-\(first.upperBound - 1) lag behind; asked for again")
        }
        var last = ""
        for _ in 0..<SegmentedFetch.attemptsPerPiece {
            if fetch.stop != nil || self.control.isCancelled { return .stopped }
            let range = fetch.remaining(of: claim.piece)
            if range.isEmpty { return .written }  // a racing stream brought the rest
            let reader = PieceReader(
                fetch: fetch,
                partial: partial,
                piece: claim.piece,
                wanted: range,
                otherMirror: other
            ) { [control = self.control] in fetch.stop != nil || control.isCancelled }
            let headers =
                ["Accept-Encoding: identity", "Range: bytes=\(range.lowerBound)-\(range.upperBound - 1)"]
                + (other ? [] : ["If-Range: \(fetch.ifRange)"]) + self.options.headers
            let outcome: TransferOutcome
            do throws(PinFetchError) {
                outcome = try self.perform(.get, headers: headers, delegate: reader, on: helper, mirror: mirror)
            } catch {
                if other { return .mirrorFailed(error.message, mirror: mirror) }
                fetch.stop(.failed(error.message))
                return .stopped
            }
            if let failure = reader.localFailure {
                fetch.fail(failure)
                return .stopped
            }
            if reader.pieceIsWhole || fetch.isWritten(claim.piece) {
                if other { fetch.delivered(by: mirror) }
                return .written
            }
            if reader.lostRace {
                self.decide(
                    "bytes \(first.lowerBound)-\(first.upperBound - 1): another stream is ahead; this one stops"
                )
                return .handedOver
            }
            if let refusal = reader.refusal {
                if other, case .failed(let reason) = refusal { return .mirrorFailed(reason, mirror: mirror) }
                fetch.stop(refusal)
                return .stopped
            }
            if let refused = reader.refusedWith {
                return .refused(
                    "the server answered a piece with HTTP \(refused.status)",
                    retryAfter: refused.retryAfter
                )
            }
            last =
                outcome.message.isEmpty || outcome.category == .ok
                ? "the answer ended at byte \(reader.position)" : outcome.message
        }
        let reason = "bytes \(first.lowerBound)-\(first.upperBound - 1): \(last)"
        if other { return .mirrorFailed(reason, mirror: mirror) }
        fetch.stop(.failed(reason))
        return .stopped
    }
}
