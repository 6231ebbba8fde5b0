import Foundation
@preconcurrency import Glibc
import PinFetch
import Testing

/// Result of one curl run.
struct CurlResult {
    var exitCode: Int32
    var status: Int
    var headers: [(name: String, value: String)]
    var body: [UInt8]

    func header(_ name: String) -> String? {
        self.headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }
}

/// Runs `/usr/bin/curl -s -D <file> -o <file> <args> <url>` and collects exit code, last header block and body.
func runCurl(_ arguments: [String], url: String, maxTime: Int = 20) async throws -> CurlResult {
    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("testserverkit-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let headerPath = directory.appendingPathComponent("headers").path
    let bodyPath = directory.appendingPathComponent("body").path

    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
    process.arguments = ["-s", "--max-time", String(maxTime), "-D", headerPath, "-o", bodyPath] + arguments + [url]
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
        process.terminationHandler = { _ in continuation.resume() }
        do {
            try process.run()
        } catch {
            process.terminationHandler = nil
            continuation.resume(throwing: error)
        }
    }

    let headerText = (try? String(contentsOfFile: headerPath, encoding: .isoLatin1)) ?? ""
    let blocks = headerText.components(separatedBy: "\r\n\r\n").filter { !$0.isEmpty }
    var status = 0
    var headers: [(name: String, value: String)] = []
    if let last = blocks.last {
        let lines = last.components(separatedBy: "\r\n")
        if let statusLine = lines.first {
            let parts = statusLine.split(separator: " ")
            if parts.count >= 2 {
                status = Int(parts[1]) ?? 0
            }
        }
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else {
                continue
            }
            headers.append(
                (
                    name: String(line[..<colon]),
                    value: line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                )
            )
        }
    }
    let body = (try? Data(contentsOf: URL(fileURLWithPath: bodyPath))).map { [UInt8]($0) } ?? []
    return CurlResult(exitCode: process.terminationStatus, status: status, headers: headers, body: body)
}

/// Deterministic pseudo-random bytes.
func makeBody(_ count: Int, seed: UInt64 = 0x9E37_79B9_7F4A_7C15) -> [UInt8] {
    var state = seed
    var bytes = [UInt8](repeating: 0, count: count)
    for index in 0..<count {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        bytes[index] = UInt8(truncatingIfNeeded: state >> 56)
    }
    return bytes
}

/// Sends `pieces` over a raw TCP connection with pauses in between, then reads until EOF.
/// ``rawExchangeBlocking(port:pieces:pauseMicroseconds:)`` on a thread of its own: its reads
/// block, and no thread of the test pool may wait on a socket.
func rawExchange(port: Int, pieces: [String], pauseMicroseconds: UInt32 = 50_000) async throws -> String {
    try await withCheckedThrowingContinuation { continuation in
        Threads.detach(name: "raw-exchange") {
            continuation.resume(
                with: Result {
                    try rawExchangeBlocking(port: port, pieces: pieces, pauseMicroseconds: pauseMicroseconds)
                }
            )
        }
    }
}

func rawExchangeBlocking(port: Int, pieces: [String], pauseMicroseconds: UInt32 = 50_000) throws -> String {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else {
        throw TestHTTPServerError(operation: "socket", code: errno)
    }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port)).bigEndian
    address.sin_addr = in_addr(s_addr: in_addr_t(0x7F00_0001).bigEndian)
    let connected = withUnsafePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
    guard connected == 0 else {
        throw TestHTTPServerError(operation: "connect", code: errno)
    }
    for piece in pieces {
        let bytes = Array(piece.utf8)
        let sent = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard sent == bytes.count else {
            throw TestHTTPServerError(operation: "send", code: errno)
        }
        usleep(pauseMicroseconds)
    }
    var response: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let received = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if received <= 0 {
            break
        }
        response += buffer[0..<received]
    }
    return String(decoding: response, as: UTF8.self)
}
