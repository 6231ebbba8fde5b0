/// Fetches the pieces of one segmented phase: a `Sendable` value each fetcher (the download's
/// own thread, fetcher 0, and each helper thread) uses with its own ``EasyHandle``. It holds
/// what a piece's request needs and reports how the piece ended as a value (``Outcome``).
struct PieceFetcher: Sendable {
    /// How a piece's fetch ended.
    enum Outcome: Equatable {
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

    let requester: Requester
    let fetch: SegmentedFetch
    let partial: PartialFile

    /// Fetches what is left of `claim`'s piece with ranged GETs, a few attempts, each from the
    /// first byte no stream wrote, from `fetcher`'s mirror, on `easy` (a helper's handle, on a
    /// connection of its own when `ownConnection`). Another mirror than the lead's is asked
    /// without `If-Range` (its validator is not the lead's): the length and range must match
    /// (``PieceDecision``), and the pin decides the bytes.
    func fetch(
        _ claim: SegmentedFetch.Claim,
        by fetcher: Int,
        on easy: EasyHandle,
        ownConnection: Bool
    ) -> Outcome {
        let fetch = self.fetch
        let control = self.requester.control
        let mirror = fetch.mirror(for: fetcher)
        let other = mirror != fetch.mirrors[0]
        let first = fetch.remaining(of: claim.piece)
        defer { if claim.isRace { fetch.endRace(claim.piece) } }
        if claim.isRace {
            self.requester.reporter.decide(
                "bytes \(first.lowerBound)-\(first.upperBound - 1) lag behind; asked for again"
            )
        }
        var last = ""
        for _ in 0..<SegmentedFetch.attemptsPerPiece {
            if fetch.stop != nil || control.isCancelled { return .stopped }
            let range = fetch.remaining(of: claim.piece)
            if range.isEmpty { return .written }  // a racing stream brought the rest
            let reader = PieceReader(
                fetch: fetch,
                partial: self.partial,
                piece: claim.piece,
                wanted: range,
                otherMirror: other
            ) { fetch.stop != nil || control.isCancelled }
            let headers =
                ["Accept-Encoding: identity", "Range: bytes=\(range.lowerBound)-\(range.upperBound - 1)"]
                + (other ? [] : ["If-Range: \(fetch.ifRange)"]) + self.requester.options.headers
            let outcome: TransferOutcome
            do throws(PinFetchError) {
                outcome = try self.requester.perform(
                    .get,
                    headers: headers,
                    delegate: reader,
                    mirror: mirror,
                    on: easy,
                    ownConnection: ownConnection
                )
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
                self.requester.reporter.decide(
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
