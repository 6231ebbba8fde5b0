import Foundation
import Testing

@testable import PinFetch

/// A web identity token (EKS, a CI's OIDC step) traded with STS `AssumeRoleWithWebIdentity` for
/// a role's temporary keys, which sign the `s3://` requests: STS is moto's, the bucket a test
/// server that shows what reached it; a refusing STS is a test server's canned answer.
@Suite(.serialized) struct S3WebIdentityTests {
    static let body = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 11) }
    static let role = "arn:aws:iam::123456789012:role/ci-fetch"

    /// The environment of a run whose STS is `sts` and whose bucket is `s3`, with the token in
    /// `work/token` (written by the caller); nothing else of AWS's is set.
    static func environment(work: String, sts: String, s3: String) -> [String: String] {
        [
            "HOME": work, "AWS_ENDPOINT_URL": "", "AWS_ENDPOINT_URL_STS": sts, "AWS_ENDPOINT_URL_S3": s3,
            "AWS_REGION": "eu-west-1", "AWS_DEFAULT_REGION": "", "AWS_PROFILE": "", "AWS_DEFAULT_PROFILE": "",
            "AWS_CONFIG_FILE": "", "AWS_SHARED_CREDENTIALS_FILE": "", "AWS_SESSION_TOKEN": "",
            "AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_WEB_IDENTITY_TOKEN_FILE": work + "/token",
            "AWS_ROLE_ARN": Self.role, "AWS_ROLE_SESSION_NAME": "",
        ]
    }

    static let token = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJjaSJ9.c2lnbmF0dXJl"

    @Test func `a web identity token is traded with STS for a role's keys, which sign the request`() async throws {
        try await withMoto(accessControl: false) { moto in
            try await withTestHTTPServer(serving: TestResource(body: Self.body, etag: "\"v1\"")) { bucket in
                try await withTemporaryDirectory { work in
                    try Self.token.write(toFile: work + "/token", atomically: true, encoding: .utf8)
                    let run = try await S3FetchTests.pinfetch(
                        ["-v", "-o", "\(work)/out", "--sha256", Fixtures.sha256(Self.body), "s3://builds/app.bin"],
                        Self.environment(work: work, sts: moto.endpoint, s3: bucket.baseURL),
                        in: work
                    )
                    #expect(S3FetchTests.status(run) == 0, "\(run.transcript)")
                    let same = contents("\(work)/out") == Self.body
                    #expect(same)
                    let gets = bucket.requests.filter { $0.method == "GET" }
                    #expect(gets.count == 1 && gets.allSatisfy { $0.target == "/builds/app.bin" })
                    // moto's temporary keys (ASIA…) and session token reached the bucket, signed for its region.
                    for request in bucket.requests {
                        let authorization = request.header("Authorization") ?? ""
                        #expect(authorization.hasPrefix("AWS4-HMAC-SHA256 Credential=ASIA"), "\(authorization)")
                        #expect(authorization.contains("/eu-west-1/s3/aws4_request"))
                        #expect((request.header("x-amz-security-token") ?? "").count > 20)
                    }
                    #expect(
                        run.standardError.contains("from role \(Self.role) by web identity"),
                        "\(run.standardError)"
                    )
                    #expect(!run.standardError.contains(Self.token))
                }
            }
        }
    }

    @Test func `a refused token, an unreadable token file or a missing role is exit 6 and creates nothing`()
        async throws
    {
        try await withTestHTTPServer(serving: TestResource(body: Self.body)) { bucket in
            try await withTestHTTPServer(serving: TestResource(body: [])) { sts in
                sts.handler = { _, _ in
                    TestResponse(
                        status: 400,
                        headers: [("Content-Type", "text/xml")],
                        body: Array(
                            ("<ErrorResponse><Error><Type>Sender</Type><Code>InvalidIdentityToken</Code>"
                                + "<Message>Token signature invalid</Message></Error></ErrorResponse>").utf8
                        )
                    )
                }
                try await withTemporaryDirectory { work in
                    try Self.token.write(toFile: work + "/token", atomically: true, encoding: .utf8)
                    let environment = Self.environment(work: work, sts: sts.baseURL, s3: bucket.baseURL)
                    let cases: [(String, [String: String], String)] = [
                        ("refused", environment, "STS InvalidIdentityToken: Token signature invalid"),
                        (
                            "unreadable", environment.merging(["AWS_WEB_IDENTITY_TOKEN_FILE": work + "/none"]) { $1 },
                            "cannot read the web identity token \(work)/none"
                        ),
                        ("no role", environment.merging(["AWS_ROLE_ARN": ""]) { $1 }, "no role to assume"),
                    ]
                    for (name, variables, said) in cases {
                        let run = try await S3FetchTests.pinfetch(
                            ["-o", "\(work)/out", "--sha256", Fixtures.sha256(Self.body), "s3://builds/app.bin"],
                            variables,
                            in: work
                        )
                        #expect(S3FetchTests.status(run) == 6, "\(name): \(run.transcript)")
                        #expect(run.standardError.contains(said), "\(name): \(run.standardError)")
                        #expect(!FileManager.default.fileExists(atPath: "\(work)/out"), "\(name)")
                    }
                    // The POST was STS's form, the token in it; the bucket was never asked.
                    #expect(sts.requests.count == 1 && sts.requests.first?.method == "POST")
                    #expect(sts.requests.first?.header("Content-Type") == "application/x-www-form-urlencoded")
                    #expect(bucket.requests.isEmpty)
                }
            }
        }
    }

    @Test func `keys about to expire are asked for again before the next request`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: Self.body)) { bucket in
            try await withTestHTTPServer(serving: TestResource(body: [])) { sts in
                sts.handler = { _, _ in
                    // Valid for 30 s: less than the minute a signed request is given, so each asks again.
                    let expiration = Date(timeIntervalSinceNow: 30).formatted(.iso8601)
                    let answer =
                        "<AssumeRoleWithWebIdentityResponse><AssumeRoleWithWebIdentityResult><Credentials>"
                        + "<AccessKeyId>ASIASHORT</AccessKeyId><SecretAccessKey>s</SecretAccessKey>"
                        + "<SessionToken>short-lived</SessionToken><Expiration>\(expiration)</Expiration>"
                        + "</Credentials></AssumeRoleWithWebIdentityResult></AssumeRoleWithWebIdentityResponse>"
                    return TestResponse(status: 200, body: Array(answer.utf8))
                }
                try await withTemporaryDirectory { work in
                    try Self.token.write(toFile: work + "/token", atomically: true, encoding: .utf8)
                    // Two objects (one pin would be fetched once and copied).
                    let second = Array(Self.body.reversed())
                    bucket.handler = { request, _ in
                        request.target.hasSuffix("/b.bin") ? TestResponse(status: 200, body: second) : nil
                    }
                    let pins = (Fixtures.sha256(Self.body), Fixtures.sha256(second))
                    try "s3://builds/a.bin sha256:\(pins.0) a.bin\ns3://builds/b.bin sha256:\(pins.1) b.bin\n".write(
                        toFile: work + "/files",
                        atomically: true,
                        encoding: .utf8
                    )
                    let run = try await S3FetchTests.pinfetch(
                        ["-P", work + "/out", "-i", work + "/files"],
                        Self.environment(work: work, sts: sts.baseURL, s3: bucket.baseURL),
                        in: work
                    )
                    #expect(S3FetchTests.status(run) == 0, "\(run.transcript)")
                    let signed = bucket.requests.filter { $0.header("x-amz-security-token") == "short-lived" }
                    #expect(signed.count == bucket.requests.count && signed.count >= 2)
                    #expect(sts.requests.count == bucket.requests.count)
                }
            }
        }
    }

    @Test func `the profile's token file and role are read, the environment's win, and a chained role is refused`()
        async throws
    {
        let configuration = S3Configuration(environment: ["HOME": "/nonexistent", "AWS_REGION": "ap-south-1"])
        let profile = [
            "web_identity_token_file": "/var/run/token", "role_arn": "arn:aws:iam::1:role/p",
            "role_session_name": "build-7",
        ]
        let fromProfile = try WebIdentityRole.configured(
            environment: [:],
            profile: profile,
            configuration: configuration
        )
        #expect(fromProfile?.tokenFile == "/var/run/token" && fromProfile?.roleARN == "arn:aws:iam::1:role/p")
        #expect(
            fromProfile?.sessionName == "build-7" && fromProfile?.endpoint == "https://sts.ap-south-1.amazonaws.com"
        )
        let environment = [
            "AWS_ROLE_ARN": "arn:aws:iam::2:role/e", "AWS_ENDPOINT_URL": "http://127.0.0.1:9/",
            "AWS_ENDPOINT_URL_STS": "",
        ]
        let mixed = try WebIdentityRole.configured(
            environment: environment,
            profile: profile,
            configuration: configuration
        )
        #expect(mixed?.roleARN == "arn:aws:iam::2:role/e" && mixed?.endpoint == "http://127.0.0.1:9")
        #expect(try WebIdentityRole.configured(environment: [:], profile: [:], configuration: configuration) == nil)
        // Every byte outside the unreserved set is percent-encoded in the form.
        let form = mixed?.form(token: "a+b/c=d&e") ?? ""
        #expect(form.contains("&WebIdentityToken=a%2Bb%2Fc%3Dd%26e"), "\(form)")
        #expect(form.contains("RoleArn=arn%3Aaws%3Aiam%3A%3A2%3Arole%2Fe&"))

        try await withTemporaryDirectory { home in
            try FileManager.default.createDirectory(atPath: home + "/.aws", withIntermediateDirectories: true)
            try "[profile chained]\nrole_arn = arn:aws:iam::1:role/r\nsource_profile = default\n".write(
                toFile: home + "/.aws/config",
                atomically: true,
                encoding: .utf8
            )
            let all = ["HOME": home, "AWS_PROFILE": "chained"]
            let refused = #expect(throws: PinFetchError.self) {
                try S3CredentialChain(environment: all, configuration: S3Configuration(environment: all)).current()
            }
            #expect(refused?.code == .authentication)
            #expect(refused?.message.contains("aws configure export-credentials --profile chained") == true)
        }
    }

    @Test
    func `an STS that answers 5xx is tried three times, then exit 8, its endpoint's password neither sent nor shown`()
        async throws
    {
        try await withTestHTTPServer(serving: TestResource(body: [])) { sts in
            sts.handler = { _, _ in
                TestResponse(
                    status: 500,
                    body: Array("<ErrorResponse><Error><Code>InternalError</Code></Error></ErrorResponse>".utf8)
                )
            }
            try await withTemporaryDirectory { work in
                try Self.token.write(toFile: work + "/token", atomically: true, encoding: .utf8)
                let endpoint = "http://u:hunter2@127.0.0.1:\(sts.port)"
                let run = try await S3FetchTests.pinfetch(
                    ["-o", "\(work)/out", "s3://builds/app.bin"],
                    Self.environment(work: work, sts: endpoint, s3: "http://127.0.0.1:9"),
                    in: work
                )
                #expect(S3FetchTests.status(run) == 8, "\(run.transcript)")
                #expect(run.standardError.contains("failed (HTTP 500), STS InternalError"), "\(run.standardError)")
                #expect(!run.transcript.contains("hunter2"))
                #expect(sts.requests.count == 3 && sts.requests.allSatisfy { $0.header("Authorization") == nil })
            }
        }
    }
}
