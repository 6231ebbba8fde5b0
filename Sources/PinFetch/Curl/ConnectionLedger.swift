@preconcurrency import Glibc

/// What a ``TransferEngine`` knows of the connections libcurl keeps: the sockets open, which
/// connection each transfer took, and which connections carry HTTP/1.x. Used only on the
/// engine's thread, where libcurl's callbacks run.
///
/// Its purpose: a kept HTTP/1.x connection must have nothing left to read when the next request
/// takes it. Bytes a server sent past its answer (a body longer than announced, a second answer,
/// a body after a HEAD answer) would be read as that request's answer, and libcurl 7.88 reuses
/// such a connection. So when a transfer has taken a connection another transfer used, and before
/// its request goes out (`CURLOPT_PREREQFUNCTION`), a readable HTTP/1.x socket is shut down:
/// libcurl then finds it dead and retries on a new connection. At that moment the connection is
/// that transfer's alone; checking when the previous transfer ended raced with libcurl handing
/// the connection on within the same `curl_multi_perform`, and cut healthy answers short.
///
/// A connection is named by its addresses, `local-ip port peer-ip port`, as libcurl gives them
/// to the prerequest callback and as `getsockname`/`getpeername` give them for a socket.
final class ConnectionLedger {
    private var sockets: Set<Int32> = []
    private var nameOfSocket: [Int32: String] = [:]
    private var socketNamed: [String: Int32] = [:]
    /// Connections a transfer took before.
    private var used: Set<String> = []
    /// Connections whose latest answer was HTTP/1.x.
    private var http1: Set<String> = []

    /// The name of a connection from its addresses.
    static func name(local: String, localPort: Int, peer: String, peerPort: Int) -> String {
        "\(local) \(localPort) \(peer) \(peerPort)"
    }

    /// libcurl made socket `fd` for a connection.
    func opened(_ fd: Int32) { self.sockets.insert(fd) }

    /// Socket `fd` is being closed.
    func closed(_ fd: Int32) {
        self.sockets.remove(fd)
        guard let name = self.nameOfSocket.removeValue(forKey: fd) else { return }
        self.socketNamed[name] = nil
        self.used.remove(name)
        self.http1.remove(name)
    }

    /// A transfer took connection `name`, before its request goes out. A connection another
    /// transfer used, last for HTTP/1.x, that has bytes (or an end) waiting is shut down.
    func taken(_ name: String) {
        guard !self.used.insert(name).inserted, self.http1.contains(name), let fd = self.socket(named: name) else {
            return
        }
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&descriptor, 1, 0) > 0, descriptor.revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 else {
            return
        }
        _ = shutdown(fd, Int32(SHUT_RDWR))
    }

    /// An answer's status line came on connection `name`.
    func answered(on name: String, http1: Bool) {
        if http1 { self.http1.insert(name) } else { self.http1.remove(name) }
    }

    private func socket(named name: String) -> Int32? {
        if let fd = self.socketNamed[name] { return fd }
        for fd in self.sockets where self.nameOfSocket[fd] == nil {
            guard let found = Self.name(of: fd) else { continue }
            self.nameOfSocket[fd] = found
            self.socketNamed[found] = fd
        }
        return self.socketNamed[name]
    }

    /// The name of the connection of a connected socket, or `nil`.
    private static func name(of fd: Int32) -> String? {
        guard let (local, localPort) = self.address(fd, getsockname),
            let (peer, peerPort) = self.address(fd, getpeername)
        else { return nil }
        return Self.name(local: local, localPort: localPort, peer: peer, peerPort: peerPort)
    }

    private static func address(
        _ fd: Int32,
        _ get: (Int32, UnsafeMutablePointer<sockaddr>, UnsafeMutablePointer<socklen_t>) -> Int32
    ) -> (String, Int)? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let got = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { get(fd, $0, &length) }
        }
        guard got == 0 else { return nil }
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        switch Int32(storage.ss_family) {
        case AF_INET:
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { address in
                    var ip = address.pointee.sin_addr
                    guard inet_ntop(AF_INET, &ip, &text, socklen_t(text.count)) != nil else { return nil }
                    return (Self.string(text), Int(UInt16(bigEndian: address.pointee.sin_port)))
                }
            }
        case AF_INET6:
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { address in
                    var ip = address.pointee.sin6_addr
                    guard inet_ntop(AF_INET6, &ip, &text, socklen_t(text.count)) != nil else { return nil }
                    return (Self.string(text), Int(UInt16(bigEndian: address.pointee.sin6_port)))
                }
            }
        default:
            return nil
        }
    }

    /// The text before the first NUL of `buffer` (a C string `inet_ntop` filled in).
    private static func string(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
