import FoundationEssentials
@preconcurrency import Glibc
import Synchronization

extension Download {
    /// A ``SegmentedFetch`` for the answer whose body begins now, with its helpers started, or
    /// `nil` when this answer is fetched over one stream: `--segments 1`, or not a `200` from
    /// byte 0 of a representation longer than one piece, with a strong validator for `If-Range`
    /// and `Accept-Ranges: bytes`, without a content coding.
    func segmentation(for head: ResponseHead, totalLength: Int64?, pipeline: HashingPipeline) -> SegmentedFetch? {
        let pieceSize = max(1, self.options.segmentPieceSize)
        guard self.options.segments > 1, !self.segmentsStopped, head.status == 200, self.state.offset == 0,
            let partial = self.partial,
            let length = totalLength, length > pieceSize, let ifRange = head.validator.ifRangeValue,
            !head.hasContentCoding,
            head.values("accept-ranges").contains(where: { $0.lowercased().contains("bytes") })
        else { return nil }
        let assembler = SegmentAssembler(pipeline: pipeline, partial: partial, prefix: 0)
        let fetch = SegmentedFetch(
            length: length,
            validator: head.validator,
            ifRange: ifRange,
            assembler: assembler,
            pieceSize: pieceSize
        )
        let helpers = min(self.options.segments, Int((length + pieceSize - 1) / pieceSize)) - 1
        self.decide("fetching \(length) bytes over \(helpers + 1) connections, in pieces of \(pieceSize) bytes")
        // Helpers only read what the download does not change during the phase (its mirror,
        // options and transport) and call `perform` with their own handle.
        nonisolated(unsafe) let download = self
        for fetcher in 1...max(1, helpers) where helpers > 0 {
            guard let easy = try? EasyHandle(engine: self.easy.engine) else { break }
            fetch.startHelper {
                while let piece = fetch.claimNext(for: fetcher) {
                    guard download.fetchPiece(fetch, fetch.range(of: piece), on: easy) else { break }
                    fetch.markWritten(piece)
                }
            }
        }
        return fetch
    }

    /// Ends the segmented phase once the lead's GET returned: this thread fetches pieces too
    /// (first the rest of the lead's own piece, if its stream broke off), then waits for the
    /// helpers. Afterwards `state.offset` is the hashed prefix; pieces beyond it are cut off
    /// again (this version keeps no record of them), so a retry resumes from the prefix over one
    /// stream. Returns the outcome to judge the answer by: the lead's, or success once every piece
    /// is in.
    /// - Throws: a local failure (disk) of any fetcher.
    func finishSegments(
        _ fetch: SegmentedFetch,
        leadPiece: Int,
        lead: TransferOutcome
    ) throws(PinFetchError) -> TransferOutcome {
        let own = fetch.range(of: leadPiece)
        if self.state.offset < own.upperBound, fetch.stop == nil {
            if self.fetchPiece(fetch, self.state.offset..<own.upperBound, on: nil) { fetch.markWritten(leadPiece) }
        }
        while let piece = fetch.claimNext(for: 0) {
            guard self.fetchPiece(fetch, fetch.range(of: piece), on: nil) else { break }
            fetch.markWritten(piece)
        }
        fetch.waitForHelpers()
        let prefix = fetch.assembler.hashedPrefix
        self.downloadedBytes += fetch.helperBytes.load(ordering: .relaxed)
        self.rehashedBytes += fetch.assembler.rehashedBytes
        self.state.offset = prefix
        if let failure = fetch.localFailure { throw failure }
        if fetch.isComplete, prefix == fetch.length { return TransferOutcome(code: 0, message: "", category: .ok) }
        self.segmentsStopped = true
        try self.partial?.truncate(to: prefix)  // pieces past the prefix: not recorded, so not kept
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
