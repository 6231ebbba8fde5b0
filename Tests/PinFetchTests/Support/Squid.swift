import Foundation
@preconcurrency import Glibc

/// A real forward proxy for the tests (Debian's `squid`), started with a config of its
/// own on a loopback port, caching nothing; no system service. Run as root, squid works as the
/// user `proxy`, so its directory is handed to that user.
struct Squid {
    static let executable = "/usr/sbin/squid"
    static let basicAuthHelper = "/usr/lib/squid/basic_ncsa_auth"

    let prefix: String
    let port: Int
    let child: ChildProcess

    /// `http://127.0.0.1:PORT`, with `credentials` (`user:password`) when given.
    func url(credentials: String? = nil) -> String {
        "http://\(credentials.map { $0 + "@" } ?? "")127.0.0.1:\(self.port)"
    }

    /// The requests squid logged (`access.log`, one line each: method and URL among them).
    var accessLog: String { (try? String(contentsOfFile: self.prefix + "/access.log", encoding: .utf8)) ?? "" }

    var log: String {
        "squid stderr:\n\(self.child.standardError)\ncache.log:\n"
            + ((try? String(contentsOfFile: self.prefix + "/cache.log", encoding: .utf8)) ?? "")
            + "\naccess.log:\n\(self.accessLog)"
    }

    /// Starts squid in `prefix` (an empty directory). With `user` (`name:password`), every request
    /// must carry those proxy credentials (Basic, `basic_ncsa_auth`), else 407.
    static func start(in prefix: String, user: String? = nil) async throws -> Squid {
        guard FileManager.default.isExecutableFile(atPath: Self.executable) else {
            throw NginxError("\(Self.executable) is missing: apt-get install squid (.ci/run does)")
        }
        var access = "http_access allow localhost\n"
        if let user, let colon = user.firstIndex(of: ":") {
            let hash = try await ChildProcess.run(
                TestCertificateAuthority.openssl,
                ["passwd", "-apr1", String(user[user.index(after: colon)...])],
                logs: prefix + "/passwd-hash"
            )
            try "\(user[..<colon]):\(hash.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines))\n"
                .write(toFile: prefix + "/passwd", atomically: true, encoding: .utf8)
            access = """
                auth_param basic program \(Self.basicAuthHelper) \(prefix)/passwd
                auth_param basic realm pinfetch-test
                acl users proxy_auth REQUIRED
                http_access allow users
                """
        }
        var failures: [String] = []
        for attempt in 1...5 {
            let port = try Nginx.freePort()
            let configuration = """
                http_port 127.0.0.1:\(port)
                pid_filename \(prefix)/squid.pid
                access_log stdio:\(prefix)/access.log squid
                cache_log \(prefix)/cache.log
                cache_store_log none
                netdb_filename none
                coredump_dir \(prefix)
                cache deny all
                cache_mem 8 MB
                shutdown_lifetime 0 seconds
                acl CONNECT method CONNECT
                \(access)
                http_access deny all

                """
            try configuration.write(toFile: prefix + "/squid.conf", atomically: true, encoding: .utf8)
            if geteuid() == 0 { chown(prefix, 13, 13) }  // the user `proxy`
            let child = try ChildProcess(
                Self.executable,
                ["-N", "-f", prefix + "/squid.conf"],
                logs: prefix + "/squid-\(attempt)"
            )
            let squid = Squid(prefix: prefix, port: port, child: child)
            let deadline = ContinuousClock.now + .seconds(20)
            while child.isRunning, ContinuousClock.now < deadline {
                if Nginx.accepts(port: port) { return squid }
                try await Task.sleep(for: .milliseconds(20))
            }
            let log = squid.log
            await child.end()
            failures.append("try \(attempt), port \(port):\n\(log)")
            guard log.contains("Address already in use") else { break }
        }
        throw NginxError("squid did not start:\n" + failures.joined(separator: "\n"))
    }
}

/// Runs `body` with squid started in a temporary directory, stopped afterwards.
func withSquid<T>(user: String? = nil, _ body: (Squid) async throws -> T) async throws -> T {
    try await withTemporaryDirectory { directory in
        let prefix = directory + "/squid"
        try FileManager.default.createDirectory(atPath: prefix, withIntermediateDirectories: true)
        let squid = try await Squid.start(in: prefix, user: user)
        let result: Result<T, any Error>
        do { result = .success(try await body(squid)) } catch { result = .failure(error) }
        await squid.child.end()
        return try result.get()
    }
}
