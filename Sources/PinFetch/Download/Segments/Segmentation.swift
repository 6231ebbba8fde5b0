@preconcurrency import Glibc
import Synchronization

/// One answer fetched over several connections (`--segments N`): whether its body is cut into
/// pieces (``begin(for:totalLength:partial:offset:writtenAhead:pipeline:writer:)``), and how the
/// phase ends once the lead's GET returned (``finish(_:leadPiece:partial:on:)``).
///
/// A `Sendable` value made by the attempt from the download's policy: its helper threads get
/// copies of what they need (``Requester``, ``PieceFetcher``) and report back as values.
struct Segmentation: Sendable {
    /// What the download allows the segmented phases of this run.
    struct Policy: Sendable {
        /// A segmented phase of this run stopped early: the rest uses one stream.
        var stopped = false
        /// Helpers at most, once the server refused pieces (`429`, `503`): what it still served.
        var helperCeiling: Int?
        /// Whether a pinned file may take pieces from the other mirrors: until a digest mismatch,
        /// after which one mirror's bytes decide.
        var fromOtherMirrors = true
        /// Mirrors not to ask (they sent other bytes than the pin).
        var excludedMirrors: Set<Int> = []
        /// Where the pieces of this run's phases came from, once helpers brought any: a mismatch
        /// is then named for it, and the file asked for over one stream.
        var piecesFrom: MismatchPolicy.PieceSources?
    }

    /// How a segmented phase ended, for the attempt to act on.
    struct End {
        /// Why it ended.
        enum Reason: Equatable {
            /// Every piece is in: the partial holds the whole representation.
            case complete
            /// Every connection was refused (`429`, `503`): the pieces are kept, and the attempt
            /// fails, to be retried after the server's `Retry-After` (seconds).
            case paused(String, retryAfter: Double?)
            /// ``FetchOptions/maximumTime`` ran out; the pieces are kept for a later run.
            case outOfTime
            /// The run was cancelled; the pieces are kept for a later run.
            case cancelled
            /// A piece's answer was for another representation: start over from byte 0.
            case representationChanged(String)
            /// A piece could not be fetched: the rest comes over one stream from the prefix.
            case stopped(String)
            /// The phase ended with pieces left, for what ended the lead's transfer.
            case endedEarly
            /// A fetcher's local failure (disk), which ends the run; the pieces are kept.
            case localFailure(PinFetchError)
        }

        var reason: Reason
        /// The hashed prefix: bytes of the partial the digest covers now.
        var prefix: Int64
        /// Spans written past the prefix and kept for a resume (`nil`: none, or cut off).
        var writtenAhead: CheckedSpans?
        /// Body bytes the helpers received.
        var helperBytes: Int64
        /// Bytes read back from the partial to hash them (past the memory bound, or kept).
        var rehashedBytes: Int64
        /// Bytes an earlier run left past the offset, kept in the final file.
        var keptBytes: Int64
        /// How each other mirror that helpers asked ended (`ok` or `failed`), by index.
        var otherMirrors: [(mirror: Int, outcome: String)]
        /// Helpers at most from now on, once the server refused pieces.
        var helperCeiling: Int?
    }

    let requester: Requester
    let engine: TransferEngine
    /// The mirror the lead's answer comes from.
    let mirror: Int
    /// Whether a pin decides at the end (pieces may then come from other mirrors).
    let pinned: Bool
    let policy: Policy

    /// A ``SegmentedFetch`` for the answer whose body begins now at `offset`, with its helpers
    /// ready, or `nil` when this answer is fetched over one stream: nothing `checked` (no pin and
    /// no digest from the server: no single answer would vouch for a file put together from
    /// several, <doc:ResumeAndCheckpoints#Pieces-ahead-of-the-hash>), `--segments 1` (unless a
    /// resumed partial holds pieces ahead: they are kept, one piece after another), a segmented
    /// phase of this run stopped already, a content coding, no strong validator for `If-Range`,
    /// no complete length, or not more than one piece left; and, for a `200` from byte 0, no
    /// `Accept-Ranges: bytes` (a `206` shows ranges work). Spans that a resumed partial holds
    /// from a piece's start (`writtenAhead`, their checksums confirmed) are kept, and read back
    /// when the hash reaches them. The checkpoint `writer` is told of the spans written ahead, and
    /// of mirrors mixed in a partial.
    func begin(
        for head: ResponseHead,
        totalLength: Int64?,
        partial: PartialFile,
        offset: Int64,
        writtenAhead: CheckedSpans?,
        checked: Bool,
        pipeline: HashingPipeline,
        writer: CheckpointWriter?
    ) -> SegmentedFetch? {
        let options = self.requester.options
        let pieceSize = max(1, options.segmentPieceSize)
        let acceptsRanges =
            head.status == 206
            || head.values("accept-ranges").contains(where: { $0.lowercased().contains("bytes") })
        // One connection too goes piece by piece when an earlier run left pieces ahead: they are
        // kept, not fetched again.
        let keepsPieces = head.status == 206 && writtenAhead != nil
        guard options.segments > 1 || keepsPieces, !self.policy.stopped,
            (head.status == 200 && offset == 0) || (head.status == 206 && offset > 0), acceptsRanges,
            let length = totalLength, length > offset, let ifRange = head.validator.ifRangeValue,
            !head.hasContentCoding
        else { return nil }
        // `auto` cuts only what is worth several connections: 64 MiB.
        if options.segmentsAutomatic, length - offset < 64 << 20, !keepsPieces { return nil }
        var plan = SegmentPlan(length: length, pieceSize: pieceSize, writtenUpTo: offset)
        let leadPiece = plan.piece(at: offset)
        // What the partial holds from the start of a piece after the lead's: kept, read back when
        // the hash reaches it; a piece held whole is not asked for again, one held in part is
        // asked for from where it stops. A span that begins elsewhere (another piece size) goes:
        // its checksum is of the whole span.
        var kept: [CheckedSpans.Span] = []
        var startsAt: [Int: Int64] = [:]
        for span in writtenAhead?.spans ?? [] {
            let first = plan.piece(at: span.range.lowerBound)
            guard first > leadPiece, plan.range(of: first).lowerBound == span.range.lowerBound else { continue }
            kept.append(span)
            for index in first..<plan.pieces.count {
                let range = plan.range(of: index)
                guard range.lowerBound < span.range.upperBound else { break }
                if range.upperBound <= span.range.upperBound {
                    plan.markWritten(index)
                } else {
                    startsAt[index] = span.range.upperBound
                }
            }
        }
        let open = plan.pieces.filter { $0 == .open }.count
        guard open > 1 || !kept.isEmpty else { return nil }
        guard checked else {
            self.sayWhyOneStream()
            return nil
        }
        _ = plan.claim(leadPiece, for: 0)
        let assembler = SegmentAssembler(
            pipeline: pipeline,
            partial: partial,
            prefix: offset,
            memoryBound: options.segmentMemoryBound,
            onDisk: kept
        )
        writer?.recordSpans { assembler.written(beyond: $0) }
        // A pinned file takes pieces from every listed mirror not excluded (the pin decides); the
        // partial then holds bytes of several, and only a pinned run resumes it.
        var mirrors = [self.mirror]
        if self.pinned, self.policy.fromOtherMirrors {
            mirrors += self.requester.mirrors.indices.filter {
                $0 != self.mirror && !self.policy.excludedMirrors.contains($0)
            }
        }
        if mirrors.count > 1 { writer?.markMixedSources() }
        writer?.markPieced()
        let fetch = SegmentedFetch(
            plan: plan,
            leadPiece: leadPiece,
            leadStart: offset,
            startsAt: startsAt,
            keptBytes: kept.reduce(0) { $0 + Int64($1.range.count) },
            validator: head.validator,
            ifRange: ifRange,
            assembler: assembler,
            mirrors: mirrors
        )
        // A server that refused pieces earlier in this run (429, 503) gets no more than it took.
        // The lead holds one of the origin's connections (`--max-connections-per-host`): helpers
        // past the rest would only wait for one, and then overlap the ones they wait for.
        let helpers = min(
            min(options.segments, open, options.maximumConnectionsPerHost) - 1,
            self.policy.helperCeiling ?? .max
        )
        let reporter = self.requester.reporter
        if !kept.isEmpty {
            let bytes = kept.reduce(Int64(0)) { $0 + Int64($1.range.count) }
            reporter.decide("\(bytes) bytes in \(kept.count) spans kept from an earlier run, their checksums confirmed")
        }
        let requester = self.requester
        let engine = self.engine
        let pieces = PieceFetcher(requester: requester, fetch: fetch, partial: partial)
        fetch.prepareHelpers {
            reporter.decide(
                "fetching bytes \(offset)-\(length - 1) over up to \(helpers + 1) connections, in pieces of "
                    + "\(pieceSize) bytes, doubling them while the rate keeps up"
            )
            fetch.ramp(maximum: helpers, note: { reporter.decide($0) }) { fetcher in
                guard let easy = try? EasyHandle(engine: engine) else { return }
                fetch.startHelper {
                    fetch.runHelper(fetcher, stops: { requester.shouldStop }) { claim in
                        switch pieces.fetch(claim, by: fetcher, on: easy, ownConnection: true) {
                        case .written, .handedOver: return true
                        case .stopped: return false
                        case .mirrorFailed(let reason, let mirror):
                            reporter.decide("\(requester.mirrors[mirror].redacted): \(reason); asked no more")
                            fetch.dropMirror(mirror, claim: claim, because: reason)
                            return true
                        case .refused(let reason, let retryAfter):
                            reporter.decide("\(reason): one connection fewer")
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

    /// Why an answer that could be cut into pieces is not: once per run for `--segments N` (the
    /// message names no file, and the command line prints each warning once), in `-v` for each.
    private func sayWhyOneStream() {
        let reporter = self.requester.reporter
        let options = self.requester.options
        reporter.decide("over one stream: no pin and no digest from the server to check pieces of several answers")
        guard options.segments > 1, !options.segmentsAutomatic else { return }
        reporter.warn(
            "--segments \(options.segments): a file with no pin and no digest from its server (Repr-Digest, "
                + "x-amz-checksum-sha256, x-goog-hash) is fetched over one stream: nothing would check "
                + "bytes put together from several answers"
        )
    }

    /// Ends the segmented phase once the lead's GET returned: this thread fetches pieces
    /// too, on `easy` (first the rest of the lead's own piece, if its stream broke off), then
    /// waits for the helpers. Cancelled, out of time, or stopped by a local failure, the spans
    /// past the prefix are kept (``End/writtenAhead``: the checkpoint taken on the way out lists
    /// them); stopped by a piece's answer, they are cut off the partial, and a retry goes on from
    /// the prefix over one stream (or from byte 0, for another representation).
    /// - Throws: a failure to cut the partial back to the prefix.
    func finish(
        _ fetch: SegmentedFetch,
        leadPiece: Int,
        partial: PartialFile,
        on easy: EasyHandle
    ) throws(PinFetchError) -> End {
        fetch.startHelpers()  // if the lead did not: what is left goes faster over more connections
        let requester = self.requester
        let control = requester.control
        let stops = { requester.shouldStop }
        let pieces = PieceFetcher(requester: requester, fetch: fetch, partial: partial)
        // The lead's piece, unless it is whole or its stream stopped behind the stream that
        // raced it (which brings the rest).
        var claim: SegmentedFetch.Claim? =
            fetch.isWritten(leadPiece) || fetch.isRaced(leadPiece)
            ? fetch.claimNext(for: 0, stops: stops) : .init(piece: leadPiece, isRace: false)
        while let next = claim {
            switch pieces.fetch(next, by: 0, on: easy, ownConnection: false) {
            case .written, .handedOver: claim = fetch.claimNext(for: 0, stops: stops)
            case .stopped, .mirrorFailed: claim = nil  // fetcher 0 asks the lead's mirror
            case .refused(let reason, let retryAfter):
                guard fetch.backOff(fetcher: 0, claim: next, reason: reason, retryAfter: retryAfter) else {
                    claim = nil
                    break
                }
                // Within --max-time: past it the phase ends, and the download says so.
                let wait = min(
                    retryAfter ?? 1,
                    requester.options.maximumRetryDelay,
                    max(0, requester.deadline.remaining ?? .infinity)
                )
                requester.reporter.decide("\(reason): one connection fewer; this one waits \(wait) s")
                control.wait(seconds: wait)
                claim = requester.deadline.isPast ? nil : fetch.claimNext(for: 0, stops: stops)
            }
        }
        fetch.waitForHelpers()
        let prefix = fetch.assembler.hashedPrefix
        var end = End(
            reason: .complete,
            prefix: prefix,
            writtenAhead: nil,
            helperBytes: fetch.helperBytes.load(ordering: .relaxed),
            rehashedBytes: fetch.assembler.rehashedBytes,
            keptBytes: fetch.keptBytes,
            otherMirrors: fetch.otherMirrorOutcomes.sorted { $0.key < $1.key }.map {
                ($0.key, $0.value == "ok" ? "ok" : "failed")
            },
            helperCeiling: fetch.backedOff ? fetch.helpersAllowed : nil
        )
        if fetch.isComplete, prefix == fetch.length { return end }
        let spans = fetch.assembler.written(beyond: prefix)
        let kept = spans.isEmpty ? nil : CheckedSpans(spans)
        if case .backedOff(let reason, let retryAfter) = fetch.stop, !control.isCancelled, fetch.localFailure == nil {
            // Every connection was refused: the pieces stay for the next attempt, which waits.
            requester.reporter.decide("segments paused at byte \(prefix): \(reason)")
            end.writtenAhead = kept
            end.reason = .paused(reason, retryAfter: retryAfter)
            return end
        }
        if control.isCancelled || fetch.localFailure != nil || requester.deadline.isPast {
            // Kept for a later run: the checkpoint taken on the way out lists these spans.
            end.writtenAhead = kept
            end.reason =
                fetch.localFailure.map { .localFailure($0) } ?? (control.isCancelled ? .cancelled : .outOfTime)
            return end
        }
        try partial.truncate(to: prefix)  // one stream goes on from the prefix
        switch fetch.stop {
        case .representationChanged(let reason):
            end.reason = .representationChanged(reason)
        case .failed(let reason), .backedOff(let reason, _):
            requester.reporter.decide("segments stopped at byte \(prefix): \(reason); going on over one stream")
            end.reason = .stopped(reason)
        case nil:
            end.reason = .endedEarly
        }
        return end
    }
}
