internal import CCurl

extension PinFetchVersion {
    /// The libraries in use, as `pinfetch --version` prints them beside pinfetch's own:
    /// `libcurl/7.88.1 OpenSSL/3.0.22 nghttp2/1.52.0` (from `curl_version_info`; the TLS
    /// library is the one libcurl uses, nghttp2 is absent when libcurl was built without HTTP/2).
    public static var libraries: String {
        guard let info = ccurl_version_info()?.pointee else { return "libcurl (version unknown)" }
        var parts = ["libcurl/" + String(cString: info.version)]
        if let tls = info.ssl_version { parts.append(String(cString: tls)) }
        if let http2 = info.nghttp2_version { parts.append("nghttp2/" + String(cString: http2)) }
        return parts.joined(separator: " ")
    }
}
