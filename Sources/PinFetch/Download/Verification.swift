/// Why a digest is not acceptable for a file: it must equal the pin, the server's own
/// `Repr-Digest` / `Content-Digest` for the algorithm when it sent one (RFC 9530 §2, §3) or
/// S3's full-object checksum, and GCS's MD5 when this run hashed the whole file in one answer.
struct DigestCheck {
    let destination: String
    let pin: Pin?
    let state: PartialState
    /// GCS's MD5 (``Partial/crossCheck``), when this run hashed the whole body in one answer.
    let crossCheck: (expected: [UInt8], digest: CrossCheckDigest)?

    /// Why `digest` is not acceptable, or `nil`.
    func mismatch(of digest: [UInt8]) -> String? {
        let algorithm = self.state.algorithm.rawValue
        let got = "\(algorithm):\(Pin.hex(digest))"
        if let pin = self.pin, !pin.matches(digest) {
            return "checksum mismatch for \(self.destination): expected \(pin), got \(got)"
        }
        // Pieces of several answers (a segmented phase, maybe of an earlier, pinned run) that
        // nothing checks: no single answer vouches for the file.
        if self.pin == nil, self.state.pieced, self.state.serverDigest == nil, self.crossCheck == nil {
            return "\(self.destination): its partial holds pieces of several answers, and neither a pin nor "
                + "the server's digest checks them"
        }
        if let served = self.state.serverDigest, served.digest == ResponseHead.contradiction {
            return "checksum mismatch for \(self.destination): the server gives two different \(algorithm) digests "
                + "(\(served.field))"
        }
        if let served = self.state.serverDigest, served.digest != digest {
            return "checksum mismatch for \(self.destination): the server's \(served.field) says "
                + "\(algorithm):\(Pin.hex(served.digest)), got \(got)"
        }
        if let check = self.crossCheck, check.digest.byteCount == self.state.offset {
            let md5 = check.digest.finalize()
            if check.expected == ResponseHead.contradiction {
                return
                    "checksum mismatch for \(self.destination): the server gives two different md5 digests (x-goog-hash)"
            }
            if md5 != check.expected {
                return "checksum mismatch for \(self.destination): the server's x-goog-hash says "
                    + "md5:\(Pin.hex(check.expected)), got md5:\(Pin.hex(md5))"
            }
        }
        return nil
    }
}

/// What to do after the digest of a file's partial did not match, across the mismatches of one
/// fetch: which mirror next, from where, and why (Architecture, "Sources"; Resume and
/// checkpoints, "Finalize").
///
/// Pure bookkeeping, table-tested (`MismatchPolicyTests`): another mirror's tail on a partial
/// goes, and the prefix its own mirror vouched for is continued there; a spliced partial is
/// fetched once more from byte 0 (one clean download decides); a mirror whose bytes from byte 0
/// differ from the pin is not asked again, and the next one is; when none is left, the file
/// fails with a checksum mismatch.
struct MismatchPolicy {
    /// What the download does next.
    enum Next: Equatable {
        /// Cut the partial back to the hand-over point and go on from there on `mirror` (with a
        /// plain `Range` when `crossMirror`), not asking `excluding`.
        case goBack(mirror: Int, crossMirror: Bool, excluding: Set<Int>)
        /// Every listed mirror disagrees with a prefix whose own mirror is not listed: the prefix
        /// is the suspect; from byte 0 on mirror 0, the partial kept until an answer replaces it.
        case prefixSuspect
        /// Fetch the whole file again from byte 0 on `mirror`, over one stream when `oneStream`.
        case restartSpliced(mirror: Int, oneStream: Bool)
        /// `mirror` has not sent other bytes yet: from byte 0 there, not asking `excluding`.
        case nextMirror(Int, excluding: Set<Int>)
        /// No mirror is left to ask: the file fails.
        case fail
    }

    /// Where the pieces of a segmented fetch came from, once helpers brought any.
    enum PieceSources { case severalConnections, severalMirrors }

    let mirrorCount: Int
    private var startedOverAfterMismatch = false
    /// Mirrors whose bytes after another mirror's prefix mismatched.
    private var tailMismatches = Set<Int>()
    /// Mirrors whose download from byte 0 mismatched the pin.
    private var deliveredOtherBytes = Set<Int>()

    init(mirrorCount: Int) {
        self.mirrorCount = mirrorCount
    }

    /// After a mismatch of the partial last fetched from `current`.
    /// - Parameters:
    ///   - handOver: When another mirror's tail was appended: the index of the mirror of the
    ///     prefix in this run's list (`.some(nil)` when it is not listed); `nil` otherwise.
    ///   - spliced: Whether the partial holds bytes of more than one answer.
    ///   - piecesFrom: Where a segmented fetch took pieces from, if it did.
    mutating func next(current: Int, handOver: Int??, spliced: Bool, piecesFrom: PieceSources?) -> Next {
        let count = self.mirrorCount
        if let own = handOver {
            self.tailMismatches.insert(current)
            let excluded = self.tailMismatches
            guard let next = own ?? (0..<count).first(where: { !excluded.contains($0) }) else {
                self.startedOverAfterMismatch = true
                return .prefixSuspect
            }
            return .goBack(mirror: next, crossMirror: own == nil, excluding: excluded)
        }
        if spliced, !self.startedOverAfterMismatch {
            self.startedOverAfterMismatch = true
            // Pieces from several mirrors: the lead's mirror alone first (the others may be the
            // ones that differ); else the next mirror.
            let next = count > 1 && piecesFrom != .severalMirrors ? (current + 1) % count : current
            return .restartSpliced(mirror: next, oneStream: piecesFrom != nil)
        }
        guard count > 1 else { return .fail }
        self.deliveredOtherBytes.insert(current)
        let delivered = self.deliveredOtherBytes
        guard let next = (1..<count).lazy.map({ (current + $0) % count }).first(where: { !delivered.contains($0) })
        else {
            return .fail
        }
        return .nextMirror(next, excluding: delivered)
    }
}
