import Foundation
@preconcurrency import Glibc

/// A real nginx (Debian's `nginx-light`) on a free loopback port, with everything it writes inside
/// a temporary prefix; the configuration is `Fixtures/nginx.conf.template`.
///
/// `/NAME` serves `root/NAME` at full speed with `sendfile`; `/slow/NAME` serves the same file at
/// 200 KiB/s unless the request carries ``unthrottled`` (or ``at24MiBPerSecond``). Started with ``TLS`` files, it also serves
/// `root/NAME` over HTTPS on ``tlsPort`` (`Fixtures/nginx-tls-server.conf.template`), where
/// `/to-http/NAME` redirects (302) to the plain `http` URL of `NAME`. Not `Sendable`: one test owns it.
final class Nginx {
    static let executable = "/usr/sbin/nginx"
    /// Arguments that make `pinfetch` ask `/slow/` for full speed (`X-Throttle: off`).
    static let unthrottled = ["-H", "X-Throttle: off"]
    /// Arguments that make `pinfetch` ask `/slow/` for 24 MiB/s (`X-Throttle: 24m`).
    static let at24MiBPerSecond = ["-H", "X-Throttle: 24m"]

    /// The temporary prefix: configuration, logs, temp paths and `files/`.
    let prefix: String
    /// The loopback port nginx listens on.
    let port: Int
    /// The loopback port of the HTTPS server, `nil` when nginx was started without ``TLS`` files.
    let tlsPort: Int?
    private let child: ChildProcess

    /// The server certificate and its private key for the HTTPS server: paths of PEM files.
    struct TLS: Sendable {
        var certificate: String
        var key: String
        /// With a CA certificate (PEM), the server asks for a client certificate it issued and
        /// refuses requests without one (mutual TLS).
        var clientAuthority: String? = nil
    }

    private init(prefix: String, port: Int, tlsPort: Int?, child: ChildProcess) {
        self.prefix = prefix
        self.port = port
        self.tlsPort = tlsPort
        self.child = child
    }

    /// The folder whose files nginx serves.
    var root: String { self.prefix + "/files" }

    /// The full-speed URL of `root/name`.
    func url(_ name: String) -> String { "http://127.0.0.1:\(self.port)/\(name)" }

    /// The throttled URL of `root/name` (200 KiB/s, unless the request carries ``unthrottled``).
    func slowURL(_ name: String) -> String { "http://127.0.0.1:\(self.port)/slow/\(name)" }

    /// The HTTPS URL of `path` (`name`, or `to-http/name` for a redirect to ``url(_:)``) on `host`
    /// (`127.0.0.1` or `localhost`, the names in the test certificate); needs ``TLS`` files at start.
    func httpsURL(_ path: String, host: String = "127.0.0.1") -> String {
        "https://\(host):\(self.tlsPort ?? 0)/\(path)"
    }

    /// Writes `bytes` to `root/name` for nginx to serve.
    func serve(_ bytes: [UInt8], as name: String) throws {
        try Data(bytes).write(to: URL(filePath: self.root + "/" + name))
    }

    /// nginx's standard error, error log and access log, for failure messages.
    var log: String {
        let errorLog = (try? String(contentsOfFile: self.prefix + "/error.log", encoding: .utf8)) ?? ""
        let accessLog = (try? String(contentsOfFile: self.prefix + "/access.log", encoding: .utf8)) ?? ""
        return """
            nginx stderr:
            \(self.child.standardError)
            nginx error.log:
            \(errorLog)
            nginx access.log (method|uri|status|range|if-range|accept-encoding|etag|body bytes|connection|end|seconds):
            \(accessLog)
            """
    }

    /// One request as nginx logged it once it was answered (`log_format e2e` of the template).
    struct Request: Hashable, Sendable {
        var method: String
        var path: String
        var status: Int
        /// The `Range` request header, `nil` when absent.
        var range: String?
        /// The `If-Range` request header, `nil` when absent.
        var ifRange: String?
        /// The `Accept-Encoding` request header, `nil` when absent.
        var acceptEncoding: String?
        /// The `ETag` of the answer, `nil` when absent.
        var etag: String?
        /// Body bytes sent.
        var bodyBytes: Int
        /// nginx's serial number of the connection the request came on.
        var connection: Int
        /// When the answer ended (seconds since 1970) and how long it took (seconds), to 1 ms.
        var ended: Double
        var seconds: Double

        /// When nginx read the request's first bytes (seconds since 1970).
        var started: Double { self.ended - self.seconds }
    }

    /// The most connections that carried an answer at the same moment. An answer counts until
    /// `slop` seconds before nginx logged it: a stream the client reset (an HTTP/2 answer cut
    /// short on purpose) is logged when nginx notices, a little after the client moved on.
    static func connectionsAtOnce(_ requests: [Request], slop: Double = 0.2) -> Int {
        requests.map(\.started).map { moment in
            Set(requests.filter { $0.started <= moment && moment < $0.ended - slop }.map(\.connection)).count
        }.max() ?? 0
    }

    /// The requests answered so far, oldest first.
    var requests: [Request] {
        let text = (try? String(contentsOfFile: self.prefix + "/access.log", encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 11, let status = Int(fields[2]), let bodyBytes = Int(fields[7]),
                let connection = Int(fields[8]), let ended = Double(fields[9]), let seconds = Double(fields[10])
            else { return nil }
            let optional = { (field: String) in field.isEmpty || field == "-" ? nil : field }
            return Request(
                method: fields[0],
                path: fields[1],
                status: status,
                range: optional(fields[3]),
                ifRange: optional(fields[4]),
                acceptEncoding: optional(fields[5]),
                etag: optional(fields[6]),
                bodyBytes: bodyBytes,
                connection: connection,
                ended: ended,
                seconds: seconds
            )
        }
    }

    /// Starts nginx in `prefix` (an empty directory) and returns once it accepts connections.
    ///
    /// The port comes from binding `127.0.0.1:0` and closing the socket; when another process takes
    /// it in between, nginx fails to bind and this tries again with another port (5 tries).
    ///
    /// - Parameter tls: With a certificate and key, an HTTPS server listens on ``tlsPort`` too.
    /// - Throws: ``NginxError`` with nginx's output when it is missing, exits, or never answers.
    static func start(in prefix: String, tls: TLS? = nil) async throws -> Nginx {
        guard FileManager.default.isExecutableFile(atPath: Self.executable) else {
            throw NginxError("\(Self.executable) is missing: apt-get install nginx-light (.ci/run does)")
        }
        let template = try String(
            contentsOf: Fixtures.directory.appending(path: "nginx.conf.template"),
            encoding: .utf8
        )
        let tlsTemplate = try tls.map { _ in
            try String(
                contentsOf: Fixtures.directory.appending(path: "nginx-tls-server.conf.template"),
                encoding: .utf8
            )
        }
        for folder in ["files", "temp"] {
            try FileManager.default.createDirectory(atPath: prefix + "/" + folder, withIntermediateDirectories: true)
        }
        var failures: [String] = []
        for attempt in 1...5 {
            let port = try Self.freePort()
            var tlsPort: Int?
            var tlsServer = ""
            if let tls, let tlsTemplate {
                var other = try Self.freePort()
                while other == port { other = try Self.freePort() }
                tlsPort = other
                tlsServer =
                    tlsTemplate
                    .replacingOccurrences(of: "@TLS_PORT@", with: "\(other)")
                    .replacingOccurrences(of: "@CERTIFICATE@", with: tls.certificate)
                    .replacingOccurrences(of: "@KEY@", with: tls.key)
                    .replacingOccurrences(
                        of: "@CLIENT_VERIFY@",
                        with: tls.clientAuthority.map { "ssl_client_certificate \($0);\n        ssl_verify_client on;" }
                            ?? ""
                    )
            }
            let configuration =
                template
                .replacingOccurrences(of: "@TLS_SERVER@", with: tlsServer)
                .replacingOccurrences(of: "@PREFIX@", with: prefix)
                .replacingOccurrences(of: "@PORT@", with: "\(port)")
                .replacingOccurrences(of: "@USER@", with: geteuid() == 0 ? "user root;" : "")
            let configurationPath = prefix + "/nginx.conf"
            try configuration.write(toFile: configurationPath, atomically: true, encoding: .utf8)
            try? FileManager.default.removeItem(atPath: prefix + "/error.log")
            let child = try ChildProcess(
                Self.executable,
                ["-p", prefix + "/", "-c", configurationPath],
                logs: prefix + "/nginx-\(attempt)"
            )
            let nginx = Nginx(prefix: prefix, port: port, tlsPort: tlsPort, child: child)
            // Wide: beside CI's 5 GiB test a loaded machine can take many seconds to start it.
            let deadline = ContinuousClock.now + .seconds(30)
            while child.isRunning, ContinuousClock.now < deadline {
                if Self.accepts(port: port), tlsPort.map({ Self.accepts(port: $0) }) ?? true {
                    guard child.isRunning else { break }  // someone else's listener
                    return nginx
                }
                try await Task.sleep(for: .milliseconds(10))
            }
            let log = nginx.log
            await child.end()
            failures.append("try \(attempt), port \(port), \(child.termination.map(\.description) ?? "?"):\n\(log)")
            guard log.contains("Address already in use") else { break }
        }
        throw NginxError("nginx did not start:\n" + failures.joined(separator: "\n"))
    }

    /// Stops nginx (`SIGTERM`, a fast shutdown; `SIGKILL` after 5 s) and waits for its end.
    func stop() {
        self.child.stop()
    }

    /// Stops nginx as ``stop()`` does, without blocking a thread of the test pool.
    func end() async {
        await self.child.end()
    }

    /// A loopback port that was free a moment ago: bind `127.0.0.1:0`, read the port, close.
    static func freePort() throws -> Int {
        let (fd, port) = try Self.boundLoopbackSocket()
        close(fd)
        return port
    }

    /// Runs `body` with a loopback port that refuses connections for as long as it runs: a
    /// socket bound there that never listens, so no server of a test running beside it can take
    /// the port (a port found free and then closed can be taken by one; CI saw it).
    static func withRefusingPort<T>(_ body: (Int) async throws -> T) async throws -> T {
        let (fd, port) = try Self.boundLoopbackSocket()
        defer { close(fd) }
        return try await body(port)
    }

    /// A TCP socket bound to `127.0.0.1:0` (not listening), and the port it got; the caller closes it.
    private static func boundLoopbackSocket() throws -> (fd: Int32, port: Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw NginxError("socket: \(String(cString: strerror(errno)))") }
        var address = Self.loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                bind(fd, address, length) == 0 && getsockname(fd, address, &length) == 0
            }
        }
        guard bound else {
            let message = "bind 127.0.0.1:0: \(String(cString: strerror(errno)))"
            close(fd)
            throw NginxError(message)
        }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }

    /// Whether a TCP connection to `127.0.0.1:port` succeeds (it is closed at once).
    static func accepts(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        let address = Self.loopback(port: port)
        return withUnsafePointer(to: address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                connect(fd, address, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian  // 127.0.0.1
        return address
    }
}

/// nginx could not be started.
struct NginxError: Error, CustomStringConvertible {
    var description: String

    init(_ description: String) { self.description = description }
}

/// Runs `body` with a fresh nginx in a temporary prefix (serving HTTPS too when given `tls`);
/// stops nginx and removes the prefix afterwards, even when `body` throws.
func withNginx<T>(tls: Nginx.TLS? = nil, _ body: (Nginx) async throws -> T) async throws -> T {
    try await withTemporaryDirectory { prefix in
        let nginx = try await Nginx.start(in: prefix, tls: tls)
        let result: Result<T, any Error>
        do { result = .success(try await body(nginx)) } catch { result = .failure(error) }
        await nginx.end()
        return try result.get()
    }
}
