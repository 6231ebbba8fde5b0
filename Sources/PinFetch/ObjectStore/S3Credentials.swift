import FoundationEssentials
import Synchronization

/// The keys `s3://` requests are signed with (SigV4, by libcurl), and where they came from.
/// Never printed and never written to a sidecar; messages name ``source`` and at most the
/// access key's id.
package struct S3Credentials: Sendable, Equatable {
    package var accessKeyID: String
    package var secretAccessKey: String
    package var sessionToken: String?
    /// When temporary credentials stop working; `nil` for keys that do not expire.
    var expiration: Date?
    /// Where they came from, for messages: `the environment`, `profile ci in ~/.aws/credentials`.
    package var source: String

    init(accessKeyID: String, secretAccessKey: String, sessionToken: String?, expiration: Date? = nil, source: String) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
        self.expiration = expiration
        self.source = source
    }
}

/// Finds the credentials for `s3://` requests in the AWS CLI's order, once per run and again
/// when temporary ones are about to expire (AWS SDKs and Tools Reference Guide, "Credential
/// provider chain"):
/// 1. `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY` (and `AWS_SESSION_TOKEN`);
/// 2. a web identity token traded for a role's keys (``WebIdentityRole``):
///    `AWS_WEB_IDENTITY_TOKEN_FILE` and `AWS_ROLE_ARN`, or the profile's
///    `web_identity_token_file` and `role_arn`;
/// 3. the profile's keys in the credentials file (`aws_access_key_id`, …);
/// 4. the profile's `credential_process` in the config file: run without a shell, its JSON
///    (`Version` 1, `AccessKeyId`, `SecretAccessKey`, `SessionToken`, `Expiration`) read;
/// 5. the profile's keys in the config file;
/// 6. none: requests go unsigned (a public bucket).
///
/// A profile that assumes a role from another profile (`role_arn` with `source_profile` or
/// `credential_source`) is refused rather than read as unsigned.
package final class S3CredentialChain: Sendable {
    private let environment: [String: String]
    private let configuration: S3Configuration
    private let cached = Mutex<S3Credentials??>(nil)

    /// Seconds a `credential_process` may run.
    static let processTimeout = 60.0

    /// The chain of this process's environment and ``S3Configuration/process``.
    package static let process = S3CredentialChain(
        environment: ProcessInfo.processInfo.environment,
        configuration: .process
    )

    package init(environment: [String: String], configuration: S3Configuration) {
        self.environment = environment
        self.configuration = configuration
    }

    /// The credentials found last (``current(exchangingOn:transport:isCancelled:)``), without
    /// looking again: `nil` before the first look and for unsigned requests.
    var known: S3Credentials? { self.cached.withLock { $0 ?? nil } }

    /// The credentials to sign with now, or `nil` for unsigned requests; a `credential_process`
    /// is killed once `isCancelled` says so. A web identity is traded with STS on `easy` (with
    /// `transport`), before the request it signs.
    /// - Throws: ``PinFetchError/Code/authentication`` (exit 6) for half a key pair in the
    ///   environment, a profile named by `AWS_PROFILE` that neither file has, a web identity
    ///   token that cannot be read or that STS refuses, a role assumed from another profile, a
    ///   `credential_process` that fails, hangs past ``processTimeout`` seconds or answers
    ///   something else than its JSON, credentials that hold a control character, or an
    ///   `Expiration` that has passed; ``PinFetchError/Code/network`` when STS cannot be reached;
    ///   ``PinFetchError/Code/cancelled`` when cancelled meanwhile.
    func current(
        exchangingOn easy: EasyHandle? = nil,
        transport: TransportSettings = TransportSettings(),
        isCancelled: @escaping () -> Bool = { false }
    ) throws(PinFetchError) -> S3Credentials? {
        try self.cached.withLock { (cached: inout S3Credentials??) throws(PinFetchError) -> S3Credentials? in
            if let known = cached, known?.expiration.map({ $0.timeIntervalSinceNow > 60 }) ?? true { return known }
            let found = try self.find(easy, transport, isCancelled)
            if let found {
                // Each goes into a header: a line break would be a header of its own.
                let fields = [found.accessKeyID, found.secretAccessKey, found.sessionToken ?? ""]
                guard !fields.contains(where: { $0.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F } })
                else {
                    throw PinFetchError(
                        .authentication,
                        "the AWS credentials from \(found.source) hold a control character"
                    )
                }
                if let expiration = found.expiration, expiration.timeIntervalSinceNow <= 0 {
                    throw PinFetchError(
                        .authentication,
                        "the AWS credentials from \(found.source) expired at \(expiration.formatted(.iso8601))"
                    )
                }
            }
            cached = .some(found)
            return found
        }
    }

    private func find(
        _ easy: EasyHandle?,
        _ transport: TransportSettings,
        _ isCancelled: @escaping () -> Bool
    ) throws(PinFetchError) -> S3Credentials? {
        func value(_ name: String) -> String? { self.environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        switch (value("AWS_ACCESS_KEY_ID"), value("AWS_SECRET_ACCESS_KEY")) {
        case (let id?, let secret?):
            return S3Credentials(
                accessKeyID: id,
                secretAccessKey: secret,
                sessionToken: value("AWS_SESSION_TOKEN"),
                source: "the environment"
            )
        case (nil, nil): break
        default:
            throw PinFetchError(
                .authentication,
                "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY go together: the environment has only one"
            )
        }
        let profile = self.configuration.profile
        let credentialsFile = AWSConfigFile(path: self.configuration.credentialsFile).credentials(profile)
        let config = AWSConfigFile(path: self.configuration.configFile).profile(profile)
        if let role = try WebIdentityRole.configured(
            environment: self.environment,
            profile: config,
            configuration: self.configuration
        ) {
            guard let easy else { throw PinFetchError(.generic, "a web identity needs a handle to reach STS") }
            return try role.assume(on: easy, transport: transport, isCancelled: isCancelled)
        }
        if config["role_arn"] != nil {
            throw PinFetchError(
                .authentication,
                "profile \(profile) in \(self.configuration.configFile) assumes a role from another profile "
                    + "(role_arn), which pinfetch does not do; a credential_process of "
                    + "`aws configure export-credentials --profile \(profile) --format process` does"
            )
        }
        if let keys = try Self.keys(
            credentialsFile,
            source: "profile \(profile) in \(self.configuration.credentialsFile)"
        ) {
            return keys
        }
        if let command = config["credential_process"] {
            return try self.run(command, profile: profile, isCancelled: isCancelled)
        }
        if let keys = try Self.keys(config, source: "profile \(profile) in \(self.configuration.configFile)") {
            return keys
        }
        let named = value("AWS_PROFILE") ?? value("AWS_DEFAULT_PROFILE")
        if named != nil, credentialsFile.isEmpty, config.isEmpty {
            throw PinFetchError(
                .authentication,
                "AWS profile '\(profile)' is in neither \(self.configuration.configFile) nor "
                    + "\(self.configuration.credentialsFile)"
            )
        }
        return nil
    }

    private static func keys(_ settings: [String: String], source: String) throws(PinFetchError) -> S3Credentials? {
        let (id, secret) = (settings["aws_access_key_id"], settings["aws_secret_access_key"])
        guard let id, let secret, !id.isEmpty, !secret.isEmpty else {
            // Half a pair is a mistake to name, not a reason to go unsigned (the CLI's
            // PartialCredentialsError).
            let hasID = !(id ?? "").isEmpty
            guard !hasID, (secret ?? "").isEmpty else {
                let (given, missing) =
                    hasID
                    ? ("aws_access_key_id", "aws_secret_access_key") : ("aws_secret_access_key", "aws_access_key_id")
                throw PinFetchError(.authentication, "\(source) has \(given) without \(missing)")
            }
            return nil
        }
        return S3Credentials(
            accessKeyID: id,
            secretAccessKey: secret,
            sessionToken: settings["aws_session_token"].flatMap { $0.isEmpty ? nil : $0 },
            source: source
        )
    }

    /// The JSON a `credential_process` prints (AWS CLI, "Sourcing credentials with an external process").
    private struct ProcessAnswer: Decodable {
        var Version: Int
        var AccessKeyId: String
        var SecretAccessKey: String
        var SessionToken: String?
        var Expiration: String?
    }

    private func run(
        _ command: String,
        profile: String,
        isCancelled: () -> Bool
    ) throws(PinFetchError)
        -> S3Credentials
    {
        let name = "credential_process of profile \(profile)"
        guard let words = ChildCommand.words(command), !words.isEmpty else {
            throw PinFetchError(.authentication, "\(name): an unterminated quote in \(self.configuration.configFile)")
        }
        let ended: ChildCommand.Ended
        do throws(PinFetchError) {
            ended = try ChildCommand.run(words, timeout: Self.processTimeout, isCancelled: isCancelled)
        } catch {
            throw PinFetchError(.authentication, "\(name): \(error.message)")
        }
        if let failure = ended.failure(of: name, timeLimit: "\(Text.number(Self.processTimeout)) s") { throw failure }
        guard let answer = try? JSONDecoder().decode(ProcessAnswer.self, from: Data(ended.output)),
            answer.Version == 1, !answer.AccessKeyId.isEmpty, !answer.SecretAccessKey.isEmpty
        else {
            throw PinFetchError(
                .authentication,
                "\(name) printed no credentials (JSON with Version 1, AccessKeyId and SecretAccessKey)"
            )
        }
        var expiration: Date?
        if let text = answer.Expiration {
            guard let date = try? Date(text, strategy: .iso8601) else {
                throw PinFetchError(.authentication, "\(name): Expiration is not an ISO 8601 time")
            }
            expiration = date
        }
        return S3Credentials(
            accessKeyID: answer.AccessKeyId,
            secretAccessKey: answer.SecretAccessKey,
            sessionToken: answer.SessionToken.flatMap { $0.isEmpty ? nil : $0 },
            expiration: expiration,
            source: name
        )
    }
}
