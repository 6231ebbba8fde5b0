import FoundationEssentials
@preconcurrency import Glibc
import PinFetch

/// Turns the command line into the files to fetch: one file from the URLs given (mirrors of
/// it), or many from `-i` (the Architecture article, "Many files").
enum JobPlan {
    /// What planning reports as it goes, for `--json` (every file gets its line): the fetch of
    /// an input file given by URL that failed (`role` is `checksum-file` or `manifest`), and the
    /// files that will not be started because of it.
    enum Report {
        case input(role: String, result: FetchResult)
        case skipped(FetchResult)
        /// A line for standard error: about the checksum file's signature.
        case note(String)
    }

    /// The jobs, in order.
    /// - Parameter report: Told of an input file whose fetch failed, and of the files skipped
    ///   for it, before the error is thrown.
    /// - Throws: ``PinFetchError/Code/usage`` for anything about the input that is wrong, before
    ///   any file is created; the error of an input file's fetch.
    static func jobs(
        for arguments: Arguments,
        report: (Report) -> Void = { _ in }
    ) async throws(PinFetchError) -> [FetchJob] {
        // Each URL is parsed once, here: exit 2 before any file is touched.
        let urls = try arguments.urls.map { (text) throws(PinFetchError) in try HTTPURL(text) }
        if urls.count > 1, let tag = urls.first(where: { $0.oci?.isManifest == true })?.oci {
            throw PinFetchError(.usage, "\(tag.text) names an artifact: give it as the only URL")
        }
        let keys = try Self.trustedKeys(arguments)  // a bad key file is exit 2 before any request
        var jobs = try await Self.plan(arguments, urls: urls, keys: keys, report: report)
        for index in jobs.indices {
            jobs[index].pin = try FragmentPin.pin(of: jobs[index])
            jobs[index].hashedMirrors = arguments.hashedMirrors + jobs[index].hashedMirrors
        }
        for job in jobs {
            var info = stat()
            let exists = stat(job.destination, &info) == 0
            if exists, (info.st_mode & S_IFMT) == S_IFDIR {
                throw PinFetchError(.usage, "\(job.destination) is a directory: name the file (-o DIR/NAME or -P DIR)")
            }
            if job.destination.hasSuffix("/") {
                throw PinFetchError(
                    .usage,
                    "\(job.destination) ends in '/', so it names a directory: name the file (-o DIR/NAME or -P DIR)"
                )
            }
            if let refusal = DestinationType.refusal(job.destination) { throw PinFetchError(.usage, refusal) }
        }
        return jobs
    }

    /// The files, pinned by the checksum file when one is given. The checksum file is read after
    /// the files are known, so a failed fetch of it reports each of them as skipped.
    private static func plan(
        _ arguments: Arguments,
        urls: [HTTPURL],
        keys: TrustedKeys?,
        report: (Report) -> Void
    ) async throws(PinFetchError) -> [FetchJob] {
        var jobs = try await Self.listed(arguments, urls: urls, keys: keys, report: report)
        guard let source = arguments.checksumFile else { return jobs }
        // A malformed pin in a URL's fragment is bad input before any request (the checksum
        // file's fetch included).
        for job in jobs { _ = try FragmentPin.pin(of: job) }
        let bytes: [UInt8]
        do throws(PinFetchError) {
            bytes = try await Self.load(source, arguments, role: "checksum-file", report: report)
        } catch {
            if error.code != .usage {
                let reason = "the checksum file \(Self.shown(source)) could not be fetched"
                for job in jobs { report(.skipped(.skipped(job, cause: error.code, reason: reason))) }
            }
            throw error
        }
        let sums: ChecksumFile
        do throws(PinFetchError) {
            let signed = try await Self.signedContent(bytes, of: source, arguments, keys: keys, report: report)
            sums = try ChecksumFile(parsing: signed)
        } catch {
            if error.code == .digestMismatch {
                let reason = "the checksum file \(Self.shown(source)) is not signed by a trusted key"
                for job in jobs { report(.skipped(.skipped(job, cause: error.code, reason: reason))) }
            }
            throw PinFetchError(error.code, "\(Self.shown(source)): \(error.message)", underlying: error.underlying)
        }
        // With --trusted-key only the signed file pins: a pin given elsewhere (a manifest line)
        // must agree with it, and is replaced by it.
        for index in jobs.indices where jobs[index].pin == nil || keys != nil {
            let pin = try sums.pin(
                forURLPath: (try? jobs[index].urls.get())?.first?.pathSegments ?? [],
                fileName: Text.lastPathComponent(jobs[index].destination)
            )
            if let own = jobs[index].pin, own.algorithm == pin.algorithm, own != pin {
                throw PinFetchError(
                    .usage,
                    "\(jobs[index].destination): the pin given for it disagrees with the signed checksum file"
                )
            }
            jobs[index].pin = pin
        }
        return jobs
    }

    /// The files the command line or the input file lists, with the pins they carry.
    private static func listed(
        _ arguments: Arguments,
        urls: [HTTPURL],
        keys: TrustedKeys?,
        report: (Report) -> Void
    ) async throws(PinFetchError)
        -> [FetchJob]
    {
        guard let input = arguments.inputFile else {
            if let artifact = ArtifactPlan.artifact(urls.first, arguments) {
                return try await ArtifactPlan.jobs(for: artifact, arguments, report: report)
            }
            if !arguments.includes.isEmpty || !arguments.excludes.isEmpty {
                throw PinFetchError(
                    .usage,
                    "--include and --exclude choose files of an artifact: a blob is one file (give -P DIR for a manifest's)"
                )
            }
            let destination = try arguments.destination(of: urls.first)
            let directory = arguments.contentDisposition ? arguments.directory ?? "." : nil
            return [
                FetchJob(
                    urls: urls,
                    destination: destination,
                    pin: arguments.pin,
                    namingDirectory: directory
                )
            ]
        }

        let role = arguments.baseURLs.isEmpty ? "manifest" : "checksum-file"
        let bytes = try await Self.load(input, arguments, role: role, report: report)
        var manifest: Manifest
        do throws(PinFetchError) {
            if !arguments.baseURLs.isEmpty {
                let signed = try await Self.signedContent(bytes, of: input, arguments, keys: keys, report: report)
                manifest = try Manifest(checksumFile: ChecksumFile(parsing: signed), baseURLs: arguments.baseURLs)
            } else {
                guard let text = String(validating: bytes, as: UTF8.self) else {
                    // Decoded leniently, a name would become another (U+FFFD for each bad byte).
                    let line =
                        bytes.split(separator: 0x0A, omittingEmptySubsequences: false)
                        .firstIndex { String(validating: $0, as: UTF8.self) == nil }.map { $0 + 1 } ?? 1
                    throw PinFetchError(.usage, "line \(line) is not UTF-8 text (convert the file with iconv)")
                }
                manifest = try Manifest(parsing: text)
            }
        } catch {
            throw PinFetchError(error.code, "\(input): \(error.message)", underlying: error.underlying)
        }
        // An empty list is a mistake (a truncated download, the wrong file), not a success; a shard
        // that happens to get no entry of a non-empty list has nothing to do.
        guard !manifest.entries.isEmpty else { throw PinFetchError(.usage, "\(input) lists no file to fetch") }
        manifest = try Self.filtered(manifest, arguments, input: input)
        if let (k, n) = arguments.shard { manifest = manifest.shard(k, of: n) }
        let directory = arguments.directory ?? "."
        var jobs: [FetchJob] = []
        var outputs = OutputNames()
        for entry in manifest.entries {
            let urls = try entry.mirrors.map { (text) throws(PinFetchError) in try HTTPURL(text) }
            if let tag = urls.first(where: { $0.oci?.isManifest == true })?.oci {
                throw PinFetchError(
                    .usage,
                    "\(input):\(entry.line): \(tag.text) names an artifact: fetch it alone, with -P DIR (a line "
                        + "takes a blob, oci://REGISTRY/REPOSITORY@sha256:HEX)"
                )
            }
            var name = entry.output ?? ""
            if entry.output == nil { name = try Arguments.fileName(of: urls[0]) }
            let destination: String
            do throws(PinFetchError) {
                let resolved = try SafeFileName.resolve(name, in: directory)
                destination = resolved.hasPrefix("./") ? String(resolved.dropFirst(2)) : resolved  // no -P: plain names
            } catch {
                throw PinFetchError(error.code, "\(input):\(entry.line): \(error.message)")
            }
            try outputs.claim(destination, line: entry.line, input: input)
            let pin = entry.pin ?? arguments.pin
            let naming = arguments.contentDisposition && entry.output == nil ? directory : nil
            var job = FetchJob(urls: urls, destination: destination, pin: pin, namingDirectory: naming)
            job.hashedMirrors = manifest.hashedMirrors
            jobs.append(job)
        }
        return jobs
    }

    /// The keys of `--trusted-key`, read before any request; `nil` without any.
    /// - Throws: ``PinFetchError/Code/usage`` for a key file that cannot be read or is no key.
    static func trustedKeys(_ arguments: Arguments) throws(PinFetchError) -> TrustedKeys? {
        guard !arguments.trustedKeys.isEmpty else { return nil }
        var files: [(name: String, bytes: [UInt8])] = []
        for path in arguments.trustedKeys {
            guard let key = try InputFile.contents(of: path, limit: 1 << 20) else {
                throw PinFetchError(.usage, "--trusted-key \(path): cannot read it, or it is larger than 1 MiB")
            }
            files.append((path, key))
        }
        return try TrustedKeys(files: files)
    }

    /// The checksum file's bytes to use, once its signature is checked: with
    /// `keys` (`--trusted-key`), what a trusted key signed (the file, or a clear-signed file's
    /// signed text); without, the file as it is, with a note when it carries a signature
    /// nobody checks.
    /// - Throws: ``PinFetchError/Code/digestMismatch`` (exit 9) for a checksum file no trusted
    ///   key signed; the fetch's error for a signature that cannot be fetched.
    static func signedContent(
        _ bytes: [UInt8],
        of source: String,
        _ arguments: Arguments,
        keys: TrustedKeys?,
        report: (Report) -> Void
    ) async throws(PinFetchError) -> [UInt8] {
        guard let keys else {
            if ChecksumFile.isClearSigned(bytes) {
                report(
                    .note(
                        "warning: \(Self.shown(source)) is PGP-signed; the signature is not checked (--trusted-key checks it)"
                    )
                )
            }
            return bytes
        }
        var signature: [UInt8]?
        if let path = arguments.signature {
            signature = try await Self.load(path, arguments, role: "signature", report: report)
        }
        let verified = try SignatureCheck(keys: keys).verify(checksumFile: bytes, signature: signature)
        if arguments.verbose { report(.note("\(Self.shown(source)) is signed by \(verified.signer)")) }
        return verified.content
    }

    /// An input file's name as messages show it: a URL without its secrets, a path as given.
    static func shown(_ source: String) -> String {
        let lower = source.lowercased()
        return lower.hasPrefix("http://") || lower.hasPrefix("https://") ? Redaction.url(source) : source
    }

    /// One spelling per file for the checks of a batch: the directory part with its symbolic
    /// links resolved as far as it exists (`link/f` and `real/f` are one file when `link` points
    /// to `real`), then the name. The name itself is not resolved: a link there is replaced by
    /// the verified file, never written through.
    static func canonical(_ path: String) -> String {
        let url = URL(filePath: path)
        let name = url.lastPathComponent
        let directory = url.deletingLastPathComponent().standardizedFileURL.resolvingSymlinksInPath()
        return directory.path + "/" + name
    }
}
