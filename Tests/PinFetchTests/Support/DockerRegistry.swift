import Foundation
@preconcurrency import Glibc

/// A real OCI registry for the tests: Debian's `docker-registry` (the CNCF distribution
/// registry), on a loopback port with a config of its own, its storage in a temporary
/// directory, and Basic authentication from an htpasswd file (bcrypt, made by `htpasswd -B`
/// of apache2-utils). Blobs are pushed with the registry's HTTP API by curl.
struct DockerRegistry {
    static let executable = "/usr/bin/docker-registry"
    static let user = "ci"
    static let password = "registry-secret"

    let prefix: String
    let port: Int
    let child: ChildProcess
    /// With token authentication, what signs the pushes' tokens (`nil`: htpasswd's Basic).
    var tokens: RegistryTokens? = nil

    /// curl's arguments that let a push of `repository` in.
    func pushCredentials(_ repository: String) async throws -> [String] {
        guard let tokens else { return ["-u", "\(Self.user):\(Self.password)"] }
        return ["-H", "Authorization: Bearer \(try await tokens.token(repository, actions: ["pull", "push"]))"]
    }

    /// `127.0.0.1:PORT`, as an `oci://` URL names it.
    var host: String { "127.0.0.1:\(self.port)" }

    /// `oci://127.0.0.1:PORT/REPOSITORY@sha256:HEX` of `body`.
    func blobURL(_ repository: String, _ body: [UInt8]) -> String {
        "oci://\(self.host)/\(repository)@sha256:\(Fixtures.sha256(body))"
    }

    /// Where the registry keeps the bytes of `body`'s blob (its filesystem driver's layout).
    func storedPath(of body: [UInt8]) -> String {
        let hex = Fixtures.sha256(body)
        return "\(self.prefix)/data/docker/registry/v2/blobs/sha256/\(hex.prefix(2))/\(hex)/data"
    }

    /// Pushes `body` as a blob of `repository` (a monolithic upload: POST, then PUT with the digest).
    func push(_ body: [UInt8], to repository: String) async throws {
        let file = self.prefix + "/upload-\(UUID().uuidString.prefix(8))"
        try Data(body).write(to: URL(fileURLWithPath: file))
        let started = try await ChildProcess.run(
            "/usr/bin/curl",
            [
                "-s", "-o", "/dev/null", "-D", "-", "-X", "POST", "http://\(self.host)/v2/\(repository)/blobs/uploads/",
            ] + (try await self.pushCredentials(repository)),
            logs: self.prefix + "/curl-\(UUID().uuidString.prefix(8))"
        )
        guard
            let line = started.standardOutput.split(whereSeparator: \.isNewline)
                .first(where: { $0.lowercased().hasPrefix("location:") })
        else { throw NginxError("registry: no upload location: \(started.standardOutput)") }
        var location = line.dropFirst("location:".count).trimmingCharacters(in: .whitespaces)
        if location.hasPrefix("/") { location = "http://\(self.host)" + location }
        let put = try await ChildProcess.run(
            "/usr/bin/curl",
            [
                "-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", "PUT", "-H",
                "Content-Type: application/octet-stream", "--data-binary", "@\(file)",
                location + (location.contains("?") ? "&" : "?") + "digest=sha256:\(Fixtures.sha256(body))",
            ] + (try await self.pushCredentials(repository)),
            logs: self.prefix + "/curl-\(UUID().uuidString.prefix(8))"
        )
        guard put.standardOutput == "201" else { throw NginxError("registry: push: HTTP \(put.standardOutput)") }
    }

    /// Pushes `manifest` as `repository`'s manifest `reference` (a tag or `sha256:HEX`) of media
    /// type `type`: the registry checks that the blobs it names are there.
    func pushManifest(
        _ manifest: [UInt8],
        to repository: String,
        reference: String,
        type: String = "application/vnd.oci.image.manifest.v1+json"
    ) async throws {
        let file = self.prefix + "/manifest-\(UUID().uuidString.prefix(8))"
        try Data(manifest).write(to: URL(fileURLWithPath: file))
        let put = try await ChildProcess.run(
            "/usr/bin/curl",
            [
                "-s", "-o", self.prefix + "/manifest-answer", "-w", "%{http_code}", "-X", "PUT", "-H",
                "Content-Type: \(type)", "--data-binary", "@\(file)",
                "http://\(self.host)/v2/\(repository)/manifests/\(reference)",
            ] + (try await self.pushCredentials(repository)),
            logs: self.prefix + "/curl-\(UUID().uuidString.prefix(8))"
        )
        guard put.standardOutput == "201" else {
            let answer = (try? String(contentsOfFile: self.prefix + "/manifest-answer", encoding: .utf8)) ?? ""
            throw NginxError("registry: manifest push: HTTP \(put.standardOutput): \(answer)")
        }
    }

    /// Starts the registry in `prefix`: with htpasswd's Basic authentication, or with `token`,
    /// docker's token authentication whose realm is `token.realm` and whose tokens
    /// `token.tokens` signs.
    static func start(
        in prefix: String,
        token: (realm: String, tokens: RegistryTokens)? = nil
    ) async throws -> DockerRegistry {
        guard FileManager.default.isExecutableFile(atPath: Self.executable) else {
            throw NginxError(
                "\(Self.executable) is missing: apt-get install docker-registry apache2-utils (.ci/run does)"
            )
        }
        let htpasswd = try await ChildProcess.run(
            "/usr/bin/htpasswd",
            ["-Bbn", Self.user, Self.password],
            logs: prefix + "/htpasswd-run"
        )
        try htpasswd.standardOutput.write(toFile: prefix + "/htpasswd", atomically: true, encoding: .utf8)
        let (child, port) = try await ChildProcess.listening("docker-registry") { port, attempt in
            let config = """
                version: 0.1
                log:
                  level: warn
                storage:
                  filesystem:
                    rootdirectory: \(prefix)/data
                http:
                  addr: 127.0.0.1:\(port)
                auth:

                """
                + (token.map {
                    """
                      token:
                        realm: \($0.realm)
                        service: \(RegistryTokens.service)
                        issuer: \(RegistryTokens.issuer)
                        rootcertbundle: \($0.tokens.bundle)
                    """
                }
                    ?? """
                      htpasswd:
                        realm: pinfetch-tests
                        path: \(prefix)/htpasswd
                    """)
            try config.write(toFile: prefix + "/config-\(attempt).yml", atomically: true, encoding: .utf8)
            return try ChildProcess(
                Self.executable,
                ["serve", prefix + "/config-\(attempt).yml"],
                logs: prefix + "/registry-\(attempt)"
            )
        }
        return DockerRegistry(prefix: prefix, port: port, child: child, tokens: token?.tokens)
    }
}

/// Runs `body` with a registry started in a temporary directory, stopped afterwards; with
/// `token`, it takes the tokens of that realm (``DockerRegistry/start(in:token:)``).
func withDockerRegistry<T>(
    token: (realm: String, tokens: RegistryTokens)? = nil,
    _ body: (DockerRegistry) async throws -> T
) async throws -> T {
    try await withTemporaryDirectory { directory in
        let prefix = directory + "/registry"
        try FileManager.default.createDirectory(atPath: prefix, withIntermediateDirectories: true)
        let registry = try await DockerRegistry.start(in: prefix, token: token)
        let result: Result<T, any Error>
        do { result = .success(try await body(registry)) } catch { result = .failure(error) }
        await registry.child.end()
        return try result.get()
    }
}
