extension Download {
    /// Checks the partial's digest and commits it (DESIGN.md, "Finalize"), or acts on a
    /// mismatch: a spliced partial is downloaded once more from byte 0, and with several
    /// mirrors the next one that has not sent other bytes takes over from byte 0.
    /// - Returns: The committed file's digest.
    /// - Throws: ``PinFetchError/Code/digestMismatch`` when every mirror that answered sent
    ///   other bytes; the last failure when the mirrors left fail otherwise.
    func verifyAndCommit() throws(PinFetchError) -> [UInt8] {
        var startedOverAfterMismatch = false
        var tailMismatches = Set<Int>()  // mirrors whose bytes after another mirror's prefix mismatched
        var deliveredOtherBytes = Set<Int>()  // mirrors whose download from byte 0 mismatched the pin
        while true {
            let digest = self.digest.finalize()
            guard let mismatch = self.mismatch(of: digest) else {
                try self.commit()
                if self.attempts > 0 { self.note(self.mirrorIndex, "ok") }
                return digest
            }
            if self.attempts > 0 { self.note(self.mirrorIndex, "mismatch") }
            self.piecesFromOtherMirrors = false  // one mirror's bytes from now on
            // The tail another mirror appended does not match: its bytes go, the prefix its own
            // mirror vouched for (a strong validator) stays, and is continued there, or on a
            // listed mirror whose tail was not tried yet.
            if let point = self.handOver {
                tailMismatches.insert(self.mirrorIndex)
                if try self.goBack(to: point, mismatch: mismatch, excluding: tailMismatches) { continue }
                // Every listed mirror disagrees with a prefix whose own mirror is not listed: the
                // prefix is the suspect. From byte 0; it stays until an answer replaces it.
                self.report(
                    .restarted(
                        path: self.destination,
                        reason: "\(mismatch) after every listed mirror's bytes past byte \(point.offset), "
                            + "which came from a mirror not listed here"
                    )
                )
                startedOverAfterMismatch = true
                self.restarts += 1
                self.restartPending = true
                self.state.crossMirror = true  // no listed mirror's validator describes these bytes
                self.mirrorIndex = 0
                try self.download()
                continue
            }
            // A spliced partial that mismatches may hold bytes of two representations: one
            // clean download from byte 0 decides (DESIGN.md, "Finalize").
            if self.state.spliced, !startedOverAfterMismatch {
                startedOverAfterMismatch = true
                let reason =
                    switch self.piecesFrom {
                    case .severalMirrors?: "checksum mismatch with pieces from several mirrors"
                    case .severalConnections?: "checksum mismatch with pieces over several connections"
                    case nil: "checksum mismatch after a resume"
                    }
                self.report(.restarted(path: self.destination, reason: reason))
                try self.startOver()
                self.restartPending = false
                self.segmentsStopped = self.piecesFrom != nil  // one stream decides
                // Pieces from several mirrors: the lead's mirror alone first (the others may be
                // the ones that differ); else the next mirror.
                if self.mirrors.count > 1, self.piecesFrom != .severalMirrors {
                    self.mirrorIndex = (self.mirrorIndex + 1) % self.mirrors.count
                }
                try self.download()
                continue
            }
            // A mirror that sent other bytes than the pin (a stale or wrong mirror is why people
            // list several): the next one that has not, from byte 0 (DESIGN.md, "Mirrors").
            let from = self.mirrors.count > 1 ? " (from \(self.currentLabel))" : ""
            if self.mirrors.count > 1 {
                deliveredOtherBytes.insert(self.mirrorIndex)
                let count = self.mirrors.count
                if let next = (1..<count).lazy.map({ (self.mirrorIndex + $0) % count })
                    .first(where: { !deliveredOtherBytes.contains($0) })
                {
                    self.report(
                        .restarted(
                            path: self.destination,
                            reason: "\(mismatch)\(from); trying mirror \(next + 1) of \(count)"
                        )
                    )
                    try self.startOver()
                    self.restartPending = false
                    self.state.crossMirror = false
                    self.mirrorIndex = next
                    do throws(PinFetchError) {
                        try self.download(excluding: deliveredOtherBytes)
                    } catch {
                        // The mirrors left failed otherwise: when none of them delivered a byte,
                        // every mirror that answered with a body sent other bytes, and that is
                        // what the run found. One that failed mid-body is a network failure,
                        // its partial kept for a later run (exit 4).
                        guard self.state.offset == 0,
                            [
                                PinFetchError.Code.network, .serverResponse, .authentication, .tlsVerification,
                                .protocolViolation,
                            ]
                            .contains(error.code)
                        else { throw error }
                        try self.discardPartial()
                        throw PinFetchError(
                            .digestMismatch,
                            "\(mismatch)\(from); no other mirror delivered the file: \(error.message)"
                        )
                    }
                    continue
                }
            }
            try self.discardPartial()
            throw PinFetchError(.digestMismatch, mismatch + from)
        }
    }

    /// Where the partial stands now, to come back to (``handOver``).
    func handOverPoint() -> HandOver {
        HandOver(
            offset: self.state.offset,
            digestState: self.digest.serializedState(),
            validator: self.state.validator,
            source: self.state.source,
            totalLength: self.state.totalLength,
            resumable: self.state.resumable,
            mixedSources: self.state.mixedSources
        )
    }

    /// Cuts the partial back to `point` (the bytes before another mirror's tail), checkpoints
    /// it for its own mirror and downloads the rest there, or on another mirror not in
    /// `excluded` when its own is not in this run's list.
    /// - Returns: `false` when its own mirror is not listed and every listed one is excluded:
    ///   nothing was downloaded, the partial stands at `point`.
    /// - Throws: the download's failure (the partial kept at `point`, exit 4 for a network
    ///   failure).
    private func goBack(
        to point: HandOver,
        mismatch: String,
        excluding excluded: Set<Int>
    ) throws(PinFetchError)
        -> Bool
    {
        guard let partial = self.partial,
            let digest = RunningDigest(
                algorithm: self.state.algorithm,
                restoring: point.digestState,
                offset: point.offset
            )
        else { throw PinFetchError(.generic, "internal: the hand-over point did not restore") }
        try partial.truncate(to: point.offset)
        self.digest = digest
        self.state.offset = point.offset
        self.state.validator = point.validator
        self.state.source = point.source
        self.state.totalLength = point.totalLength
        self.state.resumable = point.resumable
        self.state.mixedSources = point.mixedSources
        self.state.serverDigest = nil
        self.crossCheck = nil
        self.handOver = nil
        self.durableOffset = min(self.durableOffset, point.offset)
        try self.saveCheckpoint()
        let own = point.source.flatMap { source in self.mirrors.firstIndex { $0.text == source } }
        let count = self.mirrors.count
        let next = own ?? (0..<count).first { !excluded.contains($0) }
        self.decide(
            "\(mismatch) (from \(self.currentLabel)): back to byte \(point.offset), the bytes its own mirror served"
        )
        guard let next else { return false }
        self.state.crossMirror = own == nil
        self.mirrorIndex = next
        try self.download(excluding: excluded)
        return true
    }

    /// Why `digest` is not acceptable, or `nil`: it must equal the pin, the server's own
    /// `Repr-Digest` / `Content-Digest` for the algorithm when it sent one (RFC 9530) or S3's
    /// full-object checksum, and GCS's MD5 when this run hashed the whole file in one answer.
    func mismatch(of digest: [UInt8]) -> String? {
        let algorithm = self.state.algorithm.rawValue
        let got = "\(algorithm):\(Pin.hex(digest))"
        if let pin = self.pin, pin.digest != digest {
            return "checksum mismatch for \(self.destination): expected \(pin), got \(got)"
        }
        if let served = self.state.serverDigest, served.digest == ResponseHead.contradiction {
            return "checksum mismatch for \(self.destination): the server's \(served.field) gives two different digests"
        }
        if let served = self.state.serverDigest, served.digest != digest {
            return "checksum mismatch for \(self.destination): the server's \(served.field) says "
                + "\(algorithm):\(Pin.hex(served.digest)), got \(got)"
        }
        if let check = self.crossCheck, check.digest.byteCount == self.state.offset {
            let md5 = check.digest.finalize()
            if check.expected == ResponseHead.contradiction {
                return
                    "checksum mismatch for \(self.destination): the server's x-goog-hash gives two different md5 digests"
            }
            if md5 != check.expected {
                return "checksum mismatch for \(self.destination): the server's x-goog-hash says "
                    + "md5:\(Pin.hex(check.expected)), got md5:\(Pin.hex(md5))"
            }
        }
        return nil
    }
}

/// The partial as it stood when another mirror's bytes were first appended (``Download/handOver``).
struct HandOver {
    /// Bytes of the partial from the mirror that served them first.
    var offset: Int64
    /// The digest's state after those bytes.
    var digestState: [UInt8]
    var validator: Validator?
    /// That mirror (``PartialState/source``).
    var source: String?
    var totalLength: Int64?
    var resumable: Bool
    var mixedSources: Bool
}
