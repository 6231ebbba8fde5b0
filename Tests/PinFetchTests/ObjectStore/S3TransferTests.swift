import Foundation
@preconcurrency import Glibc
import Synchronization
import Testing

/// How an `s3://` object's bytes come: a resume of a replaced object answered `412` by its
/// `If-Match` (a test server playing S3, whose HEAD still showed the old ETag, as a listing or
/// a cache may), and a segmented download in signed ranged GETs (moto, access control on).
@Suite(.serialized) struct S3TransferTests {
    static let old = (0..<1_000_000).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 7) }
    static let new = Array(Self.old.reversed())

    @Test func `a replaced object answers the resume's If-Match with 412, and the download starts over`()
        async throws
    {
        try await withTestHTTPServer(serving: TestResource(body: [])) { bucket in
            let plain = Mutex(0)
            bucket.handler = { request, _ in
                let range = request.header("Range")
                switch (request.method, range) {
                case ("HEAD", _):
                    return TestResponse(status: 200, headers: [("ETag", "\"old\"")], body: Self.old)
                case ("GET", nil)
                where plain.withLock {
                    $0 += 1
                    return $0
                } == 1:
                    // The old object, cut halfway: a partial with the old ETag stays.
                    return TestResponse(
                        status: 200,
                        headers: [("ETag", "\"old\""), ("Accept-Ranges", "bytes")],
                        body: Self.old,
                        closeAfterBodyBytes: Self.old.count / 2
                    )
                case ("GET", nil):
                    return TestResponse(status: 200, headers: [("ETag", "\"new\"")], body: Self.new)
                default:
                    // S3 ignores If-Range; its If-Match sees the object was replaced.
                    guard request.header("If-Match") == "\"old\"" else { return TestResponse(status: 400) }
                    return TestResponse(
                        status: 412,
                        headers: [("Content-Type", "application/xml")],
                        body: Array("<Error><Code>PreconditionFailed</Code></Error>".utf8)
                    )
                }
            }
            try await withTemporaryDirectory { work in
                let environment = [
                    "HOME": work, "AWS_ENDPOINT_URL_S3": bucket.baseURL, "AWS_ACCESS_KEY_ID": "AKIATEST",
                    "AWS_SECRET_ACCESS_KEY": "secret", "AWS_REGION": "us-east-1", "AWS_PROFILE": "",
                    "AWS_SESSION_TOKEN": "", "AWS_WEB_IDENTITY_TOKEN_FILE": "",
                ]
                let run = try await S3FetchTests.pinfetch(
                    [
                        "--retries", "3", "-o", "\(work)/out", "--sha256", Fixtures.sha256(Self.new),
                        "s3://builds/app.bin",
                    ],
                    environment,
                    in: work
                )
                #expect(S3FetchTests.status(run) == 0, "\(run.transcript)")
                let same = contents("\(work)/out") == Self.new
                #expect(same)
                let ranged = bucket.requests.filter { $0.method == "GET" && $0.header("Range") != nil }
                #expect(ranged.count == 1 && ranged.first?.header("If-Match") == "\"old\"", "\(bucket.requests)")
                #expect(ranged.first?.header("Range") == "bytes=\(Self.old.count / 2)-")
                #expect(bucket.requests.filter { $0.method == "GET" && $0.header("Range") == nil }.count == 2)
                #expect(run.standardOutput.contains(#""restarts":1"#), "\(run.standardOutput)")
            }
        }
    }

    @Test func `a segmented download fetches an object in signed ranged GETs`() async throws {
        let body = (0..<(12 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 2_246_822_519 >> 9) }
        try await withMoto { moto in
            try await moto.makeBucket("large")
            try await moto.put(body, bucket: "large", key: "disk.img")
            try await withTemporaryDirectory { work in
                // 2 MiB/s per connection: more connections raise the rate, so all four are used.
                let run = try await S3FetchTests.pinfetch(
                    [
                        "--segments", "4", "--segment-size", "1M", "--limit-rate", "2M", "--sha256",
                        Fixtures.sha256(body), "-o", "\(work)/disk.img", "s3://large/disk.img",
                    ],
                    moto.environment(home: work),
                    in: work
                )
                #expect(S3FetchTests.status(run) == 0, "\(run.transcript)")
                let same = contents("\(work)/disk.img") == body
                #expect(same)
                // moto's log: each GET of the object, and its status (signed by the user's key, or 403).
                let gets = moto.child.standardError.split(separator: "\n").filter { $0.contains("GET /large/disk.img") }
                #expect(gets.count >= 4, "\(gets)")
                #expect(gets.filter { $0.contains("\" 206 ") }.count >= 3, "\(gets)")
                #expect(!gets.contains { $0.contains("\" 403 ") })
            }
        }
    }

    @Test func `-u and -H Authorization are not sent to a signed object, and a warning says so`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: Self.new, etag: "\"v\"")) { bucket in
            try await withTemporaryDirectory { work in
                let environment = [
                    "HOME": work, "AWS_ENDPOINT_URL_S3": bucket.baseURL, "AWS_ACCESS_KEY_ID": "AKIATEST",
                    "AWS_SECRET_ACCESS_KEY": "secret", "AWS_REGION": "us-east-1", "AWS_PROFILE": "",
                    "AWS_SESSION_TOKEN": "", "AWS_WEB_IDENTITY_TOKEN_FILE": "",
                ]
                for option in [["-u", "me:password"], ["-H", "Authorization: Bearer abc"]] {
                    let run = try await S3FetchTests.pinfetch(
                        option + ["-o", "\(work)/out", "--sha256", Fixtures.sha256(Self.new), "s3://builds/app.bin"],
                        environment,
                        in: work
                    )
                    #expect(S3FetchTests.status(run) == 0, "\(run.transcript)")
                    #expect(
                        run.standardError.contains("the Authorization of -u/-H is not sent"),
                        "\(run.standardError)"
                    )
                    try? FileManager.default.removeItem(atPath: "\(work)/out")
                }
                #expect(bucket.requests.count >= 2)
                for request in bucket.requests {
                    #expect(request.headers(named: "Authorization").count == 1)
                    #expect(request.header("Authorization")?.hasPrefix("AWS4-HMAC-SHA256 Credential=AKIATEST/") == true)
                }
            }
        }
    }

    @Test func `a remote cache bucket that refuses is named with S3's code, and the origin serves the file`()
        async throws
    {
        try await withMoto { moto in
            try await moto.makeBucket("fleet-cache")
            try await withTestHTTPServer(serving: TestResource(body: Self.new)) { origin in
                try await withTemporaryDirectory { work in
                    var environment = moto.environment(home: work)
                    environment["AWS_SECRET_ACCESS_KEY"] = "not-the-secret"
                    let run = try await S3FetchTests.pinfetch(
                        [
                            "--remote-cache", "s3://fleet-cache/pinfetch", "-o", "\(work)/out", "--sha256",
                            Fixtures.sha256(Self.new), origin.url("/app.bin"),
                        ],
                        environment,
                        in: work
                    )
                    #expect(S3FetchTests.status(run) == 0, "\(run.transcript)")
                    let same = contents("\(work)/out") == Self.new
                    #expect(same)
                    #expect(
                        run.standardError.contains("HTTP 403, S3 SignatureDoesNotMatch; fetching from the mirrors"),
                        "\(run.standardError)"
                    )
                }
            }
        }
    }

    @Test func `--dry-run shows an object as s3:// and asks nothing`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: Self.new)) { bucket in
            try await withTemporaryDirectory { work in
                let run = try await S3FetchTests.pinfetch(
                    ["--dry-run", "-o", "\(work)/out", "s3://builds/app.bin"],
                    ["HOME": work, "AWS_ENDPOINT_URL_S3": bucket.baseURL],
                    in: work
                )
                #expect(S3FetchTests.status(run) == 0, "\(run.transcript)")
                #expect(run.standardOutput.contains(#""mirrors":["s3://builds/app.bin"]"#), "\(run.standardOutput)")
                #expect(!run.standardOutput.contains(bucket.baseURL))
                #expect(bucket.requests.isEmpty)
            }
        }
    }
}
