import Foundation
@preconcurrency import Glibc
import Testing

/// `s3://BUCKET/KEY` against a real S3 API with access control on (moto): signed by libcurl
/// with the keys found as the AWS CLI finds them, verified, resumed, and refused with S3's own
/// reason and the documented exit status.
@Suite(.serialized) struct S3FetchTests {
    static let body = (0..<3_000_000).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) }
    /// A key with a space, a plus and a non-ASCII letter: each percent-encoded once in the path.
    static let key = "releases/v1/tool +x ü.tar.gz"
    static let encodedKey = "releases/v1/tool%20%2Bx%20%C3%BC.tar.gz"

    /// Runs pinfetch with `arguments` and `environment` to its end, its output under `work`.
    static func pinfetch(
        _ arguments: [String],
        _ environment: [String: String],
        in work: String
    ) async throws
        -> ChildProcess
    {
        let child = try ChildProcess(
            try EndToEndTests.pinfetchExecutable(),
            ["--no-cache", "--retry-delay", "0", "--retries", "1", "--json"] + arguments,
            logs: "\(work)/pinfetch-\(UUID().uuidString.prefix(8))",
            environment: environment
        )
        try await child.wait(timeout: .seconds(60))
        return child
    }

    static func status(_ child: ChildProcess) -> Int32? {
        if case .exited(let code) = child.termination { return code }
        return nil
    }

    /// A bucket holding ``body`` as ``key``, and a home directory of the test's own.
    static func withObject(accessControl: Bool = true, _ body: (Moto, String) async throws -> Void) async throws {
        try await withMoto(accessControl: accessControl) { moto in
            try await moto.makeBucket("artifacts")
            try await moto.put(Self.body, bucket: "artifacts", key: Self.encodedKey)
            try await withTemporaryDirectory { work in try await body(moto, work) }
        }
    }

    @Test func `an object is fetched signed with the environment's keys and verified`() async throws {
        try await Self.withObject { moto, work in
            let run = try await Self.pinfetch(
                ["-o", "\(work)/tool.tgz", "--sha256", Fixtures.sha256(Self.body), "s3://artifacts/\(Self.key)"],
                moto.environment(home: work),
                in: work
            )
            #expect(Self.status(run) == 0, "\(run.transcript)")
            let same2 = contents("\(work)/tool.tgz") == Self.body
            #expect(same2)
            #expect(
                run.standardOutput.contains(#""url":"s3://artifacts/releases/v1/tool +x ü.tar.gz""#),
                "\(run.standardOutput)"
            )
            // The name is the key's last segment.
            let named = try await Self.pinfetch(
                ["-P", "\(work)/d", "s3://artifacts/\(Self.key)"],
                moto.environment(home: work),
                in: work
            )
            #expect(Self.status(named) == 0, "\(named.transcript)")
            let same3 = contents("\(work)/d/tool +x ü.tar.gz") == Self.body
            #expect(same3)
        }
    }

    @Test func `a wrong secret is exit 6 with S3's code, an unsigned request exit 6 saying so, and nothing is created`()
        async throws
    {
        try await Self.withObject { moto, work in
            var environment = moto.environment(home: work)
            environment["AWS_SECRET_ACCESS_KEY"] = "wrong-secret"
            let wrong = try await Self.pinfetch(
                ["-o", "\(work)/out", "s3://artifacts/\(Self.key)"],
                environment,
                in: work
            )
            #expect(Self.status(wrong) == 6, "\(wrong.transcript)")
            #expect(wrong.standardError.contains("S3 SignatureDoesNotMatch"), "\(wrong.standardError)")
            #expect(!wrong.standardError.contains("wrong-secret") && !wrong.standardOutput.contains("wrong-secret"))
            let unsigned = try await Self.pinfetch(
                ["-o", "\(work)/out", "s3://artifacts/\(Self.key)"],
                moto.environment(home: work, keys: false),
                in: work
            )
            #expect(Self.status(unsigned) == 6, "\(unsigned.transcript)")
            #expect(unsigned.standardError.contains("unsigned: no AWS credentials"), "\(unsigned.standardError)")
            #expect(listing(work).allSatisfy { $0.hasPrefix("pinfetch-") }, "\(listing(work))")
        }
    }

    @Test func `a missing key or bucket is exit 8 naming S3's code`() async throws {
        try await Self.withObject { moto, work in
            for (url, code) in [
                ("s3://artifacts/no/such.tgz", "NoSuchKey"), ("s3://no-such-bucket/x.tgz", "NoSuchBucket"),
            ] {
                let run = try await Self.pinfetch(["-o", "\(work)/out", url], moto.environment(home: work), in: work)
                #expect(Self.status(run) == 8, "\(run.transcript)")
                #expect(run.standardError.contains("S3 \(code)"), "\(run.standardError)")
            }
            #expect(!FileManager.default.fileExists(atPath: "\(work)/out"))
        }
    }

    /// The AWS CLI's files: a profile's keys in `credentials`, its region in `config`.
    @Test func `a profile's keys in the credentials file sign the request`() async throws {
        try await Self.withObject { moto, work in
            try FileManager.default.createDirectory(atPath: "\(work)/.aws", withIntermediateDirectories: true)
            try "[ci]\naws_access_key_id = \(moto.accessKeyID)\naws_secret_access_key = \(moto.secretAccessKey)\n"
                .write(toFile: "\(work)/.aws/credentials", atomically: true, encoding: .utf8)
            try "[profile ci]\nregion = eu-west-1\n".write(
                toFile: "\(work)/.aws/config",
                atomically: true,
                encoding: .utf8
            )
            var environment = moto.environment(home: work, keys: false)
            environment["AWS_PROFILE"] = "ci"
            let run = try await Self.pinfetch(
                ["-o", "\(work)/out", "--sha256", Fixtures.sha256(Self.body), "s3://artifacts/\(Self.key)"],
                environment,
                in: work
            )
            #expect(Self.status(run) == 0, "\(run.transcript)")
            let same4 = contents("\(work)/out") == Self.body
            #expect(same4)
            // A profile neither file has is an error, not an unsigned request.
            environment["AWS_PROFILE"] = "nobody"
            let missing = try await Self.pinfetch(
                ["-o", "\(work)/other", "s3://artifacts/\(Self.key)"],
                environment,
                in: work
            )
            #expect(Self.status(missing) == 6, "\(missing.transcript)")
            #expect(missing.standardError.contains("AWS profile 'nobody' is in neither"), "\(missing.standardError)")
        }
    }

    /// `credential_process`: run without a shell, its JSON read; one that fails, hangs or
    /// prints garbage is exit 6 with its reason (its first stderr line) and nothing created.
    @Test func `a credential_process gives the keys, and one that fails or prints garbage is exit 6`() async throws {
        try await Self.withObject { moto, work in
            try FileManager.default.createDirectory(atPath: "\(work)/.aws", withIntermediateDirectories: true)
            let good = "\(work)/good helper.sh"
            try """
            #!/bin/sh
            echo '{"Version": 1, "AccessKeyId": "\(moto.accessKeyID)", "SecretAccessKey": "\(moto.secretAccessKey)"}'
            """.write(toFile: good, atomically: true, encoding: .utf8)
            let failing = "\(work)/failing.sh"
            // It prints what it holds: the secret is hidden, the rest of the line shown.
            try
                "#!/bin/sh\necho 'token expired for wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY: run sso login' >&2\nexit 3\n"
                .write(
                    toFile: failing,
                    atomically: true,
                    encoding: .utf8
                )
            let expired = "\(work)/expired.sh"
            try """
            #!/bin/sh
            echo '{"Version": 1, "AccessKeyId": "K", "SecretAccessKey": "S", "Expiration": "2000-01-01T00:00:00Z"}'
            """.write(toFile: expired, atomically: true, encoding: .utf8)
            chmod(expired, 0o755)
            let garbage = "\(work)/garbage.sh"
            try "#!/bin/sh\necho 'not json'\n".write(toFile: garbage, atomically: true, encoding: .utf8)
            for script in [good, failing, garbage] { chmod(script, 0o755) }
            try """
            [profile good]
            credential_process = "\(good)" --flag
            [profile failing]
            credential_process = \(failing)
            [profile garbage]
            credential_process = \(garbage)
            [profile expired]
            credential_process = \(expired)
            """.write(toFile: "\(work)/.aws/config", atomically: true, encoding: .utf8)
            var environment = moto.environment(home: work, keys: false)
            environment["AWS_PROFILE"] = "good"
            let run = try await Self.pinfetch(
                ["-o", "\(work)/out", "s3://artifacts/\(Self.key)"],
                environment,
                in: work
            )
            #expect(Self.status(run) == 0, "\(run.transcript)")
            let same5 = contents("\(work)/out") == Self.body
            #expect(same5)
            for (profile, reason) in [
                (
                    "failing",
                    "credential_process of profile failing failed (exit 3): token expired for ***: run sso login"
                ),
                ("garbage", "credential_process of profile garbage printed no credentials"),
                ("expired", "the AWS credentials from credential_process of profile expired expired at 2000-01-01"),
            ] {
                environment["AWS_PROFILE"] = profile
                let failed = try await Self.pinfetch(
                    ["-o", "\(work)/\(profile)", "s3://artifacts/\(Self.key)"],
                    environment,
                    in: work
                )
                #expect(Self.status(failed) == 6, "\(failed.transcript)")
                #expect(failed.standardError.contains(reason), "\(failed.standardError)")
                #expect(!FileManager.default.fileExists(atPath: "\(work)/\(profile)"))
                #expect(!FileManager.default.fileExists(atPath: "\(work)/\(profile).part"))
            }
        }
    }

    /// A presigned URL (made by boto3, which moto's environment holds) is an ordinary URL: no
    /// credentials needed, its signature never shown.
    @Test func `a presigned URL still works, unsigned by pinfetch, its signature hidden`() async throws {
        // moto 5.2 answers a presigned URL with 500 while its access control is on: this one runs without.
        try await Self.withObject(accessControl: false) { moto, work in
            let python = URL(filePath: Moto.executable).deletingLastPathComponent().appending(path: "python").path
            let script = """
                import boto3, botocore.config
                s3 = boto3.client("s3", endpoint_url="\(moto.endpoint)", aws_access_key_id="\(moto.accessKeyID)",
                    aws_secret_access_key="\(moto.secretAccessKey)", region_name="us-east-1",
                    config=botocore.config.Config(signature_version="s3v4"))
                print(s3.generate_presigned_url("get_object", Params={"Bucket": "artifacts", "Key": "\(Self.key)"},
                    ExpiresIn=600))
                """
            let presign = try await ChildProcess.run(python, ["-c", script], logs: "\(work)/presign")
            let url = presign.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
            try #require(url.contains("X-Amz-Signature="), "\(presign.transcript)")
            let run = try await Self.pinfetch(
                ["-o", "\(work)/out", "--sha256", Fixtures.sha256(Self.body), url],
                moto.environment(home: work, keys: false),
                in: work
            )
            #expect(Self.status(run) == 0, "\(run.transcript)")
            let same6 = contents("\(work)/out") == Self.body
            #expect(same6)
            #expect(run.standardOutput.contains("X-Amz-Signature=***"), "\(run.standardOutput)")
        }
    }

    /// Killed mid-object, the rerun resumes with a signed ranged GET that carries `If-Match`
    /// (S3 ignores `If-Range`), and only the missing bytes come again.
    @Test func `a killed download resumes with a signed Range and If-Match`() async throws {
        try await Self.withObject { moto, work in
            let environment = moto.environment(home: work)
            let output = "\(work)/out"
            let first = try ChildProcess(
                try EndToEndTests.pinfetchExecutable(),
                ["--no-cache", "-q", "--limit-rate", "400K", "-o", output, "s3://artifacts/\(Self.key)"],
                logs: "\(work)/first",
                environment: environment
            )
            let deadline = ContinuousClock.now + .seconds(30)
            while first.isRunning, EndToEndTests.size(of: output + ".part") < 500_000, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            first.signal(SIGKILL)
            _ = try await first.wait(timeout: .seconds(10))
            let kept = EndToEndTests.size(of: output + ".part")
            #expect(kept > 0 && kept < Self.body.count, "\(kept)")
            let second = try await Self.pinfetch(
                ["-v", "-o", output, "--sha256", Fixtures.sha256(Self.body), "s3://artifacts/\(Self.key)"],
                environment,
                in: work
            )
            #expect(Self.status(second) == 0, "\(second.transcript)")
            #expect(second.standardOutput.contains(#""status":"resumed""#), "\(second.standardOutput)")
            #expect(second.standardError.contains("> If-Match: \""), "\(second.standardError)")
            // -v names the key id and where it came from, never the secret.
            #expect(
                second.standardError.contains("with AWS key \(moto.accessKeyID) from the environment"),
                "\(second.standardError)"
            )
            #expect(!second.standardError.contains(moto.secretAccessKey))
            let same1 = contents(output) == Self.body
            #expect(same1)
        }
    }

    /// A checksum file and a manifest in the bucket are read from the bucket, signed (never as
    /// the local path `./s3:/BUCKET/KEY`), and a manifest line may name `s3://` objects.
    @Test func `a checksum file and a manifest in a bucket are read from it`() async throws {
        try await Self.withObject { moto, work in
            try await moto.put(
                Array("\(Fixtures.sha256(Self.body))  releases/v1/tool +x ü.tar.gz\n".utf8),
                bucket: "artifacts",
                key: "releases/SHA256SUMS"
            )
            // A manifest's tokens are separated by blanks: a key without any.
            try await moto.put(Self.body, bucket: "artifacts", key: "releases/plain.tgz")
            try await moto.put(
                Array("s3://artifacts/releases/plain.tgz sha256:\(Fixtures.sha256(Self.body)) from-manifest\n".utf8),
                bucket: "artifacts",
                key: "releases/manifest"
            )
            let environment = moto.environment(home: work)
            let child = try ChildProcess(
                try EndToEndTests.pinfetchExecutable(),
                [
                    "--no-cache", "--retries", "0", "-q", "-o", "\(work)/out", "--checksum-file",
                    "s3://artifacts/releases/SHA256SUMS",
                    "s3://artifacts/\(Self.key)",
                ],
                logs: "\(work)/sums",
                environment: environment
            )
            try await child.wait(timeout: .seconds(60))
            #expect(Self.status(child) == 0, "\(child.transcript)")
            let same = contents("\(work)/out") == Self.body
            #expect(same)
            let manifest = try await Self.pinfetch(
                ["-P", "\(work)/m", "-i", "s3://artifacts/releases/manifest"],
                environment,
                in: work
            )
            #expect(Self.status(manifest) == 0, "\(manifest.transcript)")
            let listed = contents("\(work)/m/from-manifest") == Self.body
            #expect(listed)
        }
    }

    // MARK: - The remote cache in a bucket

    /// `--remote-cache s3://BUCKET/PREFIX`, bazel-remote's layout: a miss asks the origin and
    /// uploads the verified file (signed, with its SHA-256); the next run is a hit with no
    /// origin request; a corrupt blob is caught, and the upload that would replace it is a
    /// `412` (`If-None-Match: *`), so no upload ever overwrites another.
    @Test func `a bucket is a remote cache: miss and upload, hit, and a corrupt blob caught`() async throws {
        try await withMoto { moto in
            try await moto.makeBucket("fleet-cache")
            try await withTestHTTPServer(serving: TestResource(body: Fixtures.a, etag: Fixtures.etagA)) { origin in
                try await withTemporaryDirectory { work in
                    let environment = moto.environment(home: work)
                    let cache = ["--remote-cache", "s3://fleet-cache/pinfetch", "--remote-cache-upload"]
                    let pin = ["--sha256", Fixtures.sha256A]
                    let first = try await Self.pinfetch(
                        cache + pin + ["-v", "-o", "\(work)/a", origin.url()],
                        environment,
                        in: work
                    )
                    #expect(Self.status(first) == 0, "\(first.transcript)")
                    #expect(
                        first.standardError.contains("uploaded (\(Fixtures.a.count) bytes)"),
                        "\(first.standardError)"
                    )
                    #expect(origin.getRequests.count == 1)
                    // bazel-remote's key: PREFIX/cas/HH/HASH.
                    let key = "pinfetch/cas/\(Fixtures.sha256A.prefix(2))/\(Fixtures.sha256A)"
                    let stored = try await moto.curl(
                        ["-H", "x-amz-content-sha256: UNSIGNED-PAYLOAD", "-I"],
                        "/fleet-cache/\(key)"
                    )
                    #expect(stored.status == 200, "\(stored)")
                    let second = try await Self.pinfetch(
                        cache + pin + ["-o", "\(work)/b", origin.url()],
                        environment,
                        in: work
                    )
                    #expect(Self.status(second) == 0, "\(second.transcript)")
                    #expect(second.standardOutput.contains(#""cache":"remote""#), "\(second.standardOutput)")
                    #expect(origin.getRequests.count == 1, "a hit asks the origin nothing")
                    let same = contents("\(work)/b") == Fixtures.a
                    #expect(same)
                    // A blob with other bytes: caught, the origin asked, and the upload a 412.
                    try await moto.put(Fixtures.b, bucket: "fleet-cache", key: key)
                    let third = try await Self.pinfetch(
                        cache + pin + ["-v", "-o", "\(work)/c", origin.url()],
                        environment,
                        in: work
                    )
                    #expect(Self.status(third) == 0, "\(third.transcript)")
                    #expect(third.standardError.contains("holds other bytes than the pin"), "\(third.standardError)")
                    #expect(third.standardError.contains("already there"), "\(third.standardError)")
                    #expect(origin.getRequests.count == 2)
                    let right = contents("\(work)/c") == Fixtures.a
                    #expect(right)
                }
            }
        }
    }
}
