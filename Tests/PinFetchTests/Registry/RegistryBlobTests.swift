import Foundation
@preconcurrency import Glibc
import Testing

@testable import PinFetch

/// `oci://REGISTRY/REPOSITORY@sha256:HEX`: a registry blob, pinned by its digest, from a real
/// registry (Debian's docker-registry with htpasswd) with `--user`, docker's config or a docker
/// credential helper; the Bearer token exchange against a registry and realm played by test
/// servers, whose token never follows the redirect to storage.
@Suite(.serialized) struct RegistryBlobTests {
    static let body = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 9) }

    static func pinfetch(
        _ arguments: [String],
        in work: String,
        environment: [String: String] = [:]
    ) async throws
        -> ChildProcess
    {
        let child = try ChildProcess(
            try EndToEndTests.pinfetchExecutable(),
            ["--no-cache", "--retries", "0", "--json"] + arguments,
            logs: "\(work)/pinfetch-\(UUID().uuidString.prefix(8))",
            environment: ["HOME": work, "DOCKER_CONFIG": ""].merging(environment) { $1 }
        )
        try await child.wait(timeout: .seconds(60))
        return child
    }

    static func status(_ child: ChildProcess) -> Int32? {
        if case .exited(let code) = child.termination { return code }
        return nil
    }

    @Test func `a blob comes by --user, by docker's config and by its credential helper, pinned by its digest`()
        async throws
    {
        try await withDockerRegistry { registry in
            try await registry.push(Self.body, to: "tools/cli")
            try await withTemporaryDirectory { work in
                let url = registry.blobURL("tools/cli", Self.body)
                // Anonymous: the registry asks for credentials.
                let anonymous = try await Self.pinfetch(["-o", "\(work)/none", url], in: work)
                #expect(Self.status(anonymous) == 6, "\(anonymous.transcript)")
                #expect(anonymous.standardError.contains("asks for credentials: give --user"))
                #expect(!FileManager.default.fileExists(atPath: "\(work)/none"))

                let user = try await Self.pinfetch(
                    ["-u", "\(DockerRegistry.user):\(DockerRegistry.password)", "-o", "\(work)/by-user", url],
                    in: work
                )
                #expect(Self.status(user) == 0, "\(user.transcript)")
                let same = contents("\(work)/by-user") == Self.body
                #expect(same)
                #expect(user.standardOutput.contains(#""url":"\#(url)""#), "\(user.standardOutput)")

                // A netrc entry for the registry's host.
                try "machine 127.0.0.1 login \(DockerRegistry.user) password \(DockerRegistry.password)\n"
                    .write(toFile: "\(work)/netrc", atomically: true, encoding: .utf8)
                let netrc = try await Self.pinfetch(
                    ["--netrc-file", "\(work)/netrc", "-o", "\(work)/by-netrc", url],
                    in: work
                )
                #expect(Self.status(netrc) == 0, "\(netrc.transcript)")
                #expect(contents("\(work)/by-netrc")?.count == Self.body.count)

                // docker login's config: auths.
                let auth = Data("\(DockerRegistry.user):\(DockerRegistry.password)".utf8).base64EncodedString()
                try FileManager.default.createDirectory(atPath: "\(work)/.docker", withIntermediateDirectories: true)
                try #"{"auths": {"\#(registry.host)": {"auth": "\#(auth)"}}}"#.write(
                    toFile: "\(work)/.docker/config.json",
                    atomically: true,
                    encoding: .utf8
                )
                let config = try await Self.pinfetch(["-o", "\(work)/by-config", url], in: work)
                #expect(Self.status(config) == 0, "\(config.transcript)")

                // A config docker would not read is named, not taken for no credentials.
                try #"{"auths": "#.write(toFile: "\(work)/.docker/config.json", atomically: true, encoding: .utf8)
                let broken = try await Self.pinfetch(["-o", "\(work)/broken", url], in: work)
                #expect(Self.status(broken) == 6, "\(broken.transcript)")
                #expect(
                    broken.standardError.contains("config.json is no JSON docker config"),
                    "\(broken.standardError)"
                )

                // A credential helper docker-credential-NAME on PATH, asked with the registry.
                try FileManager.default.createDirectory(atPath: "\(work)/bin", withIntermediateDirectories: true)
                try """
                #!/bin/sh
                [ "$1" = get ] || exit 9
                read -r host; echo "$host" > '\(work)/helper-asked'
                echo '{"ServerURL": "'"$host"'", "Username": "\(DockerRegistry.user)", "Secret": "\(DockerRegistry.password)"}'
                """.write(toFile: "\(work)/bin/docker-credential-test", atomically: true, encoding: .utf8)
                chmod("\(work)/bin/docker-credential-test", 0o755)
                try #"{"credHelpers": {"\#(registry.host)": "test"}}"#.write(
                    toFile: "\(work)/.docker/config.json",
                    atomically: true,
                    encoding: .utf8
                )
                let helper = try await Self.pinfetch(
                    ["-o", "\(work)/by-helper", url],
                    in: work,
                    environment: ["PATH": "\(work)/bin:/usr/bin:/bin"]
                )
                #expect(Self.status(helper) == 0, "\(helper.transcript)")
                let asked = (try? String(contentsOfFile: "\(work)/helper-asked", encoding: .utf8)) ?? ""
                #expect(asked == registry.host + "\n")
                #expect(!helper.transcript.contains(DockerRegistry.password))
            }
        }
    }

    @Test func `a blob whose stored bytes are not its digest is exit 9, and a pin that disagrees exit 2`()
        async throws
    {
        try await withDockerRegistry { registry in
            try await registry.push(Self.body, to: "tools/cli")
            var corrupt = Self.body
            corrupt[1000] ^= 0xFF
            try Data(corrupt).write(to: URL(fileURLWithPath: registry.storedPath(of: Self.body)))
            try await withTemporaryDirectory { work in
                let credentials = ["-u", "\(DockerRegistry.user):\(DockerRegistry.password)"]
                let url = registry.blobURL("tools/cli", Self.body)
                let run = try await Self.pinfetch(credentials + ["-o", "\(work)/out", url], in: work)
                #expect(Self.status(run) == 9, "\(run.transcript)")
                #expect(!FileManager.default.fileExists(atPath: "\(work)/out"))
                let other = try await Self.pinfetch(
                    credentials + ["--sha256", Fixtures.sha256(corrupt), "-o", "\(work)/out", url],
                    in: work
                )
                #expect(Self.status(other) == 2, "\(other.transcript)")
                #expect(other.standardError.contains("is addressed by its digest, and the pin given is another"))
            }
        }
    }

    @Test func `a Bearer registry's token is asked at its realm, sent to the registry, never to the storage`()
        async throws
    {
        try await withTestHTTPServer(serving: TestResource(body: Self.body)) { storage in
            try await withTestHTTPServer(serving: TestResource(body: [])) { registry in
                let realm = registry.url("/token")
                let hex = Fixtures.sha256(Self.body)
                registry.handler = { request, _ in
                    if request.target.hasPrefix("/token?") {
                        // Basic credentials for the realm only; an anonymous token would be refused.
                        guard request.header("Authorization") == "Basic \(Data("bot:pw".utf8).base64EncodedString())"
                        else { return TestResponse(status: 401) }
                        return TestResponse(status: 200, body: Array(#"{"token": "tok-123", "expires_in": 300}"#.utf8))
                    }
                    guard request.header("Authorization") == "Bearer tok-123" else {
                        return TestResponse(
                            status: 401,
                            headers: [("WWW-Authenticate", #"Bearer realm="\#(realm)",service="test-registry""#)]
                        )
                    }
                    // A redirect within the registry's origin keeps the token (not --user's Basic),
                    // then one to the storage on another origin carries none.
                    if request.target == "/v2/team/model/blobs/sha256:\(hex)" {
                        return TestResponse(
                            status: 302,
                            headers: [("Location", "/v2/team/model/blobs/sha256:\(hex)?hop=1")]
                        )
                    }
                    guard request.target == "/v2/team/model/blobs/sha256:\(hex)?hop=1" else {
                        return TestResponse(status: 200)
                    }
                    return TestResponse(status: 307, headers: [("Location", "http://localhost:\(storage.port)/blob")])
                }
                try await withTemporaryDirectory { work in
                    let run = try await Self.pinfetch(
                        [
                            "-u", "bot:pw", "-v", "-o", "\(work)/model",
                            "oci://127.0.0.1:\(registry.port)/team/model@sha256:\(hex)",
                        ],
                        in: work
                    )
                    #expect(Self.status(run) == 0, "\(run.transcript)")
                    let same = contents("\(work)/model") == Self.body
                    #expect(same)
                    // -v shows the token's scheme where it replaced --user's Basic, never its value.
                    #expect(run.standardError.contains("Authorization: Bearer ***"), "\(run.standardError)")
                    #expect(
                        !run.standardError.contains("tok-123") && !run.standardError.contains("Authorization: Basic")
                    )
                    let token = registry.requests.filter { $0.target.hasPrefix("/token?") }
                    #expect(token.count == 1, "\(registry.requests.map(\.target))")
                    #expect(
                        token.first?.target == "/token?service=test-registry&scope=repository%3Ateam%2Fmodel%3Apull"
                    )
                    let blob = registry.requests.filter { $0.target.contains("/blobs/") }
                    #expect(blob.count >= 2 && blob.allSatisfy { $0.header("Authorization") == "Bearer tok-123" })
                    #expect(
                        !storage.requests.isEmpty && storage.requests.allSatisfy { $0.header("Authorization") == nil }
                    )
                }
            }
        }
    }

    @Test func `an oci URL is read as the spec names a blob or a tag`() throws {
        let blob = try OCILocation(
            "oci://Registry.example:5000/a/b-c__d.e@sha256:\(String(repeating: "ab", count: 32))"
        )
        #expect(blob.registry == "registry.example:5000" && blob.repository == "a/b-c__d.e")
        #expect(
            blob.url == "https://registry.example:5000/v2/a/b-c__d.e/blobs/sha256:\(String(repeating: "ab", count: 32))"
        )
        #expect(
            try OCILocation("oci://localhost:5000/x@sha256:\(String(repeating: "0", count: 64))").base
                == "http://localhost:5000"
        )
        // A tag names a manifest; a digest is a blob, or a manifest taken as an artifact's.
        let tagged = try OCILocation("oci://r.example:5000/tools/cli:v1.2_rc-3")
        #expect(tagged.isManifest && tagged.reference == .tag("v1.2_rc-3") && tagged.pin == nil)
        #expect(tagged.url == "https://r.example:5000/v2/tools/cli/manifests/v1.2_rc-3")
        #expect(tagged.text == "oci://r.example:5000/tools/cli:v1.2_rc-3")
        #expect(try OCILocation(tagged.text) == tagged)
        #expect(blob.manifest.url.hasSuffix("/v2/a/b-c__d.e/manifests/sha256:\(String(repeating: "ab", count: 32))"))
        #expect(blob.manifest.pin == blob.pin && !blob.isManifest)
        let both = try OCILocation("oci://r.example/repo:v1@sha256:\(String(repeating: "cd", count: 32))")
        #expect(both.reference == .digest(String(repeating: "cd", count: 32)) && both.repository == "repo")
        // Docker Hub by any of its names is its API's host; an official image is under library/.
        let hub = try OCILocation("oci://docker.io/alpine:3.20")
        #expect(hub.registry == "registry-1.docker.io" && hub.repository == "library/alpine")
        #expect(try OCILocation("oci://index.docker.io/acme/tool:1").repository == "acme/tool")
        #expect(try OCILocation("oci://ghcr.io/alpine:1").repository == "alpine")
        for refused in [
            "oci://r.example/repo", "oci://r.example/repo:-x",
            "oci://r.example/repo:\(String(repeating: "t", count: 129))",
            "oci://r.example/repo:.bad@sha256:\(String(repeating: "0", count: 64))", "oci://r.example/repo:a/b",
            "oci://r.example/Repo@sha256:\(String(repeating: "0", count: 64))",
            "oci://r.example/a//b@sha256:\(String(repeating: "0", count: 64))", "oci://r.example/a@sha512:00",
            "oci://u:p@r.example/a@sha256:\(String(repeating: "0", count: 64))", "oci://r.example",
            "oci://r.example/a___b@sha256:\(String(repeating: "0", count: 64))",
        ] {
            #expect(throws: PinFetchError.self, "\(refused)") { try OCILocation(refused) }
        }
        let challenges = AuthenticationChallenge.parse(
            #"Basic realm="x", Bearer realm="https://auth.example/token",service="registry.example",scope="repository:a:pull""#
        )
        #expect(challenges.map(\.scheme) == ["basic", "bearer"])
        #expect(challenges.last?.parameters["realm"] == "https://auth.example/token")
        #expect(challenges.last?.parameters["scope"] == "repository:a:pull")
    }

    @Test func `docker's config keeps Docker Hub under its old index's URL, for any of its names`() async throws {
        try await withTemporaryDirectory { work in
            let auth = Data("hubuser:hubpass".utf8).base64EncodedString()
            try #"{"auths": {"https://index.docker.io/v1/": {"auth": "\#(auth)"}, "ghcr.io": {"auth": "\#(auth)"}}}"#
                .write(toFile: "\(work)/config.json", atomically: true, encoding: .utf8)
            let config = DockerConfig(environment: ["DOCKER_CONFIG": work])
            for name in ["registry-1.docker.io", "docker.io", "index.docker.io", "ghcr.io"] {
                #expect(try config.credentials(for: name) { false } == "hubuser:hubpass", "\(name)")
            }
            #expect(try config.credentials(for: "quay.io") { false } == nil)
        }
    }
}
