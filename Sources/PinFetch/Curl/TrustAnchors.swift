internal import CCurl

/// Builds the PEM bundle for `--cacert`: the system's trust anchors plus the user's, so the
/// option adds a trust anchor instead of replacing them (curl's `--cacert` replaces).
enum TrustAnchors {
    /// The bundle libcurl was built to use (`/etc/ssl/certs/ca-certificates.crt` on Debian).
    static var systemBundlePath: String? {
        guard let info = ccurl_version_info(), let path = info.pointee.cainfo else { return nil }
        return String(cString: path)
    }

    /// The bundle at `base` (the system's when `nil`) followed by the certificates in `file`.
    /// - Throws: ``PinFetchError/Code/usage`` when `file` cannot be read or holds no PEM certificate.
    static func bundle(adding file: String, to base: String? = nil) throws(PinFetchError) -> [UInt8] {
        guard let extra = FileSystem.readSmallFile(file, limit: 16 << 20) else {
            throw PinFetchError(.usage, "cannot read --cacert file \(file)")
        }
        guard String(decoding: extra, as: UTF8.self).contains("-----BEGIN CERTIFICATE-----") else {
            throw PinFetchError(.usage, "--cacert file \(file) holds no PEM certificate")
        }
        let system = (base ?? Self.systemBundlePath).flatMap { FileSystem.readSmallFile($0, limit: 64 << 20) } ?? []
        return system + [0x0A] + extra + [0x0A]
    }
}
