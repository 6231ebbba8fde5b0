import FoundationEssentials

/// Where `s3://` URLs go and as which profile, read as the AWS CLI reads it: the environment,
/// then the profile's settings in `~/.aws/config` (AWS SDKs and Tools Reference Guide,
/// "Configuration and credential file settings").
///
/// - Profile: `AWS_PROFILE`, else `AWS_DEFAULT_PROFILE`, else `default`; the files are
///   `AWS_CONFIG_FILE` and `AWS_SHARED_CREDENTIALS_FILE`, else `~/.aws/config` and
///   `~/.aws/credentials`.
/// - Region: `AWS_REGION`, `AWS_DEFAULT_REGION`, the profile's `region`, else `us-east-1`.
/// - Endpoint: `AWS_ENDPOINT_URL_S3`, `AWS_ENDPOINT_URL`, the profile's `endpoint_url` (none of
///   them when `AWS_IGNORE_CONFIGURED_ENDPOINT_URLS` is `true`), else the region's AWS endpoint
///   (`s3.REGION.amazonaws.com`, `.com.cn` in China).
/// - Addressing: AWS's endpoint virtual-hosted (`BUCKET.s3.REGION.amazonaws.com`); a custom
///   endpoint (MinIO, Ceph, R2, moto) path-style, unless the profile's `s3` section says
///   `addressing_style = virtual` (or `path` for AWS).
package struct S3Configuration: Sendable, Equatable {
    package var profile: String
    package var region: String
    /// `scheme://host[:port][/path]`, no trailing `/`.
    package var endpoint: String
    package var virtualHosted: Bool
    /// The config and credentials files read.
    package var configFile: String
    package var credentialsFile: String

    /// The configuration of this process's environment, read once.
    package static let process = S3Configuration(environment: ProcessInfo.processInfo.environment)

    /// The domain of AWS's endpoints in `region`'s partition: `amazonaws.com.cn` for the
    /// China regions (`cn-north-1`), else `amazonaws.com`.
    static func domain(of region: String) -> String {
        region.hasPrefix("cn-") ? "amazonaws.com.cn" : "amazonaws.com"
    }

    /// The endpoint configured for AWS service `service` (`s3`, `sts`), without a trailing `/`:
    /// `AWS_ENDPOINT_URL_<SERVICE>`, `AWS_ENDPOINT_URL`, the profile's `<service>.endpoint_url`
    /// or `endpoint_url` in `settings`; `nil` for none, or when
    /// `AWS_IGNORE_CONFIGURED_ENDPOINT_URLS` is `true` (AWS SDKs and Tools Reference Guide,
    /// "Service-specific endpoints").
    static func customEndpoint(
        _ service: String,
        environment: [String: String],
        settings: [String: String]
    ) -> String? {
        func value(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        guard value("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS")?.lowercased() != "true",
            var endpoint = value("AWS_ENDPOINT_URL_\(service.uppercased())") ?? value("AWS_ENDPOINT_URL")
                ?? settings["\(service).endpoint_url"] ?? settings["endpoint_url"]
        else { return nil }
        while endpoint.hasSuffix("/") { endpoint.removeLast() }
        return endpoint
    }

    package init(environment: [String: String]) {
        func value(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        let home = value("HOME") ?? "/"
        self.profile = value("AWS_PROFILE") ?? value("AWS_DEFAULT_PROFILE") ?? "default"
        self.configFile = value("AWS_CONFIG_FILE") ?? Text.path(home, ".aws/config")
        self.credentialsFile = value("AWS_SHARED_CREDENTIALS_FILE") ?? Text.path(home, ".aws/credentials")
        let settings = AWSConfigFile(path: self.configFile).profile(self.profile)
        self.region = value("AWS_REGION") ?? value("AWS_DEFAULT_REGION") ?? settings["region"] ?? "us-east-1"
        let custom = Self.customEndpoint("s3", environment: environment, settings: settings)
        self.endpoint = custom ?? "https://s3.\(self.region).\(Self.domain(of: self.region))"
        let style = settings["s3.addressing_style"]?.lowercased()
        self.virtualHosted = custom == nil ? style != "path" : style == "virtual"
    }
}
