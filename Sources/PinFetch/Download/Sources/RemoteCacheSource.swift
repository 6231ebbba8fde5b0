import FoundationEssentials
@preconcurrency import Glibc
import Synchronization

/// The remote cache (``FetchOptions/remoteCache``), for a SHA-256 pin: the blob
/// `<cache>/cas/<hex>` (the layout of Bazel's HTTP remote cache: nginx with WebDAV,
/// bazel-remote) is fetched beside the destination, hashed as it comes, and placed only when it
/// holds the pinned bytes; a local cache then keeps a copy.
///
/// A miss (`404`) says so with `-v`; a cache that is down, slow (no connection, or a silent
/// body, within ``FetchOptions/remoteCacheTimeout`` seconds), refuses, or holds other bytes
/// costs one warning, and the next source is asked; one that is down, silent or slow is not
/// asked again in the run. Only ``FetchOptions/remoteCacheHeaders`` (and a netrc entry for the
/// cache's host) go to the cache, never ``FetchOptions/headers``. Every answer but a miss is
/// listed first in `--json` `mirrors`, and the body bytes it sent count as downloaded.
struct RemoteCacheSource: Source {
    func place(_ context: SourceContext) throws(PinFetchError) -> SourceAnswer {
        let requester = context.requester
        let options = requester.options
        let control = requester.control
        guard let pin = context.pin, let url = Self.blob(options, pin), !control.remoteCacheOff.load(ordering: .relaxed)
        else {
            return .passed
        }
        let path = context.sidecars.cachePlacement
        try SidecarOwnership.checkCachePlacement(context.sidecars)
        let placed = try PartialFile(path: path, fresh: true, partialOf: context.sidecars.destination)
        defer { try? FileSystem.remove(path) }  // gone once renamed; else nothing stays behind
        let makeReader = { (origin: BlobReader.Origin) in
            BlobReader(
                partial: placed,
                algorithm: pin.algorithm,
                limit: options.maximumFileSize,
                timeout: options.remoteCacheTimeout,
                origin: origin
            ) { control.isCancelled }
        }
        var request = TransferRequest(
            url: url.wireText,
            method: .get,
            headers: ["Accept-Encoding: identity"] + options.remoteCacheHeaders,
            connectTimeout: options.remoteCacheTimeout,
            stallTimeout: options.remoteCacheTimeout
        )
        request.origin = url.origin
        request.transport = requester.transport
        request.netrc = true  // its own host's entry
        if let object = url.s3 {
            do throws(PinFetchError) {
                try S3Signing.sign(&request, for: object, on: context.easy) { control.isCancelled }
            } catch {
                context.reporter.warn("remote cache \(url.redacted): \(error.message); fetching from the mirrors")
                return .passed
            }
        }
        // A blob that trickles (under 16 KiB/s over the timeout) is given up, and the cache may
        // take half of what --max-time leaves at most: the mirrors get the rest.
        request.minimumRate = 16 << 10
        request.timeout = requester.deadline.remaining.map { max(0.001, $0 / 2) }
        var reader = makeReader(.notAsked)
        var outcome = try context.easy.perform(request, delegate: reader)
        if reader.needsOrigin {
            // A large blob: asked again once the origin's HEAD told its length (advisory: none
            // known, and the blob is taken as before).
            reader = makeReader(.asked(length: context.originLength()))
            outcome = try context.easy.perform(request, delegate: reader)
        }
        var answer = SourceAnswer(outcome: .passed, receivedBytes: reader.written)
        if control.isCancelled { throw PinFetchError(.cancelled, "\(context.destination): cancelled") }
        if let failure = reader.localFailure { throw failure }
        let shown = "remote cache \(url.redacted)"
        let tried = { (outcome: String) in
            answer.listed = FetchResult.MirrorOutcome(url: url.redacted, outcome: outcome)
        }
        let timeout = "\(Text.number(options.remoteCacheTimeout)) s (--remote-cache-timeout)"
        guard let status = reader.head?.status else {
            // Down or silent: the rest of the run does not ask it again.
            control.remoteCacheOff.store(true, ordering: .relaxed)
            // No answer: network trouble, unless libcurl names another kind (TLS).
            let kind =
                reader.stalled || outcome.failureCode == .generic ? PinFetchError.Code.network : outcome.failureCode
            tried(kind.description)
            let why =
                reader.stalled ? "no answer for \(timeout)" : outcome.message.isEmpty ? "no answer" : outcome.message
            context.reporter.warn("\(shown): \(why); fetching from the mirrors, and not asking it again in this run")
            return answer
        }
        guard status == 200 else {
            if status == 404 {
                context.reporter.decide("\(shown): not there")
            } else {
                tried(PinFetchError.Code.serverResponse.description)
                context.reporter.warn("\(shown): HTTP \(status); fetching from the mirrors")
            }
            return answer
        }
        guard outcome.category == .ok, !reader.overLimit, reader.refusal == nil else {
            let slow =
                reader.refusal == nil && !reader.overLimit && (reader.stalled || reader.tooSlow || outcome.code == 28)
            let why =
                reader.refusal
                ?? (reader.overLimit
                    ? "larger than --max-filesize"
                    : reader.tooSlow
                        ? "slower than 1 MiB/s on average"
                        : slow ? "too slow or silent for \(timeout)" : outcome.message)
            // Named as a mirror's failure would be; a blob refused here is a protocol violation.
            let kind: PinFetchError.Code =
                reader.refusal != nil || reader.overLimit ? .protocolViolation : slow ? .network : outcome.failureCode
            tried(kind.description)
            if slow {
                // Slow or silent: the rest of the run does not ask it again.
                control.remoteCacheOff.store(true, ordering: .relaxed)
                context.reporter.warn(
                    "\(shown): \(why); fetching from the mirrors, and not asking it again in this run"
                )
            } else {
                context.reporter.warn("\(shown): \(why); fetching from the mirrors")
            }
            return answer
        }
        let digest = reader.digest.finalize()
        guard pin.matches(digest) else {
            tried("mismatch")
            context.reporter.warn("\(shown) holds other bytes than the pin: not used; fetching from the mirrors")
            return answer
        }
        let modified =
            options.remoteTime ? reader.head?.value("last-modified").flatMap({ HTTPDate.parse($0) }) : nil
        try context.placement.place(
            placed,
            at: path,
            modificationTime: modified,
            verified: .init(digests: [pin.algorithm: digest])
        )
        if let cache = context.cache,
            let warning = cache.store(from: placed, algorithm: pin.algorithm, digest: digest)
        {
            context.reporter.warn(warning)
        }
        tried("ok")
        answer.outcome = .placed(size: reader.written, digest: digest)
        answer.cache = .remote
        answer.source = url.redacted
        return answer
    }

    /// The blob of the pinned file in the remote cache: `<cache>/cas/<hex>`, for a SHA-256 pin;
    /// `/cas/<hex>` goes at the end of the path, before a query (a token an object store's
    /// proxy wants stays a query). In a bucket (`s3://BUCKET/PREFIX`) it is
    /// `PREFIX/cas/<first two hex digits>/<hex>`, bazel-remote's uncompressed S3 layout, so one
    /// bucket serves Bazel and pinfetch (its zstd mode's `cas.v2` blobs are another format).
    static func blob(_ options: FetchOptions, _ pin: Pin?) -> HTTPURL? {
        guard let base = options.remoteCache, let pin, pin.algorithm == .sha256 else { return nil }
        if S3Location.names(base) {
            var prefix = base
            while prefix.hasSuffix("/") { prefix.removeLast() }
            return try? HTTPURL(prefix + "/cas/" + pin.hex.prefix(2) + "/" + pin.hex)
        }
        let question = base.firstIndex(ofASCII: "?") ?? base.endIndex
        let query = String(base[question...])
        var path = String(base[..<question])
        while path.hasSuffix("/") { path.removeLast() }
        return try? HTTPURL(path + "/cas/" + pin.hex + query)
    }

    /// With ``FetchOptions/remoteCacheUpload``, stores `file` (just verified after a download
    /// from a mirror) as its blob: `PUT <cache>/cas/<hex>`. A cache that refuses (`403`), is
    /// down or slow costs one warning; the fetch has succeeded already. The connection is
    /// bounded by ``FetchOptions/remoteCacheTimeout``, the whole upload by that plus a second
    /// per MiB.
    static func upload(_ file: PartialFile, pin: Pin?, requester: Requester, on easy: EasyHandle) {
        let options = requester.options
        guard options.remoteCacheUpload, let url = Self.blob(options, pin), let size = try? file.size() else {
            return
        }
        var request = TransferRequest(
            url: url.wireText,
            method: .put,
            headers: ["Content-Type: application/octet-stream", "Expect:"] + options.remoteCacheHeaders,
            connectTimeout: options.remoteCacheTimeout,
            stallTimeout: nil
        )
        request.origin = url.origin
        request.transport = requester.transport
        request.netrc = true
        request.timeout = options.remoteCacheTimeout + Double(size) / Double(1 << 20)
        request.upload = UploadSource(file: file, size: size)
        let answer = TransferDelegate()
        let shown = "remote cache \(url.redacted)"
        if let object = url.s3, let pin {
            // The store checks the body against its SHA-256 and refuses another (x-amz-checksum-sha256),
            // and If-None-Match: * makes a blob already there a 412, never overwritten by a racing upload.
            request.headers += [
                "x-amz-checksum-sha256: \(Data(pin.digest).base64EncodedString())", "If-None-Match: *",
            ]
            // libcurl 7.88 signs the empty `Expect:` that only removes its header, and the store
            // then computes another signature: an object store takes the 100-continue.
            request.headers.removeAll { $0 == "Expect:" }
            do throws(PinFetchError) {
                try S3Signing.sign(&request, for: object, payloadSHA256: pin.hex, on: easy)
            } catch {
                requester.reporter.warn("\(shown): \(error.message); not uploaded, the file is in place")
                return
            }
        }
        guard let outcome = try? easy.perform(request, delegate: answer), outcome.category == .ok,
            let status = answer.head?.status
        else {
            requester.reporter.warn("\(shown): the upload failed; the file is in place")
            return
        }
        if (200..<300).contains(status) {
            requester.reporter.decide("\(shown): uploaded (\(size) bytes)")
        } else if status == 412, url.s3 != nil {
            requester.reporter.decide("\(shown): already there (another upload came first)")
        } else {
            requester.reporter.warn("\(shown): the upload was refused (HTTP \(status)); the file is in place")
        }
    }
}

/// Reads a remote cache blob into a file beside the destination, hashing it as it comes.
///
/// A cache costs seconds, then the mirrors are asked: a blob larger than the room left beside
/// the destination is not taken (it would fill the disk from a cache), and after the first
/// ``FetchOptions/remoteCacheTimeout`` seconds a blob must keep up with ``slowestRate``: by
/// `timeout + t` seconds after its head, at least `t` seconds' worth of bytes at that rate (or
/// all of it) must have come. A blob that trickles just above the stall floor is so given up
/// seconds after the timeout, whatever length it announced (a rule by the announced length
/// alone let `Content-Length: 10^9` at 40 kB/s hold the fetch for 16 minutes). A blob over
/// ``checkedAbove`` bytes is taken only when its length is the origin's (its `HEAD`): a cache
/// that announces 10 GB for a pinned file would otherwise fill the disk at loopback speed.
final class BlobReader: TransferDelegate {
    /// Bytes per second a blob must keep up with, after the first timeout's worth of seconds.
    static let slowestRate: Int64 = 1 << 20
    /// Bytes above which a blob's length is compared with the origin's.
    static let checkedAbove: Int64 = 16 << 20

    /// What the origin said of the file's length.
    enum Origin {
        /// Not asked yet: a blob over ``checkedAbove`` stops after its head (``needsOrigin``).
        case notAsked
        /// Asked: its `HEAD`'s length, `nil` when it gave none.
        case asked(length: Int64?)
    }

    let partial: PartialFile
    let digest: RunningDigest
    let limit: Int64?
    /// Seconds of grace before the blob must keep up with ``slowestRate``.
    let timeout: Double
    let origin: Origin
    /// Set when the blob is over ``checkedAbove`` and the origin was not asked yet.
    private(set) var needsOrigin = false
    private(set) var written: Int64 = 0
    private(set) var overLimit = false
    /// Set when the blob fell behind ``slowestRate`` after the grace.
    private(set) var tooSlow = false
    /// When the blob's head came.
    private var start: ContinuousClock.Instant?
    /// Why an answer was not taken as a blob, if it was not.
    private(set) var refusal: String?
    private(set) var localFailure: PinFetchError?
    private let cancelled: @Sendable () -> Bool

    init(
        partial: PartialFile,
        algorithm: HashAlgorithm,
        limit: Int64?,
        timeout: Double,
        origin: Origin,
        cancelled: @escaping @Sendable () -> Bool
    ) {
        self.partial = partial
        self.digest = RunningDigest(algorithm: algorithm)
        self.limit = limit
        self.timeout = timeout
        self.origin = origin
        self.cancelled = cancelled
    }

    override func receive(head: ResponseHead) -> Bool {
        guard head.status == 200 else { return false }
        guard !head.hasContentCoding else {
            self.refusal = "a blob with a Content-Encoding"
            return false
        }
        // A content-addressed store knows its blob's size: an answer without one could run on
        // forever (and fill the disk), so it is not taken.
        guard let length = head.contentLength else {
            self.refusal =
                head.framingError.map { "a blob whose framing is broken (\($0))" }
                ?? "a blob without a Content-Length"
            return false
        }
        if let limit = self.limit, length > limit {
            self.overLimit = true
            return false
        }
        if let free = self.partial.freeBytes(), length > free {
            self.refusal = "a blob of \(length) bytes, more than the \(free) free beside the destination"
            return false
        }
        if length > Self.checkedAbove {
            switch self.origin {
            case .notAsked:
                self.needsOrigin = true
                return false
            case .asked(let known?) where known != length:
                self.refusal = "a blob of \(length) bytes, where the origin announces \(known)"
                return false
            case .asked: break
            }
        }
        self.start = .now
        return true
    }

    override func progress(received: Int64) -> Bool {
        guard let start = self.start else { return true }
        let elapsed = ContinuousClock.now - start
        let late = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18 - self.timeout
        guard late > 0, Double(self.written) < late * Double(Self.slowestRate) else { return true }
        self.tooSlow = true
        return false
    }

    override func receive(body: UnsafeRawBufferPointer) -> Bool {
        if let limit = self.limit, self.written + Int64(body.count) > limit {
            self.overLimit = true
            return false
        }
        do throws(PinFetchError) {
            try self.partial.write(body, at: self.written)
        } catch {
            self.localFailure = error
            return false
        }
        self.digest.update(body)
        self.written += Int64(body.count)
        return true
    }

    override var isCancelled: Bool { self.cancelled() }
}
