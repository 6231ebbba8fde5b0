extension MirrorSource {
    /// Checks the partial's digest and places it (``DigestCheck``), or acts on a mismatch as
    /// ``MismatchPolicy`` says.
    /// - Returns: The placed file's digest.
    /// - Throws: ``PinFetchError/Code/digestMismatch`` when every mirror that answered sent
    ///   other bytes; the last failure when the mirrors left fail otherwise.
    func verifyAndPlace() throws(PinFetchError) -> [UInt8] {
        var policy = MismatchPolicy(mirrorCount: self.mirrors.count)
        while true {
            let digest = self.partial.digest.finalize()
            let check = DigestCheck(
                destination: self.destination,
                pin: self.pin,
                state: self.partial.state,
                crossCheck: self.partial.crossCheck
            )
            guard let mismatch = check.mismatch(of: digest) else {
                try self.placeVerified(digest: digest)
                if self.attempts > 0 { self.mirrors.note(self.mirrors.current, "ok") }
                for suspect in self.suspects.subtracting([self.mirrors.current]).sorted() {
                    self.mirrors.note(suspect, "mismatch")
                }
                return digest
            }
            if self.attempts > 0 { self.mirrors.note(self.mirrors.current, "mismatch") }
            self.segmentPolicy.fromOtherMirrors = false  // one mirror's bytes from now on
            let from = self.mirrors.count > 1 ? " (from \(self.mirrors.label))" : ""
            let handOver = self.partial.handOver
            let own = handOver.map { point in
                point.source.flatMap { source in self.mirrors.urls.firstIndex { $0.text == source } }
            }
            let next = policy.next(
                current: self.mirrors.current,
                handOver: own,
                spliced: self.partial.state.spliced,
                piecesFrom: self.segmentPolicy.piecesFrom
            )
            if let point = handOver {
                // Another mirror's tail goes; the prefix its own mirror vouched for stays.
                try self.partial.goBack(to: point)
                self.reporter.decide(
                    "\(mismatch) (from \(self.mirrors.label)): back to byte \(point.offset), the bytes its own mirror served"
                )
            }
            switch next {
            case .goBack(let mirror, let crossMirror, let excluded):
                self.partial.state.crossMirror = crossMirror
                self.mirrors.current = mirror
                try self.download(excluding: excluded)
            case .prefixSuspect:
                let offset = handOver?.offset ?? 0
                self.reporter.report(
                    .restarted(
                        path: self.destination,
                        reason: "\(mismatch) after every listed mirror's bytes past byte \(offset), "
                            + "which came from a mirror not listed here"
                    )
                )
                self.partial.decideRestart()
                self.partial.state.crossMirror = true  // no listed mirror's validator describes these bytes
                self.mirrors.current = 0
                try self.download()
            case .restartSpliced(let mirror, let oneStream):
                // A spliced partial may hold bytes of two representations: one clean download
                // from byte 0 decides.
                let reason =
                    switch self.segmentPolicy.piecesFrom {
                    case .severalMirrors?: "checksum mismatch with pieces from several mirrors"
                    case .severalConnections?: "checksum mismatch with pieces over several connections"
                    case nil: "checksum mismatch after a resume"
                    }
                self.reporter.report(.restarted(path: self.destination, reason: reason))
                if self.segmentPolicy.piecesFrom == .severalMirrors { self.suspects.formUnion(self.pieceMirrors) }
                self.pieceMirrors = []
                try self.partial.startOver()
                self.partial.restartPending = false
                self.segmentPolicy.stopped = oneStream
                self.mirrors.current = mirror
                try self.download()
            case .nextMirror(let mirror, let excluded):
                // A mirror that sent other bytes than the pin (a stale or wrong mirror is why
                // people list several): the next one that has not, from byte 0.
                self.reporter.report(
                    .restarted(
                        path: self.destination,
                        reason: "\(mismatch)\(from); trying mirror \(mirror + 1) of \(self.mirrors.count)"
                    )
                )
                try self.partial.startOver()
                self.partial.restartPending = false
                self.partial.state.crossMirror = false
                self.mirrors.current = mirror
                do throws(PinFetchError) {
                    try self.download(excluding: excluded)
                } catch {
                    // The mirrors left failed otherwise: when none of them delivered a byte,
                    // every mirror that answered with a body sent other bytes, and that is what
                    // the run found. One that failed mid-body is a network failure, its partial
                    // kept for a later run (exit 4).
                    let answered: [PinFetchError.Code] = [
                        .network, .serverResponse, .authentication, .tlsVerification, .protocolViolation,
                    ]
                    guard self.partial.state.offset == 0, answered.contains(error.code) else { throw error }
                    try self.partial.discard()
                    throw PinFetchError(
                        .digestMismatch,
                        "\(mismatch)\(from); no other mirror delivered the file: \(error.message)"
                    )
                }
            case .fail:
                try self.partial.discard()
                throw PinFetchError(.digestMismatch, mismatch + from)
            }
        }
    }

    /// Places the verified partial (``Placement``), then keeps a copy in the cache and uploads
    /// it to the remote cache when asked to. Called only once the digest matched.
    private func placeVerified(digest: [UInt8]) throws(PinFetchError) {
        let file = try self.partial.openForPlacement()  // a zero-byte body wrote none
        let modified = self.options.remoteTime ? self.partial.state.remoteModified : nil
        // Recorded only when this run hashed every byte as it arrived: a resumed partial's prefix
        // was hashed by an earlier run, and the file may have been written since (an edit in
        // place is not detected, <doc:ResumeAndCheckpoints#The-verified-record>); the next run
        // then reads the placed file once, and records it. The validator only when it vouches
        // for every byte: one representation, one mirror; and not one a redirect led to, whose
        // validator is another resource's than the URL a refresh asks.
        let state = self.partial.state
        let single = !state.mixedSources && !state.crossMirror && state.location == nil
        do throws(PinFetchError) {
            try self.placement.place(
                file,
                at: self.sidecars.partial,
                modificationTime: modified,
                verified: state.resumedFrom > 0
                    ? nil
                    : .init(
                        digests: [state.algorithm: digest],
                        validator: single ? state.validator : nil,
                        url: single ? state.source : nil
                    )
            )
        } catch {
            // Stopped before the rename (a signal): the whole partial is kept for a later run,
            // with a checkpoint of all of it, so it is reported and then placed without a body.
            // Private again, as every partial is (the placement had given it its final mode).
            if error.code == .cancelled {
                try? file.setMode(0o600)
                try? self.partial.saveCheckpoint()
            }
            throw error
        }
        try self.partial.placed()
        // Only pinned bytes enter the cache (and not by a weak pin), copied from the descriptor
        // that was hashed.
        if let pin = self.pin, !pin.algorithm.isWeak, let cache = self.cache,
            let warning = cache.store(from: file, algorithm: pin.algorithm, digest: digest)
        {
            self.reporter.warn(warning)
        }
        RemoteCacheSource.upload(file, pin: self.pin, requester: self.requester, on: self.requests.easy)
    }
}
