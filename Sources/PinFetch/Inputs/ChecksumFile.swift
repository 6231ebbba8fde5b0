/// A parsed checksum file (`SHA256SUMS`, `SHA512SUMS`, `CHECKSUM`, `*.sha256`, ...), for
/// `--checksum-file` and `--base-url` (<doc:CommandLine>, <doc:Architecture#Many-files>).
///
/// Accepted lines, each on its own line (LF or CRLF):
/// - GNU coreutils (`sha256sum`): `HEX  name`, `HEX *name` (binary flag), `HEX name` (the
///   `md5 -r` form) and `HEX<TAB>name`. The algorithm follows from the number of hex digits
///   (any case): 64 is SHA-256, 96 SHA-384 and 128 SHA-512 (so a `b2sum` file reads as SHA-512
///   and then fails to match: exit 9, never a false pass); 32 (MD5), 40 (SHA-1) and 56
///   (SHA-224) are recorded as unsupported. A line that starts with `\` has an escaped name:
///   `\\` is a backslash, `\n` a line feed, `\r` a carriage return (coreutils `digest.c`); any
///   other escape makes it no checksum line.
/// - BSD tagged (`sha256sum --tag`, `shasum --tag`, FreeBSD `sha256`, Fedora `CHECKSUM`):
///   `SHA256 (name) = HEX`, also `SHA-256`, `SHA384`, `SHA512` (with or without the dash), and OpenSSL's `dgst` spelling
///   `SHA2-256(name)= HEX`. The name ends at the last `) = ` (or `)= `), so names may hold spaces
///   and parentheses. A supported algorithm also takes its digest in base64 (`cksum --base64`).
///   `MD5` and `SHA1` (`SHA-1`) lines are taken, as weak (``HashAlgorithm/isWeak``), and an
///   entry of a stronger algorithm for the same name always wins over them. Any other tag
///   (`SHA224`, `BLAKE2b`, ...) is recorded as unsupported.
/// - A bare digest: the file's only line is one hex digest (Go's and Kubernetes' `*.sha256`), or
///   its only checksum line names `-` (what `sha256sum < file` writes). It applies to any name.
///
/// Decoding: a UTF-8 byte order mark is dropped; a UTF-16 LE or BE byte order mark makes the file
/// UTF-16 (PowerShell 5 writes that); otherwise UTF-8, with invalid bytes read as U+FFFD.
/// Blank lines, `#` comments and other lines that are not checksum lines are skipped, as is a
/// line that starts with white space (so the indented `hex size path` lines of a Debian `Release`
/// file are not misread as names). An OpenPGP clear-signed wrapper (RFC 4880 §7) is unwrapped:
/// its armor headers and signature block are skipped, dash-escaped lines (`- `) un-escaped; its
/// signature is checked by ``SignatureCheck`` (with `--trusted-key`), not here. Pure Swift with no C import, so it can be fuzzed on its own.
package struct ChecksumFile: Sendable {
    /// One checksum line of a supported algorithm.
    package struct Entry: Sendable, Hashable {
        /// The file name as written (escapes decoded), e.g. `./dist/app.tar.gz`.
        package var name: String
        /// The digest for that name.
        package var pin: Pin
        /// The 1-based line number in the decoded file, for messages.
        package var line: Int

        /// Creates an entry for `name` with `pin`, found on `line` (1-based).
        package init(name: String, pin: Pin, line: Int) {
            self.name = name
            self.pin = pin
            self.line = line
        }
    }

    /// A checksum line of an algorithm pinfetch does not verify; kept to say so in messages.
    struct UnsupportedEntry: Sendable, Hashable {
        /// The name, or `nil` for a bare digest.
        var name: String?
        /// The algorithm, lower case: `md5`, `sha1`, `sha224`, or a BSD tag as written.
        var algorithm: String
        var line: Int
    }

    /// The checksum lines of SHA-256 and SHA-512, in file order (duplicates kept).
    package var entries: [Entry]
    /// The digest of a bare-digest file, which ``pin(for:)`` returns for any name; `entries` is
    /// then empty.
    package var bareDigest: Pin?
    /// Lines of other algorithms, in file order.
    var unsupportedEntries: [UnsupportedEntry]
    /// Lines whose name is not UTF-8 (a Latin-1 `SHA256SUMS`, say): kept out of ``entries``, as
    /// no name pinfetch is given can be theirs, and refused when they would become downloads.
    package var undecodableLines: [Int] = []

    /// The largest checksum file accepted: 16 MiB.
    package static let maximumSize = 16 << 20

    /// Parses the bytes of a checksum file.
    /// - Parameter bytes: The whole file, at most ``maximumSize`` bytes.
    /// - Throws: ``PinFetchError/Code/usage`` (exit 2) when the file is larger than 16 MiB, or has
    ///   no checksum line at all (of any algorithm).
    package init(parsing bytes: [UInt8]) throws(PinFetchError) {
        guard bytes.count <= Self.maximumSize else {
            throw PinFetchError(.usage, "checksum file is larger than 16 MiB (\(bytes.count) bytes)")
        }
        self.entries = []
        self.bareDigest = nil
        self.unsupportedEntries = []
        let text = Self.decodedText(bytes)
        var lines = text.split(separator: 0x0A, omittingEmptySubsequences: false)
        if lines.last?.isEmpty == true { lines.removeLast() }  // the final line feed
        var state = ArmorState.text
        var contentLines: [(bytes: ArraySlice<UInt8>, number: Int)] = []
        for (offset, rawLine) in lines.enumerated() {
            var line = rawLine
            if line.last == 0x0D { line.removeLast() }
            let trimmed = line.trimmingTrailingSpaces()
            switch state {
            case .text where trimmed.elementsEqual(Self.beginSignedMessage):
                state = .armorHeaders
                continue
            case .armorHeaders:
                if trimmed.isEmpty { state = .signedBody }  // `Hash: SHA256` until the blank line
                continue
            case .signature:
                if trimmed.elementsEqual(Self.endSignature) { state = .text }
                continue
            case .text, .signedBody:
                if trimmed.elementsEqual(Self.beginSignature) {
                    state = .signature
                    continue
                }
                if state == .signedBody {
                    // Dash-escaped lines, and trailing white space, which a signature ignores
                    // (RFC 4880 §7.1): what gpgv gives as the signed text.
                    if line.starts(with: [0x2D, 0x20]) { line.removeFirst(2) }
                    line = line.trimmingTrailingSpaces()
                }
            }
            guard let first = line.first, !trimmed.isEmpty, first != UInt8(ascii: "#") else { continue }
            contentLines.append((line, offset + 1))
            self.addChecksumLine(line, number: offset + 1)
        }
        self.collapseToBareDigest(contentLines: contentLines)
        guard !self.entries.isEmpty || self.bareDigest != nil || !self.unsupportedEntries.isEmpty else {
            throw PinFetchError(
                .usage,
                "no checksum lines in the checksum file (expected 'HEX  name' or 'SHA256 (name) = HEX')"
            )
        }
    }

    /// Whether `bytes` hold an OpenPGP clear-signed message (a `-----BEGIN PGP SIGNED
    /// MESSAGE-----` line, RFC 4880 §7), whose signature `gpgv` can check.
    package static func isClearSigned(_ bytes: [UInt8]) -> Bool {
        Self.decodedText(bytes).split(separator: 0x0A).contains { line in
            var line = line
            if line.last == 0x0D { line.removeLast() }
            return line.trimmingTrailingSpaces().elementsEqual(Self.beginSignedMessage)
        }
    }

    /// The pin for the file at a URL whose path has the (percent-decoded) `urlPathSegments`,
    /// saved as `fileName`.
    ///
    /// The entries whose name, split at `/` after any leading `./`, is the longest suffix of the
    /// URL's path decide: in a tree, `linux/amd64/tool` matches `…/linux/amd64/tool` and not
    /// `…/darwin/arm64/tool`, and `-o tool …/tool-1.2-linux-amd64` finds `tool-1.2-linux-amd64`.
    /// When no entry's name is such a suffix, ``pin(for:)`` looks `fileName` up among the others:
    /// an entry for the URL's file name in another directory (`darwin/arm64/tool` for
    /// `…/linux/amd64/tool`) describes another file, and is never used for this one.
    ///
    /// - Throws: ``PinFetchError/Code/usage`` (exit 2) when the entries that match best disagree
    ///   (two digests of one algorithm), when only another directory's entry has the URL's file
    ///   name, and as ``pin(for:)`` when none is a suffix.
    package func pin(forURLPath urlPathSegments: [String], fileName: String) throws(PinFetchError) -> Pin {
        var best: [Entry] = []
        var bestLength = 0
        for entry in self.entries {
            // By bytes: "/" and a combining mark after it are one Character, unequal to "/".
            let segments = Self.withoutDotSlash(entry.name).utf8.split(
                separator: UInt8(ascii: "/"),
                omittingEmptySubsequences: false
            )
            guard !segments.contains(where: \.isEmpty), segments.count <= urlPathSegments.count,
                zip(segments.reversed(), urlPathSegments.reversed()).allSatisfy({ $0.elementsEqual($1.utf8) })
            else { continue }
            if segments.count > bestLength {
                (best, bestLength) = ([entry], segments.count)
            } else if segments.count == bestLength {
                best.append(entry)
            }
        }
        if let first = best.first { return try Self.strongest(of: best, for: first.name).pin }
        guard let urlName = urlPathSegments.last, !urlName.isEmpty else { return try self.pin(for: fileName) }
        var others = self
        others.entries.removeAll { Self.names($0.name, inLastComponent: urlName) }
        do throws(PinFetchError) {
            return try others.pin(for: fileName)
        } catch {
            guard let elsewhere = self.entries.first(where: { Self.names($0.name, inLastComponent: urlName) }) else {
                guard urlName != fileName else { throw error }
                // Looked up by both names: say so, and what the file has for the URL's (md5 only, say).
                do throws(PinFetchError) {
                    _ = try others.pin(for: urlName)
                } catch let byURL where byURL.message.hasPrefix("the checksum file has only") {
                    throw byURL
                } catch {}
                if error.message.hasPrefix("the checksum file has only") { throw error }
                throw PinFetchError(
                    .usage,
                    "no checksum for \(SafeFileName.quoted(urlName)) (the URL's file) or "
                        + "\(SafeFileName.quoted(fileName)) (the output) in the checksum file"
                )
            }
            throw PinFetchError(
                .usage,
                "no checksum for \(SafeFileName.quoted(urlName)) in the checksum file: its "
                    + "\(SafeFileName.quoted(elsewhere.name)) (line \(elsewhere.line)) is in another directory than "
                    + "the URL's, so it may be another file (give --sha256 when it is this one)"
            )
        }
    }

    /// The pin for `fileName`.
    ///
    /// An entry matches when its name, its name without leading `./`, or (only when nothing
    /// matched that way) its last path component after `/` or `\` equals `fileName`: so
    /// `./dist/app.tar.gz` matches `app.tar.gz`, while `linux/app` and `darwin/app` with different
    /// digests leave `app` ambiguous. Entries of SHA-256 and SHA-512 for one name do not
    /// conflict: the SHA-512 one is returned. A bare digest matches any name.
    ///
    /// - Throws: ``PinFetchError/Code/usage`` (exit 2) when no entry matches; when only entries of
    ///   unsupported algorithms match (naming them); or when two matching entries of one
    ///   algorithm have different digests (the same digest twice is fine).
    package func pin(for fileName: String) throws(PinFetchError) -> Pin {
        let exact = self.entries.filter { Self.names($0.name, exactly: fileName) }
        let matches = exact.isEmpty ? self.entries.filter { Self.names($0.name, inLastComponent: fileName) } : exact
        guard !matches.isEmpty else {
            if let bare = self.bareDigest { return bare }
            let unsupported = self.unsupportedEntries.filter { entry in
                guard let name = entry.name else { return true }
                return Self.names(name, exactly: fileName) || Self.names(name, inLastComponent: fileName)
            }
            var algorithms: [String] = []
            for entry in unsupported where !algorithms.contains(entry.algorithm) { algorithms.append(entry.algorithm) }
            if !algorithms.isEmpty {
                throw PinFetchError(
                    .usage,
                    "the checksum file has only \(algorithms.joined(separator: ", ")) checksums for "
                        + "\(SafeFileName.quoted(fileName)) (pinfetch verifies sha256, sha384 and sha512; md5 and "
                        + "sha1 only spelled out, as a tagged 'MD5 (name) = HEX' line or --checksum md5:HEX)"
                )
            }
            throw PinFetchError(.usage, "no checksum for \(SafeFileName.quoted(fileName)) in the checksum file")
        }
        return try Self.strongest(of: matches, for: fileName).pin
    }

    /// The entry of the strongest algorithm among `entries` (all for `name`, at least one).
    /// - Throws: ``PinFetchError/Code/usage`` when two entries of one algorithm disagree.
    static func strongest(of entries: [Entry], for name: String) throws(PinFetchError) -> Entry {
        var best = entries[0]
        for entry in entries {
            if let other = entries.first(where: { $0.pin.algorithm == entry.pin.algorithm && $0.pin != entry.pin }) {
                throw PinFetchError(
                    .usage,
                    "two different \(entry.pin.algorithm.rawValue) checksums for \(SafeFileName.quoted(name)) "
                        + "in the checksum file (lines \(entry.line) and \(other.line))"
                )
            }
            if entry.pin.algorithm.digestLength > best.pin.algorithm.digestLength { best = entry }
        }
        return best
    }
}
