@preconcurrency import Glibc
import Synchronization

extension Download {
    /// With a SHA-256 pin and a remote cache (``FetchOptions/remoteCache``, issue 16), the blob
    /// `<cache>/cas/<hex>` (the layout of Bazel's HTTP remote cache: nginx with WebDAV,
    /// bazel-remote) is fetched beside the destination, hashed as it comes, and renamed onto
    /// the destination only when it holds the pinned bytes; a local cache then keeps a copy.
    /// A miss (`404`) says so with `-v`; a cache that is down, slow (no connection, or a silent
    /// body, within ``FetchOptions/remoteCacheTimeout`` seconds), refuses, or holds other bytes
    /// costs one warning; each returns `nil` and the mirrors are asked. Only
    /// ``FetchOptions/remoteCacheHeaders`` (and a netrc entry for the cache's host) go to the
    /// cache, never ``FetchOptions/headers``. Every answer but a miss is listed first in `--json`
    /// `mirrors` (``remoteCacheOutcome``), and the body bytes it sent count as downloaded.
    /// - Throws: a local failure (disk) or a cancellation, which end the run.
    func useRemoteCache() throws(PinFetchError) -> [UInt8]? {
        guard let pin = self.pin, let url = self.remoteCacheBlob,
            !self.control.remoteCacheOff.load(ordering: .relaxed)
        else { return nil }
        let placedPath = self.sidecars.cachePlacement
        let placed = try PartialFile(path: placedPath, fresh: true)
        defer { try? FileSystem.remove(placedPath) }  // gone once renamed; else nothing stays behind
        let reader = BlobReader(partial: placed, algorithm: pin.algorithm, limit: self.options.maximumFileSize) {
            [control = self.control] in control.isCancelled
        }
        var request = TransferRequest(
            url: url.text,
            method: .get,
            headers: ["Accept-Encoding: identity"] + self.options.remoteCacheHeaders,
            connectTimeout: self.options.remoteCacheTimeout,
            stallTimeout: self.options.remoteCacheTimeout
        )
        request.origin = url.origin
        request.transport = self.transport
        request.netrc = true  // its own host's entry
        // A blob that trickles (under 16 KiB/s over the timeout) is given up, and the cache may
        // take half of what --max-time leaves at most: the mirrors get the rest.
        request.minimumRate = 16 << 10
        request.timeout = self.remainingTime.map { max(0.001, $0 / 2) }
        let outcome = try self.easy.perform(request, delegate: reader)
        self.downloadedBytes += reader.written
        if self.control.isCancelled { throw PinFetchError(.cancelled, "\(self.destination): cancelled") }
        if let failure = reader.localFailure { throw failure }
        let shown = "remote cache \(url.redacted)"
        let tried = { (outcome: String) in
            self.remoteCacheOutcome = FetchResult.MirrorOutcome(url: url.redacted, outcome: outcome)
        }
        let timeout = "\(Text.number(self.options.remoteCacheTimeout)) s (--remote-cache-timeout)"
        guard let status = reader.head?.status else {
            // Down or silent: the rest of the run does not ask it again.
            self.control.remoteCacheOff.store(true, ordering: .relaxed)
            // No answer: network trouble, unless libcurl names another kind (TLS).
            let kind =
                reader.stalled || outcome.failureCode == .generic ? PinFetchError.Code.network : outcome.failureCode
            tried(kind.description)
            let why =
                reader.stalled ? "no answer for \(timeout)" : outcome.message.isEmpty ? "no answer" : outcome.message
            self.warn("\(shown): \(why); fetching from the mirrors, and not asking it again in this run")
            return nil
        }
        guard status == 200 else {
            if status == 404 {
                self.decide("\(shown): not there")
            } else {
                tried(PinFetchError.Code.serverResponse.description)
                self.warn("\(shown): HTTP \(status); fetching from the mirrors")
            }
            return nil
        }
        guard outcome.category == .ok, !reader.overLimit, reader.refusal == nil else {
            let slow = reader.refusal == nil && !reader.overLimit && (reader.stalled || outcome.code == 28)
            let why =
                reader.refusal
                ?? (reader.overLimit
                    ? "larger than --max-filesize" : slow ? "too slow or silent for \(timeout)" : outcome.message)
            // Named as a mirror's failure would be; a blob refused here is a protocol violation.
            let kind: PinFetchError.Code =
                reader.refusal != nil || reader.overLimit ? .protocolViolation : slow ? .network : outcome.failureCode
            tried(kind.description)
            if slow {
                // Slow or silent: the rest of the run does not ask it again.
                self.control.remoteCacheOff.store(true, ordering: .relaxed)
                self.warn("\(shown): \(why); fetching from the mirrors, and not asking it again in this run")
            } else {
                self.warn("\(shown): \(why); fetching from the mirrors")
            }
            return nil
        }
        guard reader.digest.finalize() == pin.digest else {
            tried("mismatch")
            self.warn("\(shown) holds other bytes than the pin: not used; fetching from the mirrors")
            return nil
        }
        try placed.setMode(FileSystem.creationMode)
        try placed.synchronize()
        guard placed.isStill(at: placedPath) else {
            throw PinFetchError(.fileIO, "\(placedPath) was replaced while pinfetch wrote it: nothing was renamed")
        }
        if self.options.remoteTime, let seconds = reader.head?.value("last-modified").flatMap({ HTTPDate.parse($0) }) {
            try placed.setModificationTime(seconds)
        }
        try self.place(placedPath)
        try self.discardPartial()  // superseded by the verified file
        if let cache = self.cache, let warning = cache.store(from: placed, algorithm: pin.algorithm, digest: pin.digest)
        {
            self.warn(warning)
        }
        self.state.offset = reader.written
        tried("ok")
        self.fromCache = true
        self.remoteCacheURL = url.redacted
        return pin.digest
    }

    /// The blob of the pinned file in the remote cache: `<cache>/cas/<hex>`, for a SHA-256 pin;
    /// `/cas/<hex>` goes at the end of the path, before a query (a token an object store's
    /// proxy wants stays a query).
    var remoteCacheBlob: HTTPURL? {
        guard let base = self.options.remoteCache, let pin = self.pin, pin.algorithm == .sha256 else { return nil }
        let query = base.firstIndex(of: "?").map { String(base[$0...]) } ?? ""
        var path = String(base.dropLast(query.count))
        while path.hasSuffix("/") { path.removeLast() }
        return try? HTTPURL(path + "/cas/" + pin.hex + query)
    }

    /// With ``FetchOptions/remoteCacheUpload``, stores `file` (just verified after a download
    /// from a mirror) as its blob: `PUT <cache>/cas/<hex>`. A cache that refuses (`403`), is
    /// down or slow costs one warning; the fetch has succeeded already. The connection is
    /// bounded by ``FetchOptions/remoteCacheTimeout``, the whole upload by that plus a second
    /// per MiB.
    func uploadToRemoteCache(_ file: PartialFile) {
        guard self.options.remoteCacheUpload, let url = self.remoteCacheBlob, let size = try? file.size() else {
            return
        }
        var request = TransferRequest(
            url: url.text,
            method: .put,
            headers: ["Content-Type: application/octet-stream", "Expect:"] + self.options.remoteCacheHeaders,
            connectTimeout: self.options.remoteCacheTimeout,
            stallTimeout: nil
        )
        request.origin = url.origin
        request.transport = self.transport
        request.netrc = true
        request.timeout = self.options.remoteCacheTimeout + Double(size) / Double(1 << 20)
        request.upload = UploadSource(file: file, size: size)
        let answer = TransferDelegate()
        let shown = "remote cache \(url.redacted)"
        guard let outcome = try? self.easy.perform(request, delegate: answer), outcome.category == .ok,
            let status = answer.head?.status
        else {
            self.warn("\(shown): the upload failed; the file is in place")
            return
        }
        if (200..<300).contains(status) {
            self.decide("\(shown): uploaded (\(size) bytes)")
        } else {
            self.warn("\(shown): the upload was refused (HTTP \(status)); the file is in place")
        }
    }
}

/// Reads a remote cache blob into a file beside the destination, hashing it as it comes.
final class BlobReader: TransferDelegate {
    let partial: PartialFile
    let digest: RunningDigest
    let limit: Int64?
    private(set) var written: Int64 = 0
    private(set) var overLimit = false
    /// Why an answer was not taken as a blob, if it was not.
    private(set) var refusal: String?
    private(set) var localFailure: PinFetchError?
    private let cancelled: @Sendable () -> Bool

    init(partial: PartialFile, algorithm: HashAlgorithm, limit: Int64?, cancelled: @escaping @Sendable () -> Bool) {
        self.partial = partial
        self.digest = RunningDigest(algorithm: algorithm)
        self.limit = limit
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
            self.refusal = "a blob without a Content-Length"
            return false
        }
        if let limit = self.limit, length > limit {
            self.overLimit = true
            return false
        }
        return true
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
