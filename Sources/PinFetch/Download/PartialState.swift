/// What the partial `<dest>.part` holds: which representation its bytes belong to and how many
/// of them the running digest covers.
///
/// One value: the download mutates it on its own thread, and the checkpoint writer of a body
/// gets a snapshot of it (``CheckpointWriter``), so no other thread reads the download.
struct PartialState: Sendable {
    /// The algorithm of the running digest (the pin's; without a pin, SHA-256 unless the server
    /// offers only SHA-512).
    var algorithm: HashAlgorithm
    /// Bytes of `.part` covered by the running digest, from byte 0 of the representation.
    var offset: Int64 = 0
    /// The validator of the representation the partial holds.
    var validator: Validator?
    /// The mirror whose validator ``validator`` is: its whole URL in this run (in memory only),
    /// or a checkpoint's redacted form after a resume. The checkpoint writer redacts it.
    var source: String?
    /// Where a redirect from ``source`` led the answer that began the representation
    /// (``Redaction/resource(_:)``: no signature), or `nil` when it came without one. The validator
    /// is that resource's: an answer that a redirect now leads elsewhere cannot continue it.
    var location: String?
    /// The representation's length in bytes, when known.
    var totalLength: Int64?
    /// `true` when the partial can be resumed: a strong validator and no content coding.
    var resumable = false
    /// `true` when the partial's bytes came from more than one answer.
    var spliced = false
    /// The partial came from another mirror: ask for the rest with `Range` and no `If-Range`; only
    /// done with a pin, which decides at the end (<doc:Architecture#Mirrors>).
    var crossMirror = false
    /// The partial holds bytes of more than one mirror (a pinned cross-mirror resume): no
    /// validator vouches for all of them, only a pin can (its checkpoint says so).
    var mixedSources = false
    /// A segmented phase may have put bytes of several answers in the partial (its checkpoint
    /// says so): only a pin or the server's digest vouches for them.
    var pieced = false
    /// This run's `HEAD` showed the partial's strong validator: the representation was the
    /// partial's moments ago (a `416` without a validator then finalizes, ``AnswerDecision``).
    var validatorConfirmed = false
    /// Bytes of an earlier run's partial that this run kept.
    var resumedFrom: Int64 = 0
    /// The server's digest of the representation for ``algorithm`` and the field it came in.
    var serverDigest: ServerDigest?
    /// The `Last-Modified` of the representation the answers delivered, in seconds since the
    /// epoch (``FetchOptions/remoteTime``).
    var remoteModified: Int64?
    /// How this run's last request failed with the partial, bringing nothing, for the next run
    /// (``RepeatedFailure``): set only when the run ends, recorded by the checkpoint written then.
    var failure: Checkpoint.Failure?

    /// A digest the server sent for the representation (RFC 9530).
    struct ServerDigest: Sendable {
        /// `Repr-Digest`, `x-amz-checksum-sha256` or `Content-Digest`.
        var field: String
        var digest: [UInt8]
    }

    init(algorithm: HashAlgorithm) {
        self.algorithm = algorithm
    }

    /// The same algorithm, nothing held: after the partial was emptied.
    var emptied: PartialState { PartialState(algorithm: self.algorithm) }

    /// Keeps the server's digest for ``algorithm``: `Repr-Digest`, and S3's full-object
    /// `x-amz-checksum-sha256`, describe the whole representation in any answer;
    /// `Content-Digest` only when the content is the whole representation (a `200` without a
    /// content coding). When two of them, or this answer and an earlier answer of this run,
    /// state different digests, the server has contradicted itself: the digest kept is
    /// ``ResponseHead/contradiction`` (no bytes match it), naming every field involved.
    /// Digests of other algorithms are not checked: only ``algorithm`` is hashed (a recipient
    /// may check any of the digests it is sent, RFC 9530 §2).
    mutating func noteServerDigest(from head: ResponseHead, wholeContent: Bool) {
        var stated: [ServerDigest] = []
        if let digest = head.representationDigests[self.algorithm] {
            stated.append(ServerDigest(field: "Repr-Digest", digest: digest))
        }
        if self.algorithm == .sha256, let digest = head.amazonSHA256 {
            stated.append(ServerDigest(field: "x-amz-checksum-sha256", digest: digest))
        }
        if wholeContent, let digest = head.contentDigests[self.algorithm] {
            stated.append(ServerDigest(field: "Content-Digest", digest: digest))
        }
        guard let first = stated.first else { return }
        if let earlier = self.serverDigest { stated.insert(earlier, at: 0) }
        let fields = stated.map(\.field).reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
        if stated.contains(where: { $0.digest != stated[0].digest || $0.digest == ResponseHead.contradiction }) {
            self.serverDigest = ServerDigest(
                field: fields.joined(separator: " and "),
                digest: ResponseHead.contradiction
            )
        } else {
            self.serverDigest = self.serverDigest ?? first
        }
    }
}
