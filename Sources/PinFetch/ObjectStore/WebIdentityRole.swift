import FoundationEssentials
@preconcurrency import Glibc

/// A role assumed with a web identity token: the token file a Kubernetes service account (EKS)
/// or a CI's OIDC step writes, traded with STS `AssumeRoleWithWebIdentity` for temporary keys
/// (AWS STS API Reference, "AssumeRoleWithWebIdentity"; AWS SDKs and Tools Reference Guide,
/// "Assume role credential provider").
///
/// The request is an unsigned form `POST` (the token is its proof); the file is read again for
/// each exchange, since whoever writes it replaces it before it expires.
struct WebIdentityRole: Equatable {
    /// The token file: `AWS_WEB_IDENTITY_TOKEN_FILE`, else the profile's `web_identity_token_file`.
    var tokenFile: String
    /// `AWS_ROLE_ARN`, else the profile's `role_arn`.
    var roleARN: String
    /// `AWS_ROLE_SESSION_NAME`, else the profile's `role_session_name`, else `pinfetch-SECONDS`.
    var sessionName: String
    /// STS's URL: `AWS_ENDPOINT_URL_STS`, `AWS_ENDPOINT_URL`, the profile's `sts.endpoint_url` or
    /// `endpoint_url`, else the region's endpoint, `https://sts.REGION.amazonaws.com` (`.com.cn`
    /// in China); user information in it is dropped.
    var endpoint: String
    /// Where it was configured, for messages.
    var source: String

    /// Bytes of a token file read at most (STS takes tokens of up to 20,000 characters).
    static let tokenLimit = 64 << 10
    /// Bytes of STS's answer read at most.
    static let answerLimit = 64 << 10
    /// Seconds one exchange may take.
    static let timeout = 30.0

    /// The role that `environment` and the profile's `settings` (of the config file) configure,
    /// or `nil` when neither names a token file. Each setting of the environment wins over the
    /// profile's, as in the AWS CLI.
    /// - Throws: ``PinFetchError/Code/authentication`` for a token file without a role ARN.
    static func configured(
        environment: [String: String],
        profile settings: [String: String],
        configuration: S3Configuration
    ) throws(PinFetchError) -> WebIdentityRole? {
        func value(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        let fromEnvironment = value("AWS_WEB_IDENTITY_TOKEN_FILE") != nil
        guard let tokenFile = value("AWS_WEB_IDENTITY_TOKEN_FILE") ?? settings["web_identity_token_file"] else {
            return nil
        }
        let source =
            fromEnvironment
            ? "AWS_WEB_IDENTITY_TOKEN_FILE"
            : "web_identity_token_file of profile \(configuration.profile) in \(configuration.configFile)"
        guard let roleARN = value("AWS_ROLE_ARN") ?? settings["role_arn"] else {
            throw PinFetchError(
                .authentication,
                "\(source) names a web identity token, but no role to assume: set AWS_ROLE_ARN (or role_arn)"
            )
        }
        var endpoint =
            S3Configuration.customEndpoint("sts", environment: environment, settings: settings)
            ?? "https://sts.\(configuration.region).\(S3Configuration.domain(of: configuration.region))"
        // User information would go to STS as Basic credentials: STS takes none.
        if let scheme = endpoint.firstRange(of: "://") {
            let authorityEnd = endpoint[scheme.upperBound...].firstIndex(of: "/") ?? endpoint.endIndex
            if let at = endpoint[scheme.upperBound..<authorityEnd].lastIndex(of: "@") {
                endpoint.removeSubrange(scheme.upperBound...at)
            }
        }
        return WebIdentityRole(
            tokenFile: tokenFile,
            roleARN: roleARN,
            sessionName: value("AWS_ROLE_SESSION_NAME") ?? settings["role_session_name"]
                ?? "pinfetch-\(Int(Date().timeIntervalSince1970))",
            endpoint: endpoint,
            source: source
        )
    }

    /// The form body of the exchange for `token` (`application/x-www-form-urlencoded`).
    func form(token: String) -> String {
        let fields = [
            ("Action", "AssumeRoleWithWebIdentity"), ("Version", "2011-06-15"), ("RoleArn", self.roleARN),
            ("RoleSessionName", self.sessionName), ("WebIdentityToken", token),
        ]
        return fields.map { "\($0.0)=\(Text.percentEncoded($0.1))" }.joined(separator: "&")
    }

    /// Trades the token for temporary keys, on `easy` (the download's handle, before its own
    /// request) with the request's `transport` (its proxy and trust anchors).
    /// - Throws: ``PinFetchError/Code/authentication`` when the token file cannot be read or STS
    ///   refuses (its error code named) or answers without keys; ``PinFetchError/Code/network``
    ///   when STS cannot be reached and ``PinFetchError/Code/serverResponse`` when it answers
    ///   5xx, each three times; ``PinFetchError/Code/cancelled`` when cancelled meanwhile.
    func assume(
        on easy: EasyHandle,
        transport: TransportSettings,
        isCancelled: @escaping () -> Bool
    ) throws(PinFetchError) -> S3Credentials {
        let token = try self.token()
        var request = TransferRequest(
            url: self.endpoint + "/",
            method: .post,
            headers: ["Content-Type: application/x-www-form-urlencoded", "Accept: application/xml"],
            connectTimeout: Self.timeout,
            stallTimeout: Self.timeout
        )
        request.form = self.form(token: token)
        request.transport = transport
        request.timeout = Self.timeout
        let name = "STS AssumeRoleWithWebIdentity at \(Redaction.url(self.endpoint))"
        // A failure to reach STS or a 5xx (IDPCommunicationError among them) is tried twice more.
        var attempt = 0
        while true {
            attempt += 1
            let answer = BoundedAnswer(limit: Self.answerLimit, isCancelled: isCancelled)
            let outcome = try easy.perform(request, delegate: answer)
            if isCancelled() { throw PinFetchError(.cancelled, "\(name): cancelled") }
            if answer.overLimit {
                throw PinFetchError(.protocolViolation, "\(name) answered more than \(Self.answerLimit >> 10) KiB")
            }
            let status = answer.head?.status
            if outcome.category == .ok, let status, status < 500 || attempt == 3 {
                return try self.credentials(status: status, body: answer.body, name: name)
            }
            if attempt == 3 {
                throw PinFetchError(
                    outcome.failureCode == .generic ? .network : outcome.failureCode,
                    "\(name): \(outcome.message)"
                )
            }
            for _ in 0..<(attempt * 10) where !isCancelled() { usleep(100_000) }
        }
    }

    /// The token, read from ``tokenFile`` now.
    private func token() throws(PinFetchError) -> String {
        guard let data = FileSystem.readSmallFile(self.tokenFile, limit: Self.tokenLimit) else {
            let reason =
                access(self.tokenFile, R_OK) == 0 ? "not a file of at most 64 KiB" : String(cString: strerror(errno))
            throw PinFetchError(
                .authentication,
                "cannot read the web identity token \(self.tokenFile) (\(self.source)): \(reason)"
            )
        }
        let token = String(decoding: data, as: UTF8.self).trimmingWhitespace()
        guard !token.isEmpty else {
            throw PinFetchError(.authentication, "the web identity token \(self.tokenFile) (\(self.source)) is empty")
        }
        return String(token)
    }

    /// The keys of STS's answer of `status`, or its error.
    func credentials(status: Int, body: [UInt8], name: String) throws(PinFetchError) -> S3Credentials {
        guard status == 200 else {
            let said = S3ErrorBody(body).map { ", STS \($0.code)" + ($0.message.isEmpty ? "" : ": \($0.message)") }
            // A 5xx (tried three times by then) is STS's trouble, not the token's.
            guard status < 500 else {
                throw PinFetchError(.serverResponse, "\(name) failed (HTTP \(status))\(said ?? "")")
            }
            throw PinFetchError(.authentication, "\(name) refused (HTTP \(status))\(said ?? "")")
        }
        let text = String(decoding: body, as: UTF8.self)
        guard let id = S3ErrorBody.element("AccessKeyId", in: text), !id.isEmpty,
            let secret = S3ErrorBody.element("SecretAccessKey", in: text), !secret.isEmpty,
            let token = S3ErrorBody.element("SessionToken", in: text), !token.isEmpty
        else {
            throw PinFetchError(.authentication, "\(name) answered without credentials")
        }
        let expiration = S3ErrorBody.element("Expiration", in: text).flatMap { try? Date($0, strategy: .iso8601) }
        return S3Credentials(
            accessKeyID: id,
            secretAccessKey: secret,
            sessionToken: token,
            expiration: expiration,
            source: "role \(self.roleARN) by web identity (\(self.source))"
        )
    }
}
