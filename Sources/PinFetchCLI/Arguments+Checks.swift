import PinFetch

/// The checks made once every option is read: options that need or exclude others, and what
/// the environment adds (`PINFETCH_REMOTE_CACHE`, `JOB_COMPLETION_INDEX`). Each throws the
/// first conflict it finds; ``parsing(_:environment:)`` runs them in a fixed order, so a
/// command line with several problems always gets the same message.
extension Arguments {
    /// `--checksum-file SUMS --base-url URL/` without a URL means what `-i SUMS --base-url URL/`
    /// does: every entry (people write it both ways). The checksum file is then no pin.
    mutating func takeChecksumFileAsInput(urls: [String]) {
        guard self.inputFile == nil, urls.isEmpty, !self.baseURLs.isEmpty, let sums = self.checksumFile else { return }
        self.inputFile = sums
        self.checksumFile = nil
        self.pinOption = nil  // it was this file
    }

    /// `--base-url` turns `-i FILE` into a checksum file whose entries each have their pin.
    /// - Throws: ``ArgumentError/conflict(_:)`` for `--base-url` without `-i`, or with another pin.
    func checkBaseURLs() throws(ArgumentError) {
        guard !self.baseURLs.isEmpty else { return }
        if self.inputFile == nil { throw .conflict(.baseURLWithoutInputFile) }
        // Each entry of the checksum file has its own pin: another one would be ignored.
        if self.checksumFile != nil { throw .conflict(.checksumFileWithBaseURL) }
        if let pin = self.pinOption { throw .conflict(.pinWithBaseURL(pin)) }
    }

    /// `--shard auto --shard-count N`: this machine's shard is a Kubernetes Indexed Job's index,
    /// `JOB_COMPLETION_INDEX` (0 to N-1), so one Job with N completions mirrors a release.
    /// - Throws: ``ArgumentError/conflict(_:)`` for `--shard auto` without `--shard-count` or
    ///   without an index in range, and for `--shard-count` without `--shard auto`.
    mutating func resolveAutomaticShard(environment: [String: String]) throws(ArgumentError) {
        guard self.shardAutomatic else {
            if self.shardCount != nil { throw .conflict(.shardCountWithoutAutomaticShard) }
            return
        }
        guard let count = self.shardCount else { throw .conflict(.automaticShardWithoutCount) }
        guard let text = environment["JOB_COMPLETION_INDEX"], !text.isEmpty else {
            throw .conflict(.automaticShardWithoutIndex)
        }
        guard text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }), let index = Int(text),
            index < count
        else {
            throw .conflict(.automaticShardIndex(text, count: count))
        }
        self.shard = (index, count)
    }

    /// `--signature` and `--trusted-key` check a checksum file: one must be given,
    /// and a signature needs a key to be checked against.
    /// - Throws: ``ArgumentError/conflict(_:)`` otherwise.
    func checkSignatureOptions() throws(ArgumentError) {
        guard self.signature != nil || !self.trustedKeys.isEmpty else { return }
        guard self.checksumFile != nil || (self.inputFile != nil && !self.baseURLs.isEmpty) else {
            throw .conflict(.signatureWithoutChecksumFile)
        }
        if self.signature != nil, self.trustedKeys.isEmpty { throw .conflict(.signatureWithoutKey) }
        if self.signature == "-", self.checksumFile == "-" || self.inputFile == "-" {
            throw .conflict(.signatureAndChecksumFileFromStandardInput)
        }
    }

    /// `--no-remote-cache`, else `--remote-cache`, else `PINFETCH_REMOTE_CACHE` when set and not empty.
    /// - Throws: ``ArgumentError/refused(option:reason:)`` for a variable that is no remote cache.
    mutating func resolveRemoteCache(environment: [String: String]) throws(ArgumentError) {
        if self.noRemoteCache {
            self.options.remoteCache = nil  // a fleet-wide PINFETCH_REMOTE_CACHE is not read either
        } else if self.options.remoteCache == nil, let url = environment["PINFETCH_REMOTE_CACHE"], !url.isEmpty {
            self.options.remoteCache = try Self.remoteCache(url, from: "PINFETCH_REMOTE_CACHE")
        }
    }

    /// The files come from the command line's URLs or from `-i`, and only `-i` has many.
    /// - Throws: ``ArgumentError/noURL`` for neither, ``ArgumentError/conflict(_:)`` for both,
    ///   or for `-o` with `-i`, or `--shard` without it.
    func checkInputs(urls: [String]) throws(ArgumentError) {
        if self.inputFile != nil {
            guard urls.isEmpty else { throw .conflict(.urlsWithInputFile) }
            guard self.output == nil else { throw .conflict(.outputWithInputFile) }
        } else {
            guard !urls.isEmpty else { throw .noURL }
            if self.shard != nil { throw .conflict(.shardWithoutInputFile) }
            // An artifact's files are chosen by title too (an oci:// URL, checked once it is parsed).
            if !self.includes.isEmpty || !self.excludes.isEmpty, urls.count != 1 || !OCILocation.names(urls[0]) {
                throw .conflict(.filterWithoutInputFile)
            }
            if self.remoteName, let file = urls.first(where: { !$0.contains("://") }) {
                throw .conflict(.remoteNameWithFile(file))
            }
            try self.checkMirrorsNameOneFile(urls)
        }
    }

    /// `URL [MIRROR-URL ...]`: the URLs are mirrors of one file, so without `-o` or a pin to
    /// tie them they must name the same file (the last segment of each path); otherwise
    /// several files would be taken for one, and only the first fetched. A URL that cannot be
    /// read is left to the check that reports it.
    /// - Throws: ``ArgumentError/Conflict/severalFiles(_:_:)`` with the first two names that differ.
    private func checkMirrorsNameOneFile(_ urls: [String]) throws(ArgumentError) {
        guard urls.count > 1, self.output == nil, self.pin == nil, self.checksumFile == nil else { return }
        let names = urls.compactMap { (try? HTTPURL($0)).flatMap { try? Self.fileName(of: $0) } }
        guard let first = names.first, let other = names.first(where: { $0 != first }) else { return }
        throw .conflict(.severalFiles(first, other))
    }

    /// Options that say the same thing two ways, or need another.
    /// - Throws: ``ArgumentError/conflict(_:)`` for `-o` with `--content-disposition`, `--key`
    ///   without `--cert`, and `-v` with `-q`; ``ArgumentError/refused(option:reason:)`` for a
    ///   `--cert` file without a private key and no `--key`, and a key that is not the
    ///   certificate's (the handshake would fail on either).
    func checkExclusiveOptions() throws(ArgumentError) {
        if self.output != nil, self.contentDisposition { throw .conflict(.outputAndContentDisposition) }
        if self.options.clientKeyFile != nil, self.options.clientCertificateFile == nil {
            throw .conflict(.keyWithoutCertificate)
        }
        if let certificate = self.options.clientCertificateFile {
            let bytes = (try? InputFile.contents(of: certificate, limit: 1 << 20)) ?? []
            let keyFile = self.options.clientKeyFile
            let key = keyFile.map { (try? InputFile.contents(of: $0, limit: 1 << 20)) ?? [] } ?? bytes
            if keyFile == nil, !PEMFile.holdsPrivateKey(bytes) {
                throw .refused(
                    option: "--cert",
                    reason: "\(certificate) holds no private key OpenSSL can read: give it in the file or with --key"
                )
            }
            guard PEMFile.key(key, matchesCertificateIn: bytes) else {
                throw .refused(
                    option: keyFile == nil ? "--cert" : "--key",
                    reason:
                        "the private key in \(keyFile ?? certificate) is not the key of the certificate in \(certificate)"
                )
            }
        }
        if self.verbose, self.quiet { throw .conflict(.verboseAndQuiet) }
    }

    /// curl's spellings read as curl's users mean them: ``OptionTable/curlStandardOutput``
    /// (`first` is the argument that gave one) need somewhere to write the file other than the
    /// standard output curl would use, and `-s` with `-v` (curl's `-sv`) is `-v` without
    /// progress, which `-v` already is, rather than `-q` with `-v`.
    /// - Throws: ``ArgumentError/Conflict/curlStandardOutput(_:)``.
    mutating func checkCurlSpellings(_ given: Set<String>, first: String?) throws(ArgumentError) {
        if given.contains("--silent"), !given.contains("--quiet"), self.verbose { self.quiet = false }
        guard let first, self.output == nil, !self.remoteName, self.directory == nil, self.inputFile == nil,
            !self.contentDisposition
        else { return }
        throw .conflict(.curlStandardOutput(first))
    }

    /// The cache: none with `--no-cache`, else `--cache-dir`, else `PINFETCH_CACHE_DIR`.
    /// - Throws: ``ArgumentError/relativeCacheDirectory(_:)`` when that variable is relative.
    mutating func resolveCacheDirectory() throws(ArgumentError) {
        guard !self.noCache else { return }
        if self.cacheDirectory == nil { self.cacheDirectory = try Self.checkedEnvironmentCacheDirectory() }
        self.options.cacheDirectory = self.cacheDirectory
    }
}
