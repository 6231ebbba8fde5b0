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
    /// content coding).
    mutating func noteServerDigest(from head: ResponseHead, wholeContent: Bool) {
        if let digest = head.representationDigests[self.algorithm] {
            self.serverDigest = ServerDigest(field: "Repr-Digest", digest: digest)
        } else if self.algorithm == .sha256, let digest = head.amazonSHA256 {
            self.serverDigest = ServerDigest(field: "x-amz-checksum-sha256", digest: digest)
        } else if wholeContent, let digest = head.contentDigests[self.algorithm] {
            self.serverDigest = ServerDigest(field: "Content-Digest", digest: digest)
        }
    }
}
