import Foundation
@preconcurrency import Glibc
import Synchronization
import Testing

@testable import PinFetch

/// Docker's token authentication against a real registry (Debian's docker-registry with
/// `auth: token`) that verifies the JWTs of the tests' own realm; and a `401` to a token or a
/// credential helper's fields answered once with fresh ones.
@Suite(.serialized) struct RegistryTokenTests {
    static let basic = "Basic \(Data("\(DockerRegistry.user):\(DockerRegistry.password)".utf8).base64EncodedString())"

    /// A realm that gives `next()`'s token to `--user`'s credentials, and 401 to anyone else.
    static func realm(_ server: TestHTTPServer, next: @escaping @Sendable () -> String) {
        server.handler = { request, _ in
            guard request.target.hasPrefix("/token?") else { return TestResponse(status: 404) }
            guard request.header("Authorization") == Self.basic else { return TestResponse(status: 401) }
            return TestResponse(status: 200, body: Array(#"{"token": "\#(next())", "expires_in": 300}"#.utf8))
        }
    }

    @Test
    func `a registry with token authentication lets a blob in with its realm's token, asked with --user or netrc`()
        async throws
    {
        try await withTemporaryDirectory { keys in
            let tokens = try await RegistryTokens.make(in: keys)
            let token = try await tokens.token("tools/cli")
            try await withTestHTTPServer(serving: TestResource(body: [])) { realm in
                Self.realm(realm) { token }
                try await withDockerRegistry(token: (realm.url("/token"), tokens)) { registry in
                    try await registry.push(RegistryBlobTests.body, to: "tools/cli")
                    try await withTemporaryDirectory { work in
                        let url = registry.blobURL("tools/cli", RegistryBlobTests.body)
                        let anonymous = try await RegistryBlobTests.pinfetch(["-o", "\(work)/none", url], in: work)
                        #expect(RegistryBlobTests.status(anonymous) == 6, "\(anonymous.transcript)")
                        #expect(anonymous.standardError.contains("refused a token"), "\(anonymous.standardError)")
                        #expect(!FileManager.default.fileExists(atPath: "\(work)/none"))
                        let run = try await RegistryBlobTests.pinfetch(
                            ["-u", "\(DockerRegistry.user):\(DockerRegistry.password)", "-o", "\(work)/blob", url],
                            in: work
                        )
                        #expect(RegistryBlobTests.status(run) == 0, "\(run.transcript)")
                        let same = contents("\(work)/blob") == RegistryBlobTests.body
                        #expect(same)
                        // A netrc entry for the realm's host is its credentials too.
                        try "machine 127.0.0.1 login \(DockerRegistry.user) password \(DockerRegistry.password)\n"
                            .write(toFile: "\(work)/netrc", atomically: true, encoding: .utf8)
                        let netrc = try await RegistryBlobTests.pinfetch(
                            ["--netrc-file", "\(work)/netrc", "-o", "\(work)/by-netrc", url],
                            in: work
                        )
                        #expect(RegistryBlobTests.status(netrc) == 0, "\(netrc.transcript)")
                        let netrcSame = contents("\(work)/by-netrc") == RegistryBlobTests.body
                        #expect(netrcSame)
                        let asked = realm.requests.filter { $0.header("Authorization") == Self.basic }
                        #expect(asked.count == 2, "\(realm.requests.map(\.target))")
                        #expect(
                            asked.first?.target
                                == "/token?service=\(RegistryTokens.service)&scope=repository%3Atools%2Fcli%3Apull"
                        )
                    }
                }
            }
        }
    }

    @Test func `a token that expires mid-run is asked for again on the registry's 401`() async throws {
        try await withTemporaryDirectory { keys in
            let tokens = try await RegistryTokens.make(in: keys)
            // The registry allows 60 s of clock skew past `exp`: this one ends 62 s before its
            // `exp` is refused, though its answer says 300 s; the next is good for 300 s.
            let issued = Mutex<[String]>([])
            let long = try await tokens.token("tools/cli")
            try await withTestHTTPServer(serving: TestResource(body: [])) { realm in
                let short = Mutex<String?>(nil)
                Self.realm(realm) {
                    let token =
                        short.withLock { value in
                            defer { value = nil }
                            return value
                        } ?? long
                    issued.withLock { $0.append(token) }
                    return token
                }
                try await withDockerRegistry(token: (realm.url("/token"), tokens)) { registry in
                    let slow = (0..<150_000).map { UInt8(truncatingIfNeeded: $0 &* 40_503) }
                    let quick = Array("the second file".utf8)
                    let manifest = RegistryArtifactTests.manifest([
                        RegistryArtifactTests.layer(slow, "slow.bin"), RegistryArtifactTests.layer(quick, "quick.txt"),
                    ])
                    for body in [slow, quick, RegistryArtifactTests.config] {
                        try await registry.push(body, to: "tools/cli")
                    }
                    try await registry.pushManifest(manifest, to: "tools/cli", reference: "v1")
                    try await withTemporaryDirectory { work in
                        short.withLock { $0 = nil }
                        let expiring = try await tokens.token("tools/cli", lifetime: -58)
                        short.withLock { $0 = expiring }
                        // slow.bin takes about 3 s at 50 KB/s: quick.txt's request comes after
                        // the first token expired.
                        let run = try await RegistryBlobTests.pinfetch(
                            [
                                "-u", "\(DockerRegistry.user):\(DockerRegistry.password)", "--limit-rate", "50K", "-v",
                                "-P", "\(work)/out", "oci://\(registry.host)/tools/cli:v1",
                            ],
                            in: work
                        )
                        #expect(RegistryBlobTests.status(run) == 0, "\(run.transcript)")
                        let both =
                            contents("\(work)/out/slow.bin") == slow && contents("\(work)/out/quick.txt") == quick
                        #expect(both)
                        // (Tokens are never printed in an expectation: they are long.)
                        let order = issued.withLock { $0 } == [expiring, long]
                        #expect(order, "\(issued.withLock { $0 }.count) tokens, \(realm.requests.map(\.target))")
                        #expect(run.standardError.contains("HTTP 401 to the registry's token: asking again"))
                        #expect(!run.standardError.contains(expiring) && !run.standardError.contains(long))
                    }
                }
            }
        }
    }

    @Test func `a registry whose /v2/ lets everyone in has its blob's 401 challenge answered with a token`()
        async throws
    {
        try await withTestHTTPServer(serving: TestResource(body: [])) { registry in
            let realm = registry.url("/token")
            let hex = Fixtures.sha256(RegistryBlobTests.body)
            registry.handler = { request, _ in
                if request.target == "/v2/" { return TestResponse(status: 200) }
                if request.target.hasPrefix("/token?") {
                    return TestResponse(status: 200, body: Array(#"{"token": "anon-1"}"#.utf8))
                }
                guard request.header("Authorization") == "Bearer anon-1" else {
                    let challenge = #"Bearer realm="\#(realm)",service="s",scope="repository:pub/x:pull""#
                    return TestResponse(status: 401, headers: [("WWW-Authenticate", challenge)])
                }
                guard request.target == "/v2/pub/x/blobs/sha256:\(hex)" else { return TestResponse(status: 404) }
                return TestResponse(status: 200, body: RegistryBlobTests.body)
            }
            try await withTemporaryDirectory { work in
                let run = try await RegistryBlobTests.pinfetch(
                    ["-o", "\(work)/blob", "oci://127.0.0.1:\(registry.port)/pub/x@sha256:\(hex)"],
                    in: work
                )
                #expect(RegistryBlobTests.status(run) == 0, "\(run.transcript)")
                let same = contents("\(work)/blob") == RegistryBlobTests.body
                #expect(same)
                #expect(registry.requests.filter { $0.target.hasPrefix("/token?") }.count == 1)
                // A registry that refuses the fresh token too is exit 6: asked once, not in a loop.
                registry.handler = { request, _ in
                    if request.target == "/v2/" { return TestResponse(status: 200) }
                    if request.target.hasPrefix("/token?") {
                        return TestResponse(status: 200, body: Array(#"{"token": "refused"}"#.utf8))
                    }
                    let challenge = #"Bearer realm="\#(realm)",service="s""#
                    return TestResponse(status: 401, headers: [("WWW-Authenticate", challenge)])
                }
                let before = registry.requests.count
                let refused = try await RegistryBlobTests.pinfetch(
                    ["-o", "\(work)/refused", "oci://127.0.0.1:\(registry.port)/pub/x@sha256:\(hex)"],
                    in: work
                )
                #expect(RegistryBlobTests.status(refused) == 6, "\(refused.transcript)")
                #expect(!FileManager.default.fileExists(atPath: "\(work)/refused"))
                let later = registry.requests.dropFirst(before)
                #expect(later.filter { $0.target.hasPrefix("/token?") }.count == 1, "\(later.map(\.target))")
            }
        }
    }

    @Test func `a credential helper is asked again when the server refuses its cached fields`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: RegistryBlobTests.body)) { server in
            server.handler = { request, _ in
                guard request.header("X-Token") == "fresh-2" else { return TestResponse(status: 401) }
                return nil
            }
            try await withTemporaryDirectory { work in
                // Each run of the helper gives the next token: stale-1, then fresh-2.
                let helper = "\(work)/helper"
                try """
                #!/bin/sh
                cat > /dev/null
                n=$(cat \(work)/count 2>/dev/null || echo 0); n=$((n+1)); echo $n > \(work)/count
                if [ $n -eq 1 ]; then t=stale-1; else t=fresh-2; fi
                printf '{"headers":{"X-Token":["%s"]}}' "$t"
                """.write(toFile: helper, atomically: true, encoding: .utf8)
                chmod(helper, 0o755)
                let run = try await RegistryBlobTests.pinfetch(
                    ["--credential-helper", helper, "-o", "\(work)/file", server.url("/file")],
                    in: work
                )
                #expect(RegistryBlobTests.status(run) == 0, "\(run.transcript)")
                let same = contents("\(work)/file") == RegistryBlobTests.body
                #expect(same)
                let runs = try String(contentsOfFile: "\(work)/count", encoding: .utf8)
                #expect(runs == "2\n", "\(runs)")
                let sent = server.requests.map { $0.header("X-Token") ?? "-" }
                #expect(sent.first == "stale-1" && sent.last == "fresh-2" && sent.filter { $0 == "stale-1" }.count == 1)
            }
        }
    }
}
