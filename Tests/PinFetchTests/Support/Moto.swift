import Foundation
@preconcurrency import Glibc

/// A real S3 API for the tests: moto's server (PyPI `moto[server]`, in a virtual environment
/// that `.ci/run` makes under `.build/test-tools/moto`), on a loopback port with its access
/// control on: after the three unauthenticated IAM calls that make a user, its key and an
/// `s3:*` policy, every request must be signed with that key (`INITIAL_NO_AUTH_ACTION_COUNT`).
/// Setup requests are signed by curl (`--aws-sigv4`), as pinfetch's are by libcurl.
struct Moto {
    /// `moto_server`: `PINFETCH_MOTO_SERVER`, else the package's `.build/test-tools/moto`.
    static var executable: String {
        if let path = ProcessInfo.processInfo.environment["PINFETCH_MOTO_SERVER"], !path.isEmpty { return path }
        let root = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        return root.appending(path: ".build/test-tools/moto/bin/moto_server").path
    }

    let prefix: String
    let port: Int
    let child: ChildProcess
    /// The IAM user's key, made at start.
    var accessKeyID = ""
    var secretAccessKey = ""

    var endpoint: String { "http://127.0.0.1:\(self.port)" }

    /// What a pinfetch child needs to reach this server as `s3://` with the user's key: the
    /// endpoint, the keys, and a home of its own (no `~/.aws` of the machine's), every other AWS
    /// variable emptied (empty is unset to pinfetch).
    func environment(home: String, keys: Bool = true) -> [String: String] {
        var variables = [
            "HOME": home, "AWS_ENDPOINT_URL": self.endpoint, "AWS_ENDPOINT_URL_S3": "", "AWS_REGION": "",
            "AWS_DEFAULT_REGION": "", "AWS_PROFILE": "", "AWS_DEFAULT_PROFILE": "", "AWS_CONFIG_FILE": "",
            "AWS_SHARED_CREDENTIALS_FILE": "", "AWS_SESSION_TOKEN": "", "AWS_ACCESS_KEY_ID": "",
            "AWS_SECRET_ACCESS_KEY": "",
        ]
        if keys {
            variables["AWS_ACCESS_KEY_ID"] = self.accessKeyID
            variables["AWS_SECRET_ACCESS_KEY"] = self.secretAccessKey
        }
        return variables
    }

    /// Runs curl with `arguments` against `path` of the server; its status and body.
    @discardableResult
    func curl(
        _ arguments: [String],
        _ path: String,
        service: String = "s3",
        key: String? = nil
    ) async throws
        -> (status: Int, body: String)
    {
        let user = key ?? "\(self.accessKeyID):\(self.secretAccessKey)"
        let run = try await ChildProcess.run(
            "/usr/bin/curl",
            [
                "-s", "-o", self.prefix + "/curl-body", "-w", "%{http_code}", "--aws-sigv4",
                "aws:amz:us-east-1:\(service)",
                "-u", user,
            ] + arguments + [self.endpoint + path],
            logs: self.prefix + "/curl-\(UUID().uuidString.prefix(8))"
        )
        let body = (try? String(contentsOfFile: self.prefix + "/curl-body", encoding: .utf8)) ?? ""
        return (Int(run.standardOutput) ?? 0, body)
    }

    /// Makes `bucket`.
    func makeBucket(_ bucket: String) async throws {
        let made = try await self.curl(["-X", "PUT", "-H", "x-amz-content-sha256: UNSIGNED-PAYLOAD"], "/" + bucket)
        guard made.status == 200 else { throw NginxError("moto: bucket \(bucket): HTTP \(made.status) \(made.body)") }
    }

    /// Stores `body` as `key` (already percent-encoded as a path) of `bucket`.
    func put(_ body: [UInt8], bucket: String, key: String) async throws {
        let file = self.prefix + "/upload-\(UUID().uuidString.prefix(8))"
        try Data(body).write(to: URL(fileURLWithPath: file))
        let put = try await self.curl(
            ["-T", file, "-H", "x-amz-content-sha256: \(Fixtures.sha256(body))"],
            "/\(bucket)/\(key)"
        )
        guard put.status == 200 else { throw NginxError("moto: put \(key): HTTP \(put.status) \(put.body)") }
    }

    /// Starts moto in `prefix` and makes the IAM user whose key signs from then on; without
    /// `accessControl`, every request is taken, signed or not (the key is made all the same).
    static func start(in prefix: String, accessControl: Bool = true) async throws -> Moto {
        guard FileManager.default.isExecutableFile(atPath: Self.executable) else {
            throw NginxError(
                "\(Self.executable) is missing: python3 -m venv .build/test-tools/moto && "
                    + ".build/test-tools/moto/bin/pip install 'moto[server]' (.ci/run does)"
            )
        }
        let (child, port) = try await ChildProcess.listening("moto") { port, attempt in
            try ChildProcess(
                Self.executable,
                ["-H", "127.0.0.1", "-p", "\(port)"],
                logs: prefix + "/moto-\(attempt)",
                environment: [
                    "INITIAL_NO_AUTH_ACTION_COUNT": accessControl ? "3" : "1000000", "MOTO_CALL_RESET_API": "false",
                ]
            )
        }
        var moto = Moto(prefix: prefix, port: port, child: child)
        do {
            // The three calls before access control: a user, its key, and a policy for S3.
            let iam = "AKIAIOSFODNN7EXAMPLE:setup"
            let version = ["-d", "Version=2010-05-08"]
            try await moto.curl(
                ["-d", "Action=CreateUser", "-d", "UserName=ci"] + version,
                "/",
                service: "iam",
                key: iam
            )
            let key = try await moto.curl(
                ["-d", "Action=CreateAccessKey", "-d", "UserName=ci"] + version,
                "/",
                service: "iam",
                key: iam
            )
            let policy = #"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"*"}]}"#
            try await moto.curl(
                [
                    "-d", "Action=PutUserPolicy", "-d", "UserName=ci", "-d", "PolicyName=s3",
                    "--data-urlencode", "PolicyDocument=\(policy)",
                ] + version,
                "/",
                service: "iam",
                key: iam
            )
            func element(_ name: String) -> String? {
                guard let open = key.body.range(of: "<\(name)>"), let close = key.body.range(of: "</\(name)>") else {
                    return nil
                }
                return String(key.body[open.upperBound..<close.lowerBound])
            }
            guard let id = element("AccessKeyId"), let secret = element("SecretAccessKey") else {
                throw NginxError("moto: no access key made: HTTP \(key.status) \(key.body)")
            }
            moto.accessKeyID = id
            moto.secretAccessKey = secret
            return moto
        } catch {
            await child.end()
            throw error
        }
    }
}

/// Runs `body` with moto started in a temporary directory, stopped afterwards.
func withMoto<T>(accessControl: Bool = true, _ body: (Moto) async throws -> T) async throws -> T {
    try await withTemporaryDirectory { directory in
        let prefix = directory + "/moto"
        try FileManager.default.createDirectory(atPath: prefix, withIntermediateDirectories: true)
        let moto = try await Moto.start(in: prefix, accessControl: accessControl)
        let result: Result<T, any Error>
        do { result = .success(try await body(moto)) } catch { result = .failure(error) }
        await moto.child.end()
        return try result.get()
    }
}
