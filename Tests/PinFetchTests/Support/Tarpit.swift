@preconcurrency import Glibc

/// A loopback listener that never accepts: the kernel completes TCP handshakes into its backlog,
/// and nothing ever answers (a host whose TLS never starts).
struct Tarpit {
    let fd: Int32
    let port: Int

    /// A client connection that fills the backlog of a ``init(full:)`` tarpit.
    private var filler: Int32 = -1

    /// - Parameter full: Listen with a backlog of one and take that place: the kernel then
    ///   drops further SYNs, and connects time out (a host that drops connection attempts).
    init(full: Bool = false) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard fd >= 0, bound == 0, named == 0, listen(fd, full ? 0 : 64) == 0 else {
            throw ChildProcessError("tarpit: \(String(cString: strerror(errno)))")
        }
        self.fd = fd
        self.port = Int(UInt16(bigEndian: address.sin_port))
        if full {
            self.filler = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(self.filler, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard connected == 0 else { throw ChildProcessError("tarpit: \(String(cString: strerror(errno)))") }
        }
    }

    func close() {
        if self.filler >= 0 { _ = Glibc.close(self.filler) }
        _ = Glibc.close(self.fd)
    }
}
