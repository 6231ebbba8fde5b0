import Foundation
@preconcurrency import Glibc
import Synchronization

/// A TCP relay on loopback that holds every chunk for `delay` before passing it on, each way:
/// a round trip of `2 × delay` for the clients of case 8, as the kernel here has no
/// `netem`. Bandwidth is not limited, only latency added; byte order is kept. One thread
/// accepts; each connection gets a reader and a writer thread per direction.
final class DelayRelay: @unchecked Sendable {
    /// The port clients connect to (127.0.0.1).
    let port: UInt16
    private let listener: Int32
    private let target: UInt16
    private let delay: Duration
    private let stopped = Atomic<Bool>(false)
    /// Connections accepted so far (one per TCP connection a client opened).
    let accepted = Atomic<Int>(0)

    /// Listens on a free loopback port and relays each connection to `127.0.0.1:target`.
    /// - Throws: ``BenchError`` when the socket cannot be made.
    init(to target: UInt16, delay: Duration) throws(BenchError) {
        self.target = target
        self.delay = delay
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw BenchError("relay: socket: \(String(cString: strerror(errno)))") }
        var address = Self.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(fd, 512) == 0 else {
            close(fd)
            throw BenchError("relay: bind/listen: \(String(cString: strerror(errno)))")
        }
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        self.listener = fd
        self.port = UInt16(bigEndian: actual.sin_port)
        Thread.detachNewThread { [self] in self.acceptLoop() }
    }

    /// Stops accepting; open connections end when their peers close them.
    func stop() {
        self.stopped.store(true, ordering: .relaxed)
        shutdown(self.listener, Int32(SHUT_RDWR))
        close(self.listener)
    }

    private func acceptLoop() {
        while !self.stopped.load(ordering: .relaxed) {
            let client = accept(self.listener, nil, nil)
            guard client >= 0 else {
                if errno == EINTR { continue }
                return
            }
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)  // no child of the bench inherits it
            let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            var address = Self.loopback(port: self.target)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard server >= 0, connected == 0 else {
                close(client)
                if server >= 0 { close(server) }
                continue
            }
            var one: Int32 = 1
            for fd in [client, server] {
                setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            }
            self.accepted.wrappingAdd(1, ordering: .relaxed)
            let ends = Ends()
            self.pipe(from: client, to: server, ends: ends)
            self.pipe(from: server, to: client, ends: ends)
        }
    }

    /// Closes both sockets of a connection once both directions are done.
    private final class Ends: @unchecked Sendable {
        private let done = Atomic<Int>(0)
        func finished(_ sockets: (Int32, Int32)) {
            if self.done.wrappingAdd(1, ordering: .acquiringAndReleasing).newValue == 2 {
                close(sockets.0)
                close(sockets.1)
            }
        }
    }

    /// Reads `source` into a queue stamped with arrival times; another thread writes each chunk
    /// to `sink` once `delay` has passed since it arrived, then half-closes `sink` at the end.
    private func pipe(from source: Int32, to sink: Int32, ends: Ends) {
        let queue = ChunkQueue()
        let delay = self.delay
        Thread.detachNewThread {
            var buffer = [UInt8](repeating: 0, count: 256 * 1024)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { break }
                queue.put(Array(buffer[..<count]), due: ContinuousClock.now + delay)
            }
            queue.put(nil, due: ContinuousClock.now + delay)
        }
        Thread.detachNewThread {
            while let (chunk, due) = queue.take() {
                let wait = due - ContinuousClock.now
                if wait > .zero {
                    let (seconds, attoseconds) = wait.components
                    Thread.sleep(forTimeInterval: Double(seconds) + Double(attoseconds) / 1e18)
                }
                guard let chunk else { break }
                var written = 0
                while written < chunk.count {
                    let result = chunk[written...].withUnsafeBytes { write(sink, $0.baseAddress, $0.count) }
                    if result < 0, errno == EINTR { continue }
                    guard result > 0 else { break }
                    written += result
                }
                if written < chunk.count { break }
            }
            shutdown(sink, Int32(SHUT_WR))
            ends.finished((source, sink))
        }
    }

    private static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }
}

/// Chunks in arrival order with the time each may leave; `nil` marks the end of the stream.
private final class ChunkQueue: @unchecked Sendable {
    private let condition = NSCondition()
    private var chunks: [([UInt8]?, ContinuousClock.Instant)] = []

    func put(_ chunk: [UInt8]?, due: ContinuousClock.Instant) {
        self.condition.lock()
        self.chunks.append((chunk, due))
        self.condition.signal()
        self.condition.unlock()
    }

    /// The oldest chunk, waiting for one; `nil` never (the end marker is a value).
    func take() -> ([UInt8]?, ContinuousClock.Instant)? {
        self.condition.lock()
        defer { self.condition.unlock() }
        while self.chunks.isEmpty { self.condition.wait() }
        return self.chunks.removeFirst()
    }
}
