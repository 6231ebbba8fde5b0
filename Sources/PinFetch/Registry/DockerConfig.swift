import FoundationEssentials

/// The credentials `docker login` keeps for a registry: `$DOCKER_CONFIG/config.json` (else
/// `~/.docker/config.json`) with `auths` (`"auth"`: base64 of `user:password`), a helper per
/// registry in `credHelpers`, or one for all in `credsStore`; a helper
/// `docker-credential-NAME get` reads the registry on its standard input and prints
/// `{"Username": …, "Secret": …}` (docker-credential-helpers' protocol).
struct DockerConfig {
    private struct File: Decodable {
        struct Entry: Decodable { var auth: String? }
        var auths: [String: Entry]?
        var credHelpers: [String: String]?
        var credsStore: String?
    }

    private struct HelperAnswer: Decodable {
        var Username: String
        var Secret: String
    }

    /// The config file read.
    let path: String
    private let file: File?
    /// Set when the file is there but is no config docker would read.
    private let unreadable: Bool

    /// Docker Hub's key in `auths` and `credHelpers`, and what its helpers are asked with.
    static let dockerHubKey = "https://index.docker.io/v1/"
    /// Docker Hub's names: its API's host first (``OCILocation`` asks it for the others).
    static let dockerHubHosts = ["registry-1.docker.io", "docker.io", "index.docker.io"]

    /// Seconds a `docker-credential-NAME` helper may run.
    static let helperTimeout = 30.0

    /// Reads the config of `environment` (`DOCKER_CONFIG`, `HOME`); a file that is missing or
    /// is no JSON object holds nothing.
    init(environment: [String: String]) {
        func value(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        let directory = value("DOCKER_CONFIG") ?? Text.path(value("HOME") ?? "/", ".docker")
        self.path = Text.path(directory, "config.json")
        let bytes = FileSystem.readSmallFile(self.path, limit: 1 << 20)
        self.file = bytes.flatMap { try? JSONDecoder().decode(File.self, from: Data($0)) }
        self.unreadable = bytes != nil && self.file == nil
    }

    /// `user:password` for `registry` (`host[:port]`), or `nil` when the config has none. The
    /// `auths` key may be the host or a URL of it; Docker Hub's (any of ``dockerHubHosts``) is
    /// ``dockerHubKey``, as `docker login` writes it, and its helper is asked with that.
    /// - Throws: ``PinFetchError/Code/authentication`` when its helper fails or answers garbage,
    ///   the file is no JSON config, or the registry's `auth` is not base64 of `user:password`.
    func credentials(for registry: String, isCancelled: () -> Bool) throws(PinFetchError) -> String? {
        guard let file = self.file else {
            if self.unreadable { throw PinFetchError(.authentication, "\(self.path) is no JSON docker config") }
            return nil
        }
        // Docker Hub is kept under its old index's URL, whichever of its names is asked.
        let hub = Self.dockerHubHosts.contains(registry)
        let helperEntry = hub ? Self.dockerHubHosts.compactMap { file.credHelpers?[$0] }.first : nil
        if let helper = file.credHelpers?[registry] ?? (hub ? file.credHelpers?[Self.dockerHubKey] : nil)
            ?? helperEntry ?? file.credsStore
        {
            return try Self.ask(helper, registry: hub ? Self.dockerHubKey : registry, isCancelled: isCancelled)
        }
        let entry = file.auths?.first { key, _ in
            var host = Substring(key)
            if let scheme = host.firstRange(of: "://") { host = host[scheme.upperBound...] }
            let named = host.prefix { $0 != "/" }.lowercased()
            return named == registry || (hub && Self.dockerHubHosts.contains(named))
        }
        guard let encoded = entry?.value.auth else { return nil }
        guard let data = Data(base64Encoded: encoded), let text = String(data: data, encoding: .utf8),
            text.contains(":"), !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
        else {
            throw PinFetchError(
                .authentication,
                "the auth of \(registry) in \(self.path) is not base64 of user:password"
            )
        }
        return text
    }

    private static func ask(
        _ helper: String,
        registry: String,
        isCancelled: () -> Bool
    ) throws(PinFetchError) -> String? {
        let program = "docker-credential-\(helper)"
        let ended: ChildCommand.Ended
        do throws(PinFetchError) {
            ended = try ChildCommand.run(
                [program, "get"],
                input: Array(registry.utf8),
                timeout: Self.helperTimeout,
                isCancelled: isCancelled
            )
        } catch {
            throw PinFetchError(.authentication, "\(program) (docker's credential helper): \(error.message)")
        }
        // "credentials not found in native keychain": no entry, as docker takes it.
        if !ended.cancelled, !ended.timedOut, ended.status != 0,
            String(decoding: ended.output, as: UTF8.self).contains("credentials not found")
        {
            return nil
        }
        if let failure = ended.failure(of: program, timeLimit: "\(Text.number(Self.helperTimeout)) s") {
            throw failure
        }
        guard let answer = try? JSONDecoder().decode(HelperAnswer.self, from: Data(ended.output)),
            !answer.Username.isEmpty,
            !(answer.Username + answer.Secret).unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
        else {
            throw PinFetchError(.authentication, "\(program) printed no credentials (JSON with Username and Secret)")
        }
        return "\(answer.Username):\(answer.Secret)"
    }
}
