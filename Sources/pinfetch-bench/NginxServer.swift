import Foundation
@preconcurrency import Glibc

/// nginx in the foreground as a child, serving `root` on a free loopback port with sendfile.
///
/// `location /` answers everything from `root`. A request with `X-Slow: 1` is sent at full
/// speed for its first `slowAfter` bytes and at 1 MiB/s after that (`limit_rate` takes a
/// variable since nginx 1.17.0): the resume case uses it to stop pinfetch at ~90 % while the
/// resuming request, without the header, goes to the same URL at full speed. `X-Slow: 24` is
/// 24 MiB/s from the first byte (case 6), `X-Slow: 20` 20 MiB/s for each connection (case 9).
final class NginxServer {
    static let executable = "/usr/sbin/nginx"

    let port: UInt16
    private let child: RunningChild
    private let directory: String

    /// `http://127.0.0.1:<port>`
    var baseURL: String { "http://127.0.0.1:\(self.port)" }

    /// The certificate and key of an HTTPS server (HTTP/2 offered by ALPN), PEM files.
    struct TLS {
        var certificate: String
        var key: String
    }

    /// `access.log` in the server's directory: one line per request, the number of the TCP
    /// connection it came on (`$connection`); only with ``TLS`` (case 8 counts connections).
    var accessLog: String { self.directory + "/access.log" }

    /// Writes the configuration into `directory`, starts nginx and waits until it accepts.
    /// With `tls`, it speaks HTTPS with HTTP/2 and logs each request's connection number.
    /// - Throws: ``BenchError`` when nginx exits or does not accept within 10 seconds.
    init(root: String, directory: String, slowAfter: Int, tls: TLS? = nil) throws(BenchError) {
        self.directory = directory
        let modules = (try? ChildProcess.output(of: Command(Self.executable, ["-V"])).text) ?? ""
        var lastError = ""
        for _ in 0..<3 {
            let port = try Self.freePort()
            let config = Self.configuration(
                root: root,
                directory: directory,
                port: port,
                slowAfter: slowAfter,
                modules: modules,
                tls: tls
            )
            let configPath = directory + "/nginx.conf"
            let errorLog = directory + "/error.log"
            do {
                try config.write(toFile: configPath, atomically: true, encoding: .utf8)
            } catch {
                throw BenchError("cannot write \(configPath): \(error)")
            }
            let child = try ChildProcess.spawn(
                Command(
                    Self.executable,
                    ["-p", directory + "/", "-c", configPath, "-e", errorLog],
                    standardOutput: directory + "/stdout.log",
                    standardError: directory + "/stderr.log"
                )
            )
            ChildRegistry.shared.setServer(child.pid)
            if Self.waitUntilAccepting(port: port, child: child) {
                self.port = port
                self.child = child
                return
            }
            child.send(SIGKILL)
            _ = child.wait()
            ChildRegistry.shared.setServer(nil)
            lastError = Self.tail(errorLog) + Self.tail(directory + "/stderr.log")
            guard lastError.contains("Address already in use") else { break }
        }
        throw BenchError("nginx did not start:\n\(lastError)")
    }

    /// Stops nginx with SIGQUIT (graceful), then SIGTERM and SIGKILL if it lingers.
    func stop() {
        for (signal, tenths) in [(SIGQUIT, 100), (SIGTERM, 50), (SIGKILL, 50)] {
            self.child.send(signal)
            for _ in 0..<tenths {
                if self.child.poll() != nil {
                    ChildRegistry.shared.setServer(nil)
                    return
                }
                usleep(100_000)
            }
        }
    }

    private static func configuration(
        root: String,
        directory: String,
        port: UInt16,
        slowAfter: Int,
        modules: String,
        tls: TLS?
    ) -> String {
        let listen =
            tls.map {
                """
                listen 127.0.0.1:\(port) ssl http2;
                        ssl_certificate \($0.certificate);
                        ssl_certificate_key \($0.key);
                        http2_max_concurrent_streams 128;
                """
            } ?? "listen 127.0.0.1:\(port);"
        let log =
            tls == nil
            ? "access_log off;"
            : "log_format connection '$connection';\n    access_log \(directory)/access.log connection;"
        var temporaryPaths = ["client_body_temp_path \(directory)/client_body;"]
        for module in ["proxy", "fastcgi", "uwsgi", "scgi"] where !modules.contains("--without-http_\(module)_module") {
            temporaryPaths.append("\(module)_temp_path \(directory)/\(module);")
        }
        return """
            daemon off;
            master_process on;
            worker_processes 1;
            \(getuid() == 0 ? "user root;" : "")
            pid \(directory)/nginx.pid;
            error_log \(directory)/error.log warn;

            events {
                worker_connections 1024;
            }

            http {
                \(log)
                default_type application/octet-stream;
                sendfile on;
                tcp_nopush on;
                keepalive_requests 10000;
                \(temporaryPaths.joined(separator: "\n    "))

                map $http_x_slow $bench_rate {
                    default 0;
                    1 1m;
                    20 20m;
                    24 24m;
                }
                map $http_x_slow $bench_rate_after {
                    default \(slowAfter);
                    20 0;
                    24 0;
                }

                server {
                    \(listen)
                    root \(root);

                    location / {
                        limit_rate_after $bench_rate_after;
                        limit_rate $bench_rate;
                    }
                }
            }

            """
    }

    /// A port the kernel just handed out for 127.0.0.1:0 (closed again for nginx to take).
    private static func freePort() throws(BenchError) -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw BenchError("socket: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var address = Self.loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                bind(fd, raw, length) == 0 && getsockname(fd, raw, &length) == 0
            }
        }
        guard bound else { throw BenchError("bind 127.0.0.1:0: \(String(cString: strerror(errno)))") }
        return UInt16(bigEndian: address.sin_port)
    }

    private static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr = in_addr(s_addr: UInt32(0x7F00_0001).bigEndian)
        return address
    }

    private static func waitUntilAccepting(port: UInt16, child: RunningChild) -> Bool {
        for _ in 0..<500 {
            if child.poll() != nil { return false }
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { return false }
            var address = Self.loopback(port: port)
            let connected = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
                }
            }
            close(fd)
            if connected { return true }
            usleep(20_000)
        }
        return false
    }

    /// The last lines of a log, for error messages.
    static func tail(_ path: String, lines: Int = 10) -> String {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8), !text.isEmpty else { return "" }
        return text.split(separator: "\n").suffix(lines).joined(separator: "\n") + "\n"
    }
}
