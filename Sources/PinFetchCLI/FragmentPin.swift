import PinFetch

/// Pins that URLs carry in their fragment, as pip and PyPI's simple index write them
/// (`#sha256=HEX`, `#egg=name&sha512=HEX`, and in older indexes `#md5=HEX`): the fragment is
/// never sent (RFC 9110 §4.2.4), so it is the link's own statement of the file's digest.
enum FragmentPin {
    /// The pin of `job`: its own (a flag, a manifest, a checksum file) and any that its URLs
    /// carry in their fragment, which must all agree. A fragment parameter is percent-decoded
    /// first (`sha256%3DHEX`). A weak one (`md5=`, `sha1=`, ``HashAlgorithm/isWeak``) is taken
    /// only when no stronger pin is given, and gets the weak pin's warning as `--checksum
    /// md5:HEX` does.
    /// - Throws: ``PinFetchError/Code/usage`` for a malformed digest in a fragment, a parameter
    ///   that names a digest in another way (`sha256` without a value, `sha-256=`, `sha224=`: a
    ///   pin the user meant is never ignored), or pins for one file that disagree (other
    ///   digests, or other algorithms of the same strength: one file, one pin).
    static func pin(of job: FetchJob) throws(PinFetchError) -> Pin? {
        var pin = job.pin
        for parsed in (try? job.urls.get()) ?? [] {
            guard let fragment = parsed.fragment else { continue }
            // The digest's value is no secret, but a fragment may hold one (`#access_token=`):
            // messages name the URL without it and the parameter by its name.
            let url = Redaction.url(parsed.text) + "#…"
            for parameter in fragment.split(separator: "&") {
                let decoded = Text.percentDecoded(parameter) ?? String(parameter)
                let parts = decoded.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let name = parts[0].lowercased()
                guard ["sha256", "sha384", "sha512", "md5", "sha1"].contains(name), parts.count == 2 else {
                    if Self.namesDigest(name) {
                        throw PinFetchError(
                            .usage,
                            "\(url): the fragment's \(SafeFileName.quoted(String(parts[0]))) is no pin "
                                + "pinfetch can check; write sha256=HEX, sha384=HEX or sha512=HEX"
                        )
                    }
                    continue
                }
                let found: Pin
                do throws(PinFetchError) {
                    found = try Pin(parsing: "\(name):\(parts[1])")
                } catch {
                    throw PinFetchError(.usage, "\(url): the fragment's \(name) is not a digest: \(error.message)")
                }
                if let earlier = pin, earlier != found {
                    // A weak pin beside a stronger one adds nothing: the stronger decides.
                    if found.algorithm.isWeak, !earlier.algorithm.isWeak { continue }
                    if earlier.algorithm.isWeak, !found.algorithm.isWeak {
                        pin = found
                        continue
                    }
                    throw PinFetchError(
                        .usage,
                        "\(job.destination): two pins disagree: \(earlier) and \(found) (from \(url))"
                    )
                }
                pin = found
            }
        }
        return pin
    }

    /// Whether a fragment parameter's name (lower-cased) names a digest algorithm, as pip's
    /// (`md5`, `sha1`, `sha224`), RFC 9530's (`sha-256`) or SRI's (`integrity`) do.
    private static func namesDigest(_ name: String) -> Bool {
        let bare = name.filter { $0 != "-" && $0 != "_" }
        if ["md5", "integrity", "checksum", "digest", "hash"].contains(bare) { return true }
        for family in ["sha", "sha3", "blake2b", "blake2s", "blake3"] where bare.hasPrefix(family) {
            if bare.dropFirst(family.count).allSatisfy(\.isNumber) { return true }
        }
        return false
    }
}
