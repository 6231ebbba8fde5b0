/// What an `s3://` request carries to be signed: SigV4 by libcurl (`CURLOPT_AWS_SIGV4`), with
/// the run's credentials (``S3CredentialChain``).
enum S3Signing {
    /// Signs `request` for `object` with the run's S3 credentials, if any, and returns them
    /// (`nil`: unsigned). The payload's SHA-256 is `payloadSHA256` (hex) for an upload, else
    /// `UNSIGNED-PAYLOAD` (a GET has none); temporary credentials add their session token; no
    /// netrc entry is used (its Basic credentials would replace the signature). Credentials that
    /// must be asked for (a web identity, ``WebIdentityRole``) are asked on `easy`, with the
    /// request's transport, before `request` goes out on it.
    /// - Throws: ``PinFetchError/Code/authentication`` when the credentials cannot be had,
    ///   ``PinFetchError/Code/network`` when STS cannot be reached.
    @discardableResult
    static func sign(
        _ request: inout TransferRequest,
        for object: S3Location,
        payloadSHA256: String? = nil,
        on easy: EasyHandle,
        isCancelled: @escaping () -> Bool = { false }
    ) throws(PinFetchError) -> S3Credentials? {
        // The object's own checksum, when it was stored with one (cross-checked as any server digest).
        if payloadSHA256 == nil { request.headers.append("x-amz-checksum-mode: ENABLED") }
        guard
            let credentials = try S3CredentialChain.process.current(
                exchangingOn: easy,
                transport: request.transport,
                isCancelled: isCancelled
            )
        else { return nil }
        request.signing = ("aws:amz:\(object.region):s3", "\(credentials.accessKeyID):\(credentials.secretAccessKey)")
        request.netrc = false
        request.headers.append("x-amz-content-sha256: \(payloadSHA256 ?? "UNSIGNED-PAYLOAD")")
        if let token = credentials.sessionToken { request.headers.append("x-amz-security-token: \(token)") }
        return credentials
    }
}
