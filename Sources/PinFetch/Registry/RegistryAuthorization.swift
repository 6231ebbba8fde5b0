import FoundationEssentials
import Synchronization

/// What a registry blob's requests carry to be let in, found once per registry and
/// repository and kept until the token expires: the registry's answer to `GET /v2/` says
/// (Distribution Spec, "API version check"; docker's token authentication):
/// - `200`: nothing;
/// - `401` with `WWW-Authenticate: Basic`: the credentials as Basic (RFC 7617);
/// - `401` with `WWW-Authenticate: Bearer realm=…,service=…`: a token from the realm for
///   `scope=repository:REPOSITORY:pull`, asked anonymously or with the credentials (GHCR and
///   Docker Hub give anonymous tokens for public images), sent as `Bearer`.
///
/// The credentials are `--user`'s, else docker's (``DockerConfig``), else for a realm the netrc
/// file's entry for the realm's host (as for any host). They and the token go to
/// the registry's origin (and the credentials to its realm, which must be `https` unless on a
/// loopback address), never to the storage a blob's redirect leads to. Shared by the copies of
/// one ``FetchOptions``.
package final class RegistryAuthorization: Sendable {
    private struct Known {
        var header: String?
        var expires: Date?
    }

    private let known = Mutex<[String: Known]>([:])

    package init() {}

    /// Bytes of an answer read at most.
    static let answerLimit = 64 << 10
    /// Seconds each of the requests may take.
    static let timeout = 30.0
    /// Seconds a token is taken to hold when its answer gives no `expires_in` (the token spec's default).
    static let defaultLifetime = 60.0

    /// The token server's answer (`token`, or OAuth's `access_token`).
    private struct TokenAnswer: Decodable {
        var token: String?
        var access_token: String?
        var expires_in: Double?

        private enum CodingKeys: String, CodingKey { case token, access_token, expires_in }

        /// An `expires_in` that is no number is taken as absent (the default lifetime).
        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.token = try? container.decode(String.self, forKey: .token)
            self.access_token = try? container.decode(String.self, forKey: .access_token)
            self.expires_in = try? container.decode(Double.self, forKey: .expires_in)
        }
    }

    /// The `Authorization` line the requests for `blob` carry, or `nil` for none, asked on
    /// `easy` before the blob's request (with `transport`); `credentials` (`user:password`) are
    /// asked for only when the registry wants them.
    /// - Throws: ``PinFetchError/Code/authentication`` when the registry wants credentials and
    ///   none are given, or its token server refuses them; ``PinFetchError/Code/network`` or
    ///   ``PinFetchError/Code/serverResponse`` when the registry or its realm cannot answer.
    func header(
        for blob: OCILocation,
        credentials: () throws(PinFetchError) -> String?,
        on easy: EasyHandle,
        transport: TransportSettings,
        isCancelled: @escaping () -> Bool
    ) throws(PinFetchError) -> String? {
        let key = blob.registry + "/" + blob.repository
        if let known = self.known.withLock({ $0[key] }), known.expires.map({ $0.timeIntervalSinceNow > 10 }) ?? true {
            return known.header
        }
        let name = "registry \(blob.registry)"
        let check = try Self.get(blob.base + "/v2/", on: easy, transport, isCancelled, name: name)
        var found = Known(header: nil, expires: nil)
        switch check.status {
        case 200: break
        case 401:
            found = try Self.answering(check.challenge ?? "", blob, credentials, on: easy, transport, isCancelled)
        default:
            throw PinFetchError(.serverResponse, "\(name): HTTP \(check.status) to GET /v2/ (is it an OCI registry?)")
        }
        self.known.withLock { $0[key] = found }
        return found.header
    }

    /// The `Authorization` line for `blob` after a request with what was known answered `401`
    /// with `challenge` (its `WWW-Authenticate`): an expired or revoked token, or a registry
    /// whose `/v2/` let everyone in and its blobs not (docker answers challenges per request).
    /// The token is asked for again; the result is kept as ``header(for:credentials:on:transport:isCancelled:)`` keeps it.
    /// - Throws: as ``header(for:credentials:on:transport:isCancelled:)``, and
    ///   ``PinFetchError/Code/authentication`` for a `401` without a Bearer or Basic challenge.
    func renewed(
        for blob: OCILocation,
        challenge: String,
        credentials: () throws(PinFetchError) -> String?,
        on easy: EasyHandle,
        transport: TransportSettings,
        isCancelled: @escaping () -> Bool
    ) throws(PinFetchError) -> String? {
        let found = try Self.answering(challenge, blob, credentials, on: easy, transport, isCancelled)
        self.known.withLock { $0[blob.registry + "/" + blob.repository] = found }
        return found.header
    }

    /// What answers a `401`'s `challenge`: a Bearer token from its realm, or Basic credentials.
    private static func answering(
        _ challenge: String,
        _ blob: OCILocation,
        _ credentials: () throws(PinFetchError) -> String?,
        on easy: EasyHandle,
        _ transport: TransportSettings,
        _ isCancelled: @escaping () -> Bool
    ) throws(PinFetchError) -> Known {
        let name = "registry \(blob.registry)"
        let challenges = AuthenticationChallenge.parse(challenge)
        if let bearer = challenges.first(where: { $0.scheme == "bearer" }) {
            return try Self.token(bearer, blob, try credentials(), on: easy, transport, isCancelled, name: name)
        }
        guard challenges.contains(where: { $0.scheme == "basic" }) else {
            throw PinFetchError(.authentication, "\(name) answered 401 without a Bearer or Basic challenge")
        }
        guard let credentials = try credentials() else {
            // A netrc file's entry for the registry's host is sent by libcurl with each request.
            if transport.netrc != nil || transport.netrcFile != nil { return Known(header: nil, expires: nil) }
            throw PinFetchError(
                .authentication,
                "\(name) asks for credentials: give --user, log in with docker (\(Self.configShown)), or --netrc"
            )
        }
        return Known(header: "Authorization: Basic \(Data(credentials.utf8).base64EncodedString())", expires: nil)
    }

    private static let configShown = "~/.docker/config.json"

    private static func token(
        _ challenge: AuthenticationChallenge,
        _ blob: OCILocation,
        _ credentials: String?,
        on easy: EasyHandle,
        _ transport: TransportSettings,
        _ isCancelled: @escaping () -> Bool,
        name: String
    ) throws(PinFetchError) -> Known {
        guard let realm = challenge.parameters["realm"], let realmURL = try? HTTPURL(realm), realmURL.s3 == nil,
            realmURL.oci == nil
        else {
            throw PinFetchError(.protocolViolation, "\(name) names no http(s) token realm in its Bearer challenge")
        }
        let loopback = OCILocation.isLoopbackHost(realmURL.host)
        guard realmURL.scheme == "https" || loopback else {
            throw PinFetchError(
                .protocolViolation,
                "\(name) names a token realm over plain http (\(Redaction.url(realm))): refused"
            )
        }
        var query = [("scope", "repository:\(blob.repository):pull")]
        if let service = challenge.parameters["service"] { query.insert(("service", service), at: 0) }
        let separator = realmURL.wireText.contains("?") ? "&" : "?"
        let url =
            realmURL.wireText + separator + query.map { "\($0.0)=\(Text.percentEncoded($0.1))" }.joined(separator: "&")
        let basic = credentials.map { "Authorization: Basic \(Data($0.utf8).base64EncodedString())" }
        // Without credentials, the netrc file's entry for the realm's host, if any (its own host).
        let answer = try Self.get(
            url,
            on: easy,
            transport,
            isCancelled,
            name: "\(name)'s token realm",
            header: basic,
            netrc: basic == nil
        )
        guard answer.status == 200 else {
            let how =
                credentials == nil
                ? "anonymously (give --user, log in with docker, or a netrc entry for \(realmURL.host))"
                : "with the credentials given"
            throw PinFetchError(
                .authentication,
                "\(name)'s token realm refused a token for \(blob.repository) \(how): HTTP \(answer.status)"
            )
        }
        guard let decoded = try? JSONDecoder().decode(TokenAnswer.self, from: Data(answer.body)),
            let token = decoded.token ?? decoded.access_token, !token.isEmpty,
            !token.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F })
        else {
            throw PinFetchError(.protocolViolation, "\(name)'s token realm answered without a token")
        }
        let lifetime = max(decoded.expires_in ?? Self.defaultLifetime, 0)
        return Known(header: "Authorization: Bearer \(token)", expires: Date(timeIntervalSinceNow: lifetime))
    }

    private static func get(
        _ url: String,
        on easy: EasyHandle,
        _ transport: TransportSettings,
        _ isCancelled: @escaping () -> Bool,
        name: String,
        header: String? = nil,
        netrc: Bool = false
    ) throws(PinFetchError) -> (status: Int, body: [UInt8], challenge: String?) {
        var request = TransferRequest(
            url: url,
            method: .get,
            headers: ["Accept: application/json"] + (header.map { [$0] } ?? []),
            connectTimeout: Self.timeout,
            stallTimeout: Self.timeout
        )
        request.transport = transport
        request.netrc = netrc
        request.timeout = Self.timeout
        let answer = BoundedAnswer(limit: Self.answerLimit, isCancelled: isCancelled)
        let outcome = try easy.perform(request, delegate: answer)
        if isCancelled() { throw PinFetchError(.cancelled, "\(name): cancelled") }
        if answer.overLimit {
            throw PinFetchError(.protocolViolation, "\(name) answered more than \(Self.answerLimit >> 10) KiB")
        }
        guard outcome.category == .ok, let head = answer.head else {
            let code = outcome.failureCode == .generic ? PinFetchError.Code.network : outcome.failureCode
            throw PinFetchError(code, "\(name): \(Redaction.text(outcome.message))")
        }
        return (head.status, answer.body, head.value("www-authenticate"))
    }
}
