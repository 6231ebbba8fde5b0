internal import CCurl
import FoundationEssentials
@preconcurrency import Glibc

/// What every request of a fetch shares on its way to a server: trust anchors, a client
/// certificate, a proxy, a netrc file and a rate limit (the last applied by the delegate). Built once per batch from
/// ``FetchOptions`` (reading the certificate files once), applied to each request by
/// ``apply(to:netrc:)``.
struct TransportSettings: Sendable {
    /// PEM bundle bytes (`CURLOPT_CAINFO_BLOB`): the base bundle plus `--cacert`'s certificates.
    var caBundle: PEMBundle?
    /// A PEM bundle used in place of the system's (`CURLOPT_CAINFO`) when there is no ``caBundle``.
    var caBundleFile: String?
    /// A hashed certificate directory (`CURLOPT_CAPATH`).
    var caDirectory: String?
    var clientCertificateFile: String?
    var clientKeyFile: String?
    var proxy: String?
    var noProxy: String?
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
        } else {
            self.caBundleFile = options.caBundleFile
        }
        self.caDirectory = options.caDirectory
        self.clientCertificateFile = options.clientCertificateFile
        self.clientKeyFile = options.clientKeyFile
        self.proxy = options.proxy
        // libcurl reads no_proxy itself when not told; it is read here so its list is normalized too.
        let environment = ProcessInfo.processInfo.environment
        let bypass = options.noProxy ?? environment["no_proxy"] ?? environment["NO_PROXY"]
        self.noProxy = bypass.map(Self.normalizedBypassList)
        self.netrcFile = options.netrcFile
        self.maximumReceiveRate = options.maximumReceiveRate
    }

    /// A `--noproxy`/`no_proxy` list as libcurl 7.88 matches it: an IPv6 literal in brackets
    /// (`[::1]`, `[fe80::1]/64`), as it is spelt in a URL, loses them, since libcurl compares
    /// the bare address (and any spelling of it: `0:0:0:0:0:0:0:1` is `::1`) and ignores the
    /// bracketed form. Other entries are kept as given.
    static func normalizedBypassList(_ list: String) -> String {
        list.split(separator: ",", omittingEmptySubsequences: false).map { entry -> String in
            let trimmed = entry.trimmingWhitespace()
            guard trimmed.hasPrefix("["), let close = trimmed.firstIndex(of: "]") else { return String(entry) }
            let address = trimmed[trimmed.index(after: trimmed.startIndex)..<close]
            let rest = trimmed[trimmed.index(after: close)...]
            // A prefix length stays; a port (`[::1]:8080`) means nothing to no_proxy and goes.
            return String(address) + (rest.hasPrefix("/") ? String(rest) : "")
        }.joined(separator: ",")
    }

    /// Sets these options on the easy handle `raw` (after `curl_easy_reset`); `netrc` says
    /// whether this request may take credentials from the netrc file (it stays on its mirror's
    /// origin). Returns the first failing `CURLcode`, or `CURLE_OK`.
    func apply(to raw: UnsafeMutableRawPointer, netrc: Bool) -> CURLcode {
        var result = CURLE_OK
        func set(_ code: CURLcode) { if result == CURLE_OK { result = code } }
        if let bundle = self.caBundle {
            // Not copied (CURL_BLOB_NOCOPY): the bundle outlives every transfer of the batch, and a
            // copy of its ~200 KiB for each request was most of a small file's memory traffic.
            var blob = curl_blob(
                data: bundle.bytes.baseAddress,
                len: bundle.bytes.count,
                flags: UInt32(CURL_BLOB_NOCOPY)
            )
            set(ccurl_easy_setopt_pointer(raw, CURLOPT_CAINFO_BLOB, &blob))
        } else if let file = self.caBundleFile {
            set(ccurl_easy_setopt_pointer(raw, CURLOPT_CAINFO, file))
        }
        if let directory = self.caDirectory { set(ccurl_easy_setopt_pointer(raw, CURLOPT_CAPATH, directory)) }
        if let certificate = self.clientCertificateFile {
            set(ccurl_easy_setopt_pointer(raw, CURLOPT_SSLCERT, certificate))
            set(ccurl_easy_setopt_pointer(raw, CURLOPT_SSLCERTTYPE, "PEM"))
        }
        if let key = self.clientKeyFile { set(ccurl_easy_setopt_pointer(raw, CURLOPT_SSLKEY, key)) }
        if self.clientCertificateFile != nil {
            // An empty passphrase: an encrypted key then fails, where OpenSSL would otherwise ask
            // for one on the terminal and wait forever (pinfetch runs unattended).
            set(ccurl_easy_setopt_pointer(raw, CURLOPT_KEYPASSWD, ""))
        }
        if let proxy = self.proxy { set(ccurl_easy_setopt_pointer(raw, CURLOPT_PROXY, proxy)) }
        if let hosts = self.noProxy { set(ccurl_easy_setopt_pointer(raw, CURLOPT_NOPROXY, hosts)) }
        if netrc, let file = self.netrcFile {
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
