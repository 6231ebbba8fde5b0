import FoundationEssentials
@preconcurrency import Glibc
import Synchronization

extension Download {
    /// A ``SegmentedFetch`` for the answer whose body begins now at `state.offset`, with its
    /// helpers started, or `nil` when this answer is fetched over one stream: `--segments 1`, a
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
        guard self.options.segments > 1, !self.segmentsStopped, let partial = self.partial,
            (head.status == 200 && offset == 0) || (head.status == 206 && offset > 0), acceptsRanges,
            let length = totalLength, length > offset, let ifRange = head.validator.ifRangeValue,
            !head.hasContentCoding
        else { return nil }
        // `auto` cuts only what is worth several connections (issue 14: 64 MiB).
        if self.options.segmentsAutomatic, length - offset < 64 << 20 { return nil }
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
        let fetch = SegmentedFetch(
            plan: plan,
            leadPiece: leadPiece,
            startsAt: startsAt,
            keptBytes: kept.reduce(0) { $0 + Int64($1.count) },
            validator: head.validator,
            ifRange: ifRange,
            assembler: assembler
        )
        let helpers = min(self.options.segments, open) - 1
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
                    while fetch.mayGoOn(fetcher), let piece = fetch.claimNext(for: fetcher) {
                        guard download.fetchPiece(fetch, fetch.remaining(of: piece), on: easy) else { break }
                        fetch.markWritten(piece)
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
        let own = fetch.range(of: leadPiece)
        if self.state.offset < own.upperBound, fetch.stop == nil {
            if self.fetchPiece(fetch, self.state.offset..<own.upperBound, on: nil) { fetch.markWritten(leadPiece) }
        }
        while let piece = fetch.claimNext(for: 0) {
            guard self.fetchPiece(fetch, fetch.remaining(of: piece), on: nil) else { break }
            fetch.markWritten(piece)
        }
        fetch.waitForHelpers()
        let prefix = fetch.assembler.hashedPrefix
        self.downloadedBytes += fetch.helperBytes.load(ordering: .relaxed)
        self.rehashedBytes += fetch.assembler.rehashedBytes
        self.state.offset = prefix
        if fetch.isComplete, prefix == fetch.length {
            self.writtenAhead = nil
            self.state.resumedFrom += fetch.keptBytes  // earlier data in the final file (`resumed_from`)
            return TransferOutcome(code: 0, message: "", category: .ok)
        }
        if self.control.isCancelled || fetch.localFailure != nil {
            // Kept for a later run: the checkpoint taken on the way out lists these spans.
            let spans = fetch.assembler.written(beyond: prefix)
            self.writtenAhead = spans.isEmpty ? nil : WrittenSpans(spans)
            if let failure = fetch.localFailure { throw failure }
            return TransferOutcome(code: 0, message: "cancelled", category: .aborted)
        }
        self.segmentsStopped = true
        self.writtenAhead = nil
        try self.partial?.truncate(to: prefix)  // one stream goes on from the prefix
        switch fetch.stop {
        case .representationChanged(let reason):
            self.segmentRestart = reason
            return TransferOutcome(code: 0, message: reason, category: .protocolViolation)
        case .failed(let reason):
            self.decide("segments stopped at byte \(prefix): \(reason); going on over one stream")
            return TransferOutcome(code: 0, message: reason, category: .network)
        case nil:
            return lead.category == .ok
                ? TransferOutcome(code: 0, message: "segments ended early", category: .network) : lead
        }
    }

    /// Fetches `range` (within one piece) for `fetch` with ranged GETs, a few attempts, each from
    /// where the last one stopped. `helper` is the easy handle of a helper thread, `nil` for the
    /// download's own. Returns `true` once every byte of `range` is written and delivered; on
    /// `false` the phase was stopped (by this fetcher or another).
    func fetchPiece(_ fetch: SegmentedFetch, _ range: Range<Int64>, on helper: EasyHandle?) -> Bool {
        guard let partial = self.partial else { return false }
        var start = range.lowerBound
        var last = ""
        for _ in 0..<SegmentedFetch.attemptsPerPiece {
            if fetch.stop != nil || self.control.isCancelled { return false }
            let reader = PieceReader(fetch: fetch, partial: partial, wanted: start..<range.upperBound) {
                [control = self.control] in fetch.stop != nil || control.isCancelled
            }
            let headers =
                [
                    "Accept-Encoding: identity", "Range: bytes=\(start)-\(range.upperBound - 1)",
                    "If-Range: \(fetch.ifRange)",
                ]
                + self.options.headers
            let outcome: TransferOutcome
            do throws(PinFetchError) {
                outcome = try self.perform(.get, headers: headers, delegate: reader, on: helper)
            } catch {
                fetch.stop(.failed(error.message))
                return false
            }
            start = reader.position
            if let failure = reader.localFailure {
                fetch.fail(failure)
                return false
            }
            if let refusal = reader.refusal {
                fetch.stop(refusal)
                return false
            }
            if start == range.upperBound { return true }
            last = outcome.message.isEmpty ? "the answer ended at byte \(start)" : outcome.message
        }
        fetch.stop(.failed("bytes \(range.lowerBound)-\(range.upperBound - 1): \(last)"))
        return false
    }
}
