internal import CCurl
import FoundationEssentials
@preconcurrency import Glibc

/// What every request of a fetch shares on its way to a server: trust anchors, a client
/// certificate, a proxy, a netrc file and a rate limit (the last applied by the delegate). Built once per batch from
/// ``FetchOptions``, applied to each request by ``apply(to:netrc:)``.
///
/// The files the user names are read once, here: libcurl and OpenSSL would open them again for
/// each request, so one swapped for a FIFO while the run goes on would hang a transfer inside
/// `open` through every stop signal, and one edited meanwhile would change what later files
/// trust. Certificates and keys go as blobs; the netrc file (libcurl takes it only by path) as a
/// ``PrivateCopy``. A path that names nothing is left to libcurl, which fails the request as it
/// always did (a missing netrc file gives no credentials); anything else that is not a readable
/// regular file of at most 64 MiB is bad input.
struct TransportSettings: Sendable {
    /// PEM bundle bytes (`CURLOPT_CAINFO_BLOB`): the base bundle plus `--cacert`'s certificates,
    /// or the bundle given in place of the system's.
    var caBundle: PEMBundle?
    /// A PEM bundle used in place of the system's (`CURLOPT_CAINFO`) when it could not be read
    /// into ``caBundle``.
    var caBundleFile: String?
    /// A hashed certificate directory (`CURLOPT_CAPATH`).
    var caDirectory: String?
    /// The client certificate's PEM bytes (`CURLOPT_SSLCERT_BLOB`), and its key's (the
    /// certificate's file when it holds the key too).
    var clientCertificate: PEMBundle?
    var clientKey: PEMBundle?
    /// The paths, when the files could not be read into the blobs.
    var clientCertificateFile: String?
    var clientKeyFile: String?
    var proxy: String?
    var proxyCredentials: String?
    var noProxy: ProxyBypassList?
    /// The proxy variables libcurl reads when ``proxy`` is not set, by name, as the environment
    /// had them at the start (for messages: ``proxyShown(for:)``).
    var environmentProxies: [String: String] = [:]
    /// The netrc file's bytes as they were at the start, or its path when it could not be read.
    var netrc: PrivateCopy?
    var netrcFile: String?
    /// Bytes per second, enforced by ``TransferDelegate`` (not `CURLOPT_MAX_RECV_SPEED_LARGE`:
    /// libcurl 7.88 lets whatever already waits in the socket through, so an 8 MiB file from a
    /// local server at 2 MiB/s took 0.01 to 3.6 s instead of 4 s).
    var maximumReceiveRate: Int64?

    /// No trust anchors of our own, no proxy setting, nothing else: libcurl's defaults.
    init() {}

    /// - Throws: ``PinFetchError/Code/usage`` when a certificate file cannot be read or holds
    ///   no PEM certificate.
    init(_ options: FetchOptions) throws(PinFetchError) {
        if let extra = options.caFile {
            self.caBundle = PEMBundle(try TrustAnchors.bundle(adding: extra, to: options.caBundleFile))
        } else if let file = options.caBundleFile {
            self.caBundle = try Self.read(file, "the CA bundle").map(PEMBundle.init)
            if self.caBundle == nil { self.caBundleFile = file }
        }
        self.caDirectory = options.caDirectory
        if let file = options.clientCertificateFile {
            self.clientCertificate = try Self.read(file, "the client certificate").map(PEMBundle.init)
            if self.clientCertificate == nil { self.clientCertificateFile = file }
            // No key file: OpenSSL takes the key from the certificate's file.
            let keyFile = options.clientKeyFile ?? file
            self.clientKey =
                self.clientCertificate == nil ? nil : try Self.read(keyFile, "the client key").map(PEMBundle.init)
            if self.clientKey == nil { self.clientKeyFile = keyFile }
        }
        self.proxy = options.proxy
        self.proxyCredentials = options.proxyCredentials
        // libcurl reads no_proxy itself when not told; it is read here and matched per request.
        let environment = ProcessInfo.processInfo.environment
        let bypass = options.noProxy ?? environment["no_proxy"] ?? environment["NO_PROXY"]
        self.noProxy = bypass.map(ProxyBypassList.init)
        for name in ["http_proxy", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"] {
            if let value = environment[name], !value.isEmpty { self.environmentProxies[name] = value }
        }
        if let file = options.netrcFile {
            self.netrc = try Self.read(file, "the netrc file").flatMap(PrivateCopy.init)
            if self.netrc == nil { self.netrcFile = file }
        }
        self.maximumReceiveRate = options.maximumReceiveRate
    }

    /// The bytes of the regular file at `path` (at most 64 MiB, never waiting on a FIFO); `nil`
    /// when nothing is there (libcurl then fails on the path as it always did; a missing netrc
    /// file gives no credentials).
    /// - Throws: ``PinFetchError/Code/usage`` when something else is there (a FIFO, a device, a
    ///   directory), or a file that cannot be read or is larger: libcurl and OpenSSL would open it
    ///   again for each request, a FIFO holding that `open` through every stop signal, a huge
    ///   file each handshake.
    private static func read(_ path: String, _ what: String) throws(PinFetchError) -> [UInt8]? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw PinFetchError(.usage, "\(what) \(path) is not a regular file (pinfetch reads it once, at the start)")
        }
        guard let bytes = FileSystem.readSmallFile(path, limit: 64 << 20) else {
            throw PinFetchError(.usage, "\(what) \(path) cannot be read, or is larger than 64 MiB")
        }
        return bytes
    }

    /// The proxy a request to `url` goes through, as given, and where it came from (`--proxy`,
    /// or the variable libcurl reads: `http_proxy` for http, `https_proxy` or `HTTPS_PROXY` for
    /// https, else `all_proxy` or `ALL_PROXY`), or `nil` for none (`--proxy ''`, or a host the
    /// bypass list matches).
    private func proxyInUse(for url: String) -> (url: String, source: String)? {
        if let list = self.noProxy, list.bypasses(host: ProxyBypassList.host(ofURL: url)) { return nil }
        if let proxy = self.proxy { return proxy.isEmpty ? nil : (proxy, "--proxy") }
        let https = url.lowercased().hasPrefix("https:")
        let names = (https ? ["https_proxy", "HTTPS_PROXY"] : ["http_proxy"]) + ["all_proxy", "ALL_PROXY"]
        guard let name = names.first(where: { self.environmentProxies[$0] != nil }) else { return nil }
        return (self.environmentProxies[name]!, "$" + name)
    }

    /// The proxy a request to `url` goes through, as a message names it: its URL without
    /// credentials and where it came from (`http://p.example:3128 (--proxy)`), or `nil` for none.
    func proxyShown(for url: String) -> String? {
        self.proxyInUse(for: url).map { "\(Redaction.malformedURL($0.url)) (\($0.source))" }
    }

    /// What to do about a proxy that refused a request to `url` for want of credentials (a
    /// `407`, RFC 9110 §15.5.8): give them, or, when some were given (`--proxy-user`, or in the
    /// proxy's URL), check them.
    func proxyCredentialsAdvice(for url: String) -> String {
        let inURL = self.proxyInUse(for: url).map { proxy in
            let rest = proxy.url.firstRange(of: "://").map { proxy.url[$0.upperBound...] } ?? proxy.url[...]
            return rest.prefix { $0 != "/" }.contains("@")
        }
        if self.proxyCredentials != nil || inURL == true {
            return "the credentials given were refused: check --proxy-user, or those in the proxy URL"
        }
        return "give --proxy-user USER:PASSWORD, or them in the proxy URL"
    }

    /// The message for a `407` to a request for `url`: the proxy that sent it, and
    /// ``proxyCredentialsAdvice(for:)``; a `407` with no proxy in use is said to be a server's.
    func proxyAuthenticationFailure(for url: String) -> String {
        guard let proxy = self.proxyShown(for: url) else {
            return "HTTP 407 (proxy authentication required) from the server, though no proxy is in use"
        }
        return "the proxy \(proxy) wants credentials (HTTP 407): \(self.proxyCredentialsAdvice(for: url))"
    }

    /// Sets these options on the easy handle `raw` (after `curl_easy_reset`) for a request to
    /// `url`; `netrc` says whether this request may take credentials from the netrc file (it
    /// stays on its mirror's origin). Returns the first failing `CURLcode`, or `CURLE_OK`.
    func apply(to raw: UnsafeMutableRawPointer, netrc: Bool, url: String) -> CURLcode {
        var result = CURLE_OK
        func set(_ code: CURLcode) { if result == CURLE_OK { result = code } }
        /// Not copied (CURL_BLOB_NOCOPY): the bytes outlive every transfer of the batch, and a
        /// copy of a ~200 KiB bundle for each request was most of a small file's memory traffic.
        func setBlob(_ option: CURLoption, _ bytes: PEMBundle) {
            var blob = curl_blob(data: bytes.bytes.baseAddress, len: bytes.bytes.count, flags: UInt32(CURL_BLOB_NOCOPY))
            set(ccurl_easy_setopt_pointer(raw, option, &blob))
        }
        if let bundle = self.caBundle {
            setBlob(CURLOPT_CAINFO_BLOB, bundle)
        } else if let file = self.caBundleFile {
            set(ccurl_easy_setopt_pointer(raw, CURLOPT_CAINFO, file))
        }
        if let directory = self.caDirectory { set(ccurl_easy_setopt_pointer(raw, CURLOPT_CAPATH, directory)) }
        if let certificate = self.clientCertificate {
            setBlob(CURLOPT_SSLCERT_BLOB, certificate)
        } else if let certificate = self.clientCertificateFile {
            set(ccurl_easy_setopt_pointer(raw, CURLOPT_SSLCERT, certificate))
        }
        if let key = self.clientKey {
            setBlob(CURLOPT_SSLKEY_BLOB, key)
            set(ccurl_easy_setopt_pointer(raw, CURLOPT_SSLKEYTYPE, "PEM"))
        } else if let key = self.clientKeyFile {
            set(ccurl_easy_setopt_pointer(raw, CURLOPT_SSLKEY, key))
        }
        let hasCertificate = self.clientCertificate != nil || self.clientCertificateFile != nil
        if hasCertificate { set(ccurl_easy_setopt_pointer(raw, CURLOPT_SSLCERTTYPE, "PEM")) }
        if hasCertificate {
            // An empty passphrase: an encrypted key then fails, where OpenSSL would otherwise ask
            // for one on the terminal and wait forever (pinfetch runs unattended).
            set(ccurl_easy_setopt_pointer(raw, CURLOPT_KEYPASSWD, ""))
        }
        if let proxy = self.proxy { set(ccurl_easy_setopt_pointer(raw, CURLOPT_PROXY, proxy)) }
        if let credentials = self.proxyCredentials {
            set(ccurl_easy_setopt_pointer(raw, CURLOPT_PROXYUSERPWD, credentials))
        }
        if let list = self.noProxy {
            let bypassed = list.bypasses(host: ProxyBypassList.host(ofURL: url))
            set(ccurl_easy_setopt_pointer(raw, CURLOPT_NOPROXY, bypassed ? "*" : ""))
        }
        if netrc, let file = self.netrc?.path ?? self.netrcFile {
            set(ccurl_easy_setopt_long(raw, CURLOPT_NETRC, Int(CURL_NETRC_OPTIONAL.rawValue)))
            set(ccurl_easy_setopt_pointer(raw, CURLOPT_NETRC_FILE, file))
        }
        return result
    }
}

/// PEM bytes at one address for as long as a batch's ``TransportSettings`` live, so libcurl can
/// use them without a copy (`CURL_BLOB_NOCOPY`). `@unchecked Sendable`: never written after
/// ``init(_:)``.
final class PEMBundle: @unchecked Sendable {
    let bytes: UnsafeMutableRawBufferPointer

    init(_ contents: [UInt8]) {
        self.bytes = .allocate(byteCount: max(1, contents.count), alignment: 1)
        self.bytes.copyBytes(from: contents)
    }

    deinit { self.bytes.deallocate() }
}
