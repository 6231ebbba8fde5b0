import FoundationEssentials
import PinFetch

extension JobPlan {
    /// The bytes of a small input file given as a path or an `http(s)`, `s3://` or `oci://` URL (at most 16 MiB).
    /// A failed fetch is reported (`role` names the input) before its error is thrown.
    /// - Throws: ``PinFetchError/Code/usage`` when it cannot be read, or is too large; the
    ///   fetch's error when it cannot be fetched.
    static func load(
        _ source: String,
        _ arguments: Arguments,
        role: String,
        report: (Report) -> Void
    ) async throws(PinFetchError) -> [UInt8] {
        let lower = source.lowercased()
        // `s3://` is a URL too: never the local path `./s3:/BUCKET/KEY`.
        guard
            lower.hasPrefix("http://") || lower.hasPrefix("https://") || S3Location.names(source)
                || OCILocation.names(source)
        else {
            // `-` is standard input; a path may be a pipe too (`/dev/stdin`, `<(…)`): read to its end.
            guard let bytes = try InputFile.contents(of: source, limit: 16 << 20) else {
                throw PinFetchError(.usage, "cannot read \(source), or it is larger than 16 MiB")
            }
            return bytes
        }
        return try await Self.fetch(try HTTPURL(source), arguments, role: role, report: report).bytes
    }

    /// The bytes of a small input file at `url` (at most 16 MiB, or `maximum` bytes), and the result of
    /// its fetch, pinned by `pin` when one is given. A failed fetch is reported (`role` names the
    /// input) before its error is thrown.
    /// - Throws: ``PinFetchError/Code/usage`` when it is too large; the fetch's error when it
    ///   cannot be fetched or does not match `pin`.
    static func fetch(
        _ url: HTTPURL,
        _ arguments: Arguments,
        role: String,
        pin: Pin? = nil,
        maximum: Int = 16 << 20,
        report: (Report) -> Void
    ) async throws(PinFetchError) -> (bytes: [UInt8], result: FetchResult) {
        let source = url.s3?.text ?? url.oci?.text ?? url.given
        // With a cache, the file is kept there with its verified record: a rerun asks for it
        // with a condition, and a 304 costs no body (<doc:ResumeAndCheckpoints#The-verified-record>).
        // Only a URL without a secret: the entry's name is derived from the URL, and a URL that
        // differs from another only in a secret (`?token=`) gets no conditional refresh anyway.
        var kept: String?
        if let cache = arguments.options.cacheDirectory, Redaction.url(source) == source {
            let (path, warning) = DigestCache(directory: cache).inputPath(for: source)
            if let warning { report(.note("warning: \(warning)")) }
            kept = path
        }
        var directory: String?
        if kept == nil {
            do throws(PinFetchError) {
                directory = try TemporaryDirectory.make(prefix: "pinfetch-input-")
            } catch {
                // Reported as a failed fetch of the input file would be: scripts read every failure there.
                report(
                    .input(
                        role: role,
                        result: .failed(url: Self.shown(source), path: "", algorithm: .sha256, error: error)
                    )
                )
                throw error
            }
        }
        defer { if let directory { try? FileManager.default.removeItem(atPath: directory) } }
        let path = kept ?? directory! + "/input"
        var options = arguments.options
        options.progress = nil
        options.cacheDirectory = nil  // an unpinned input file never enters the cache
        // --user and -H are for the mirrors' origins: a checksum file or manifest elsewhere gets
        // neither (a netrc entry is for its own host, so it still applies).
        let mirrorOrigins = Set((arguments.urls + arguments.baseURLs).compactMap { try? HTTPURL($0).origin })
        if !mirrorOrigins.contains(url.origin) {
            options.credentials = nil
            options.headers = []
        }
        let limit = min(options.maximumFileSize ?? .max, Int64(maximum))
        options.maximumFileSize = limit  // stops while it streams
        let result = await Fetcher(options: options).run([FetchJob(urls: [url], destination: path, pin: pin)]).first!
        if let error = result.error, error.reason == .largerThanMaximumFileSize(maximum: limit) {
            let what =
                role == "signature" ? "a signature" : role == "artifact" ? "a manifest" : "a checksum file or manifest"
            throw PinFetchError(.usage, "\(Self.shown(source)) is larger than \(limit) bytes: not \(what)")
        }
        if let error = result.error {
            report(.input(role: role, result: result))
            // The message names the URL already.
            throw PinFetchError(
                error.code,
                "\(role == "artifact" ? "cannot fetch the artifact's manifest" : "cannot fetch an input file"): "
                    + error.message,
                underlying: error.underlying
            )
        }
        guard let data = FileManager.default.contents(atPath: path), Int64(data.count) <= limit else {
            throw PinFetchError(.usage, "\(Self.shown(source)) is not a small file")
        }
        // The bytes read are those placed (or recorded, after a 304): a file others may write
        // (placed under umask 000) is not changed between the two unnoticed.
        let bytes = [UInt8](data)
        guard Pin.hex(result.algorithm.digest(of: bytes)) == result.digest else {
            throw PinFetchError(.fileIO, "\(path) changed while it was read: another process writes it")
        }
        return (bytes, result)
    }
}
