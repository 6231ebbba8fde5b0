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
            let reader = BlobReader(
                partial: placed,
                algorithm: pin.algorithm,
                limit: options.maximumFileSize,
                timeout: options.remoteCacheTimeout,
                origin: origin
            ) { control.isCancelled }
            reader.readsErrorBody = url.s3 != nil
            return reader
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
        do throws(PinFetchError) {
            try Self.addHelperFields(&request, for: url, requester)
            if let object = url.s3 {
                try S3Signing.sign(&request, for: object, on: context.easy) { control.isCancelled }
            }
        } catch {
            context.reporter.warn("remote cache \(url.redacted): \(error.message); fetching from the mirrors")
            return .passed
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
                let said = reader.errorBody.flatMap { S3ErrorBody($0) }.map { ", S3 \($0.code)" } ?? ""
                context.reporter.warn("\(shown): HTTP \(status)\(said); fetching from the mirrors")
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
        do throws(PinFetchError) { try Self.addHelperFields(&request, for: url, requester) } catch {
            requester.reporter.warn("\(shown): \(error.message); not uploaded, the file is in place")
            return
        }
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
            // A blob another run uploaded, or a corrupt one (caught on each read): never overwritten.
            requester.reporter.decide("\(shown): an object is already there (412 to If-None-Match: *), left as it is")
        } else {
            requester.reporter.warn("\(shown): the upload was refused (HTTP \(status)); the file is in place")
        }
    }

    /// Adds the fields the credential helper for the cache's host gives, unless a
    /// `--remote-cache-header` of the same name is there.
    private static func addHelperFields(
        _ request: inout TransferRequest,
        for url: HTTPURL,
        _ requester: Requester
    ) throws(PinFetchError) {
        let given = Set(request.headers.map(Requester.fieldName(of:)))
        request.headers += try requester.helperHeaders(for: url).filter { !given.contains(Requester.fieldName(of: $0)) }
    }
}
