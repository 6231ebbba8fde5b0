import Foundation
import Testing

@testable import PinFetch

/// How `s3://` URLs are read and where they go: the AWS CLI's rules for the endpoint, the
/// region, the addressing style and the files, table-tested; and the pure decisions an object
/// store adds (`If-Match` on a resume, `412`, S3's error body).
struct S3ConfigurationTests {
    @Test(arguments: [
        ("s3://artifacts/a/b.tgz", "artifacts", "a/b.tgz"),
        ("S3://my.bucket-1/key with space", "my.bucket-1", "key with space"),
        ("s3://abc/%41#x", "abc", "%41#x"),  // a key is taken as typed, as the AWS CLI takes it
    ])
    func `a bucket and a key are read as typed`(text: String, bucket: String, key: String) throws {
        let location = try S3Location(text, region: "us-east-1")
        #expect(location.bucket == bucket && location.key == key)
    }

    @Test(arguments: [
        "s3://Upper/k", "s3://ab/k", "s3://-bad/k", "s3://a..b/k", "s3://bucket", "s3://bucket/",
        "s3://bucket_x/k", "s3://bucket/a\u{7}b",
        // A dot segment is removed before sending: another bucket, or the bucket's listing.
        "s3://priv/../other/secret.txt", "s3://priv/x/..", "s3://priv/..", "s3://priv/a/./b",
        // S3's other rules: no `.-`/`-.`, no IPv4 address, no reserved prefix or suffix.
        "s3://a.-b/k", "s3://a-.b/k", "s3://10.0.0.1/k", "s3://xn--abc/k", "s3://sthree-x/k", "s3://x-s3alias/k",
        "s3://x--ol-s3/k",
    ])
    func `a bucket S3 does not allow, no key or a control character is bad input`(text: String) {
        #expect(throws: PinFetchError.self) { try S3Location(text, region: "us-east-1") }
    }

    /// A server never chooses an object to be signed for: `Location: s3://…` is no redirect.
    /// A region and an endpoint end up in the URL: a region is a name, an endpoint has no query.
    @Test func `a region that is no name, or an endpoint with a query, is bad input`() throws {
        var configuration = S3Configuration(environment: ["HOME": "/nonexistent", "AWS_REGION": "foo@127.0.0.1:1/"])
        #expect(throws: PinFetchError.self) { try HTTPURL.objectStore("s3://bucket/k", configuration) }
        configuration = S3Configuration(environment: ["HOME": "/nonexistent", "AWS_ENDPOINT_URL": "http://h.test?x=1"])
        #expect(throws: PinFetchError.self) { try HTTPURL.objectStore("s3://bucket/k", configuration) }
    }

    @Test func `an s3 Location is not followed`() throws {
        #expect(try HTTPURL("https://h.test/f").resolving(location: "s3://other-bucket/secret") == nil)
        #expect(try HTTPURL("s3://artifacts/a").resolving(location: "S3://artifacts/b") == nil)
    }

    @Test func `a key is percent-encoded once, path-style or virtual-hosted`() throws {
        let location = try S3Location("s3://artifacts/v1/tool +x ü~.tgz", region: "eu-west-1")
        #expect(
            location.url(endpoint: "http://127.0.0.1:9000/", virtualHosted: false)
                == "http://127.0.0.1:9000/artifacts/v1/tool%20%2Bx%20%C3%BC~.tgz"
        )
        #expect(
            location.url(endpoint: "https://s3.eu-west-1.amazonaws.com", virtualHosted: true)
                == "https://artifacts.s3.eu-west-1.amazonaws.com/v1/tool%20%2Bx%20%C3%BC~.tgz"
        )
        // A dotted bucket would not match the endpoint's wildcard certificate: path-style.
        let dotted = try S3Location("s3://my.bucket/k", region: "us-east-1")
        #expect(
            dotted.url(endpoint: "https://s3.us-east-1.amazonaws.com", virtualHosted: true).hasSuffix("/my.bucket/k")
        )
    }

    @Test func `the environment comes before the profile, and a custom endpoint is path-style`() async throws {
        try await withTemporaryDirectory { home in
            try FileManager.default.createDirectory(atPath: home + "/.aws", withIntermediateDirectories: true)
            try """
            [default]
            region = ap-south-1
            [profile ci]
            region = eu-central-1   # Frankfurt
            endpoint_url = https://minio.example:9000
            s3 =
              addressing_style = virtual
            """.write(toFile: home + "/.aws/config", atomically: true, encoding: .utf8)
            let plain = S3Configuration(environment: ["HOME": home])
            #expect(plain.region == "ap-south-1" && plain.endpoint == "https://s3.ap-south-1.amazonaws.com")
            #expect(plain.virtualHosted)
            let ci = S3Configuration(environment: ["HOME": home, "AWS_PROFILE": "ci"])
            #expect(ci.region == "eu-central-1" && ci.endpoint == "https://minio.example:9000" && ci.virtualHosted)
            let overridden = S3Configuration(environment: [
                "HOME": home, "AWS_PROFILE": "ci", "AWS_REGION": "us-west-2", "AWS_DEFAULT_REGION": "x",
                "AWS_ENDPOINT_URL": "http://127.0.0.1:1", "AWS_ENDPOINT_URL_S3": "http://127.0.0.1:2/",
            ])
            #expect(overridden.region == "us-west-2" && overridden.endpoint == "http://127.0.0.1:2")
            let ignored = S3Configuration(environment: [
                "HOME": home, "AWS_PROFILE": "ci", "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS": "true",
                "AWS_ENDPOINT_URL": "http://127.0.0.1:1",
            ])
            #expect(ignored.endpoint == "https://s3.eu-central-1.amazonaws.com")
            let path = S3Configuration(environment: ["HOME": home, "AWS_ENDPOINT_URL": "http://127.0.0.1:1"])
            #expect(!path.virtualHosted)
            let nowhere = S3Configuration(environment: ["HOME": home + "/none"])
            #expect(nowhere.region == "us-east-1" && nowhere.profile == "default")
        }
    }

    @Test func `credentials come from the environment, then the credentials file, then the config file`() async throws {
        try await withTemporaryDirectory { home in
            try FileManager.default.createDirectory(atPath: home + "/.aws", withIntermediateDirectories: true)
            try "[default]\naws_access_key_id = FILEKEY\naws_secret_access_key = filesecret\n".write(
                toFile: home + "/.aws/credentials",
                atomically: true,
                encoding: .utf8
            )
            try "[profile cfg]\naws_access_key_id = CFGKEY\naws_secret_access_key = cfgsecret\naws_session_token = t\n"
                .write(toFile: home + "/.aws/config", atomically: true, encoding: .utf8)
            func chain(_ environment: [String: String]) throws -> S3Credentials? {
                let all = environment.merging(["HOME": home]) { a, _ in a }
                return try S3CredentialChain(environment: all, configuration: S3Configuration(environment: all))
                    .current()
            }
            let env = try chain(["AWS_ACCESS_KEY_ID": "ENVKEY", "AWS_SECRET_ACCESS_KEY": "envsecret"])
            #expect(env?.accessKeyID == "ENVKEY" && env?.source == "the environment")
            #expect(try chain([:])?.accessKeyID == "FILEKEY")
            let config = try chain(["AWS_PROFILE": "cfg"])
            #expect(config?.accessKeyID == "CFGKEY" && config?.sessionToken == "t")
            #expect(throws: PinFetchError.self) { try chain(["AWS_ACCESS_KEY_ID": "ONLYKEY"]) }
            // A line break in a credential would be a header of its own.
            let injected = #expect(throws: PinFetchError.self) {
                try chain([
                    "AWS_ACCESS_KEY_ID": "K", "AWS_SECRET_ACCESS_KEY": "s", "AWS_SESSION_TOKEN": "t\r\nX-Injected: 1",
                ])
            }
            #expect(injected?.code == .authentication && injected?.message.contains("control character") == true)
            #expect(try chain(["HOME": home + "/none"]) == nil)  // unsigned
        }
    }

    @Test(arguments: [
        ("/bin/helper --profile ci", ["/bin/helper", "--profile", "ci"]),
        (#""/opt/my tools/helper" 'a b' c\ d"#, ["/opt/my tools/helper", "a b", "c d"]),
        (#"x "say \"hi\"""#, ["x", #"say "hi""#]),
    ])
    func `a credential_process line is split as a shell splits words, without expanding`(
        line: String,
        words: [String]
    ) {
        #expect(ChildCommand.words(line) == words)
    }

    @Test func `an unterminated quote is no command`() {
        #expect(ChildCommand.words(#"helper "open"#) == nil)
    }

    @Test func `S3's error body names the failure, and a 403 is an authentication failure`() {
        let body = Array(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <Error><Code>ExpiredToken</Code><Message>The provided token has expired &amp; must be renewed.</Message></Error>
            """.utf8
        )
        let error = S3ErrorBody(body)
        #expect(error?.code == "ExpiredToken" && error?.message == "The provided token has expired & must be renewed.")
        #expect(
            error?.applied(to: .fail(.serverResponse, "HTTP 403"), status: 403)
                == .fail(
                    .authentication,
                    "HTTP 403, S3 ExpiredToken: The provided token has expired & must be renewed."
                )
        )
        #expect(S3ErrorBody(Array("<html>nope</html>".utf8)) == nil)
        // AWS answers an expired or invalid token with 400: still exit 6.
        let expired = S3ErrorBody(Array("<Error><Code>InvalidToken</Code><Message>m</Message></Error>".utf8))
        #expect(
            expired?.applied(to: .fail(.serverResponse, "HTTP 400"), status: 400)
                == .fail(.authentication, "HTTP 400, S3 InvalidToken: m")
        )
    }

    /// S3 ignores `If-Range`: a resume of an object also sends `If-Match`, and its `412` starts over.
    @Test func `a resume of an object sends If-Match, and its 412 starts over`() {
        var state = PartialState(algorithm: .sha256)
        state.offset = 400
        state.validator = Validator(entityTag: #""abc-2""#, lastModified: nil)
        state.source = "http://127.0.0.1:9000/b/k"
        state.totalLength = 1000
        state.resumable = true
        let plan = AttemptPlan.make(
            state,
            mirror: "http://127.0.0.1:9000/b/k",
            mirrorNumber: 1,
            pinned: false,
            restartPending: false,
            expected: nil,
            objectStore: true
        )
        guard case .ask(let headers, let context, _) = plan else {
            Issue.record("\(plan)")
            return
        }
        #expect(headers.contains(#"If-Match: "abc-2""#) && headers.contains(#"If-Range: "abc-2""#), "\(headers)")
        let head = ResponseHead(status: 412, fields: [])
        #expect(
            AnswerDecision.decide(head, context) == .restart("HTTP 412: the object changed since the partial was saved")
        )
        // Elsewhere a 412 is a failure as before.
        #expect(AnswerDecision.decide(head, AnswerContext(requestedOffset: 400)) == .fail(.serverResponse, "HTTP 412"))
    }

    @Test func `a password in the bucket part is never shown, and China's regions have their own domain`() throws {
        let refused = #expect(throws: PinFetchError.self) {
            try S3Location("s3://u:hunter2@bkt/x", region: "us-east-1")
        }
        #expect(refused?.message.contains("hunter2") == false && refused?.message.contains("***@bkt") == true)
        let china = S3Configuration(environment: ["HOME": "/nonexistent", "AWS_REGION": "cn-north-1"])
        #expect(china.endpoint == "https://s3.cn-north-1.amazonaws.com.cn")
        let role = try WebIdentityRole.configured(
            environment: ["AWS_WEB_IDENTITY_TOKEN_FILE": "/t", "AWS_ROLE_ARN": "arn:aws-cn:iam::1:role/r"],
            profile: [:],
            configuration: china
        )
        #expect(role?.endpoint == "https://sts.cn-north-1.amazonaws.com.cn")
        // User information in an STS endpoint would go as Basic credentials: it is dropped.
        let withUser = try WebIdentityRole.configured(
            environment: [
                "AWS_WEB_IDENTITY_TOKEN_FILE": "/t", "AWS_ROLE_ARN": "arn:aws:iam::1:role/r",
                "AWS_ENDPOINT_URL_STS": "http://u:hunter2@127.0.0.1:9/sts/",
            ],
            profile: [:],
            configuration: china
        )
        #expect(withUser?.endpoint == "http://127.0.0.1:9/sts")
    }

    @Test func `half a key pair in a file is exit 6, and a byte order mark does not hide a profile`() async throws {
        try await withTemporaryDirectory { home in
            try FileManager.default.createDirectory(atPath: home + "/.aws", withIntermediateDirectories: true)
            func chain(_ credentials: String) throws -> S3Credentials? {
                try credentials.write(toFile: home + "/.aws/credentials", atomically: true, encoding: .utf8)
                let all = ["HOME": home]
                return try S3CredentialChain(environment: all, configuration: S3Configuration(environment: all))
                    .current()
            }
            let half = #expect(throws: PinFetchError.self) { try chain("[default]\naws_access_key_id = AKIAHALF\n") }
            #expect(half?.code == .authentication, "\(String(describing: half))")
            #expect(half?.message.contains("has aws_access_key_id without aws_secret_access_key") == true)
            let marked = try chain("\u{FEFF}[default]\naws_access_key_id = AKIABOM\naws_secret_access_key = s\n")
            #expect(marked?.accessKeyID == "AKIABOM")
        }
    }
}
