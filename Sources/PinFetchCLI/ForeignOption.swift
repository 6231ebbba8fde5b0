/// What an unknown option tells its user: for an option of curl's or wget's that pinfetch does
/// not take, what to give instead or why there is none; for a near miss of one of pinfetch's
/// own spellings, that spelling.
enum ForeignOption {
    /// Why `-k`, `--insecure` and `--no-check-certificate` are refused.
    static let insecure =
        "certificate verification cannot be turned off; trust the server's CA with --cacert FILE "
        + "(or CURL_CA_BUNDLE)"

    private static let noBody = "pinfetch only downloads (GET): it sends no request body"
    private static let progress = "progress shows by itself on a terminal; -q hides it, -v says more"
    private static let credentials = "give -u USER:PASSWORD (Basic), or -H 'Authorization: ...'"

    private static let addresses =
        "pinfetch connects to the addresses the host name resolves to, IPv6 and IPv4 (libcurl's happy eyeballs)"
    private static let naming =
        "pinfetch names a file after its URL's last segment and makes no directories from the URL: give -o PATH, "
        + "or a name on each line of -i MANIFEST"
    private static let protocols =
        "pinfetch speaks only HTTP and HTTPS, and refuses a redirect from https to http (--allow-insecure-redirect)"
    private static let tlsVersion =
        "the TLS version is the system OpenSSL's choice (TLS 1.2 or later where it is configured so, as on Debian)"

    /// curl's and wget's options, by spelling, with what to do instead.
    static let hints: [String: String] = [
        "--no-check-certificate": Self.insecure,
        "-X": "pinfetch only downloads (GET): there is no other method",
        "--request": "pinfetch only downloads (GET): there is no other method",
        "--method": "pinfetch only downloads (GET): there is no other method",
        "-d": Self.noBody, "--data": Self.noBody, "--data-binary": Self.noBody, "--data-raw": Self.noBody,
        "-F": Self.noBody, "--form": Self.noBody, "--upload-file": Self.noBody, "--post-data": Self.noBody,
        "--post-file": Self.noBody, "--body-data": Self.noBody,
        "-I": "--dry-run says what would be fetched, -v shows each answer's deciding fields",
        "--head": "--dry-run says what would be fetched, -v shows each answer's deciding fields",
        "--spider": "--dry-run says what would be fetched, -v shows each answer's deciding fields",
        "-b": "give a cookie as -H 'Cookie: NAME=VALUE'", "--cookie": "give a cookie as -H 'Cookie: NAME=VALUE'",
        "-e": "curl's -e is -H 'Referer: URL'; wget's -e COMMAND (robots=off) is not needed: pinfetch "
            + "does not crawl",
        "--execute": "not needed: pinfetch does not crawl (it never reads robots.txt)",
        "--referer": "give -H 'Referer: URL'",
        "--retry-all-errors": "pinfetch retries what another attempt may cure (network errors, HTTP 408, "
            + "429 and 5xx; --retries N): a 404 or a digest mismatch is final",
        "--fail-with-body": "an HTTP error is always a failure (exit 8), and its body is never written",
        "-4": Self.addresses, "-6": Self.addresses, "--ipv4": Self.addresses, "--ipv6": Self.addresses,
        "--inet4-only": Self.addresses, "--inet6-only": Self.addresses,
        "-nd": Self.naming, "--no-directories": Self.naming, "-nH": Self.naming, "--no-host-directories": Self.naming,
        "--cut-dirs": Self.naming, "-np": Self.naming, "--no-parent": Self.naming, "--force-directories": Self.naming,
        "--proto": Self.protocols, "--proto-redir": Self.protocols, "--proto-default": Self.protocols,
        "--https-only": Self.protocols,
        "--tlsv1": Self.tlsVersion, "--tlsv1.0": Self.tlsVersion, "--tlsv1.1": Self.tlsVersion,
        "--tlsv1.2": Self.tlsVersion, "--tlsv1.3": Self.tlsVersion, "--tls-max": Self.tlsVersion,
        "--ssl-reqd": Self.tlsVersion, "--secure-protocol": Self.tlsVersion,
        "--compressed": "pinfetch asks for the bytes as stored, which are what a pin describes",
        "-w": "curl's -w: --json prints each file's result; wget's -w: pinfetch waits only before a retry "
            + "(--retry-delay S)",
        "--write-out": "--json prints each file's result as one JSON object",
        "-#": Self.progress, "--progress-bar": Self.progress, "--progress": Self.progress,
        "-nv": Self.progress, "--no-verbose": Self.progress,
        "-N": "a rerun asks the server whether its recorded file changed (If-None-Match, If-Modified-Since)",
        "--timestamping":
            "a rerun asks the server whether its recorded file changed (If-None-Match, If-Modified-Since)",
        "-z": "a rerun asks the server whether its recorded file changed (If-None-Match, If-Modified-Since)",
        "-r": "pinfetch fetches listed files: -i MANIFEST, or -i SHA256SUMS --base-url URL",
        "--recursive": "pinfetch fetches listed files: -i MANIFEST, or -i SHA256SUMS --base-url URL",
        "--mirror": "pinfetch fetches listed files: -i MANIFEST, or -i SHA256SUMS --base-url URL",
        "-B": "with -i SHA256SUMS, give --base-url URL", "--base": "with -i SHA256SUMS, give --base-url URL",
        "-T": "wget's -T S is --connect-timeout S and --stall-timeout S here; curl's -T uploads, which pinfetch "
            + "does not",
        "--timeout": "give --connect-timeout S and --stall-timeout S",
        "--read-timeout": "give --stall-timeout S", "--dns-timeout": "give --connect-timeout S",
        "--waitretry": "give --retry-delay S (the back-off's base)",
        "--retry-max-time": "give --max-time S (each file's whole fetch, retries included)",
        "-Z": "-j N fetches N files at once (list them with -i FILE)",
        "--parallel": "-j N fetches N files at once (list them with -i FILE)",
        "--parallel-max": "-j N fetches N files at once (list them with -i FILE)",
        "--http1.1": "the HTTP version is not chosen: HTTP/2 is offered over TLS, HTTP/1.1 taken otherwise",
        "--http2": "the HTTP version is not chosen: HTTP/2 is offered over TLS, HTTP/1.1 taken otherwise",
        "--http3": "the HTTP version is not chosen: HTTP/2 is offered over TLS, HTTP/1.1 taken otherwise",
        "-K": "there is no configuration file: give the options, and -H @FILE for headers",
        "--config": "there is no configuration file: give the options, and -H @FILE for headers",
        "--output-document": "give -o FILE (or -o - for standard output)",
        "--ca-certificate": "give --cacert FILE", "--certificate": "give --cert FILE",
        "--private-key": "give --key FILE",
        "--http-user": Self.credentials, "--http-password": Self.credentials, "--password": Self.credentials,
        "--digest": Self.credentials, "--ntlm": Self.credentials, "--negotiate": Self.credentials,
        "--anyauth": Self.credentials,
        "--no-proxy": "give --proxy '' (no proxy) or --noproxy HOSTS",
        "--wait": "pinfetch waits only before a retry (--retry-delay S); -j N says how many files at once",
        "--random-wait": "pinfetch waits only before a retry (--retry-delay S, with jitter)",
        "--show-progress": Self.progress,
        "--resolve": "pinfetch resolves host names with the system's resolver: for a test, an /etc/hosts line",
        "--connect-to": "pinfetch resolves host names with the system's resolver: for a test, an /etc/hosts line",
        "--capath": "give --cacert FILE (a bundle of PEM certificates), or set CURL_CA_BUNDLE",
        "--ca-directory": "give --cacert FILE (a bundle of PEM certificates), or set CURL_CA_BUNDLE",
        "--remote-name-all":
            "a file is named after its URL's last segment already (-O is the default); for several files give -i FILE",
        "--retry-on-http-error": "pinfetch retries HTTP 408, 429 and 5xx (--retries N); other statuses are final",
        "--location-trusted": "credentials go only to the origin they were given for: give -u again for the "
            + "redirect's host, or a netrc entry for it",
        "--sha512": "give --checksum sha512:HEX (sha384: and sha256: too), or --sha256 HEX",
        "--sha384": "give --checksum sha384:HEX (sha512: and sha256: too), or --sha256 HEX",
        "--sha1": "give --checksum sha1:HEX (weak: a warning is printed)",
        "--md5": "give --checksum md5:HEX (weak: a warning is printed)",
        "--outdir": "give --output-dir DIR (or -P DIR)", "--dir": "give --output-dir DIR (or -P DIR)",
        "--convert-links": "not needed: pinfetch does not crawl, so no page's links are rewritten",
    ]

    /// `-k` is curl's `--insecure`, which is refused, and wget's `--convert-links`, not needed.
    static let shortK = Self.insecure + "; wget's -k (--convert-links) is not needed: pinfetch does not crawl"

    /// curl's `-c FILE` (a cookie jar) read as wget's `-c` (`--continue`) and a URL `FILE`.
    static func cookieJar(_ file: String) -> String {
        "-c is wget's --continue here (always done), so '\(file)' would be a URL: curl's -c FILE (a cookie jar) "
            + "is not kept; give cookies as -H 'Cookie: NAME=VALUE'"
    }

    /// The line's text after `unknown option SPELLING`: a hint for a curl or wget option, or the
    /// nearest of pinfetch's long spellings when it is one or two edits away.
    static func advice(for spelling: String) -> String {
        if let hint = Self.hints[spelling] { return ": " + hint }
        if spelling.hasPrefix("--"), spelling.count > 4,
            let nearest = OptionTable.all.map(\.long).min(by: {
                Self.distance(spelling, $0) < Self.distance(spelling, $1)
            }), Self.distance(spelling, nearest) <= 2
        {
            return " (did you mean \(nearest)? see --help)"
        }
        return " (see --help)"
    }

    /// The Levenshtein distance between `a` and `b`, in characters.
    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        var previous = Array(0...b.count)
        for (i, x) in a.enumerated() {
            var current = [i + 1]
            for (j, y) in b.enumerated() {
                current.append(min(previous[j + 1] + 1, current[j] + 1, previous[j] + (x == y ? 0 : 1)))
            }
            previous = current
        }
        return previous[b.count]
    }
}
