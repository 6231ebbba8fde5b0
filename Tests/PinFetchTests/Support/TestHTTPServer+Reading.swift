import Foundation
@preconcurrency import Glibc

/// Reading and parsing request heads (RFC 9112 §2), apart from serving them.
extension TestHTTPServer {
    enum ReadResult {
        case request(RecordedRequest)
        case malformed(status: Int)
        case closed
    }

    /// Reads until the end of the request head (`\r\n\r\n`), which may arrive in several segments. Starts with
    /// `buffered` (bytes already read on this connection) and leaves there what follows the head. A request
    /// body is not read: on a kept-alive connection it would be taken for the next request.
    func readRequest(_ fd: Int32, buffered: inout [UInt8]) -> ReadResult {
        var head = buffered
        buffered = []
        head.reserveCapacity(4096)
        if let end = Self.endOfHead(head, from: 0) {
            buffered = Array(head[end...])
            guard let request = Self.parseHead(head[0..<end]) else {
                return .malformed(status: 400)
            }
            return .request(request)
        }
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let received = buffer.withUnsafeMutableBytes { raw in
                recv(fd, raw.baseAddress, raw.count, 0)
            }
            if received < 0 {
                if errno == EINTR {
                    continue
                }
                return .closed
            }
            if received == 0 {
                return .closed
            }
            let searchFrom = max(0, head.count - 3)
            head.append(contentsOf: buffer[0..<received])
            if let end = Self.endOfHead(head, from: searchFrom) {
                buffered = Array(head[end...])
                guard let request = Self.parseHead(head[0..<end]) else {
                    return .malformed(status: 400)
                }
                return .request(request)
            }
            if head.count > Self.maxHeadSize {
                return .malformed(status: 431)
            }
        }
    }

    /// Index just past the first `\r\n\r\n` at or after `start`.
    static func endOfHead(_ bytes: [UInt8], from start: Int) -> Int? {
        guard bytes.count >= 4 else {
            return nil
        }
        var index = start
        while index + 3 < bytes.count {
            if bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
                return index + 4
            }
            index += 1
        }
        return nil
    }

    static func parseHead(_ bytes: ArraySlice<UInt8>) -> RecordedRequest? {
        let text = String(decoding: bytes, as: UTF8.self)
        var lines = text.components(separatedBy: "\r\n")
        while let first = lines.first, first.isEmpty {
            lines.removeFirst()  // RFC 9112 §2.2: ignore empty lines before the request-line.
        }
        guard let requestLine = lines.first else {
            return nil
        }
        let parts = requestLine.split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count == 3, parts[2].hasPrefix("HTTP/") else {
            return nil
        }
        var headers: [(name: String, value: String)] = []
        for line in lines.dropFirst() where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else {
                return nil
            }
            let name = line[..<colon].trimmingCharacters(in: .whitespaces)
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            guard !name.isEmpty else {
                return nil
            }
            headers.append((name: name, value: value))
        }
        return RecordedRequest(method: String(parts[0]), target: String(parts[1]), headers: headers)
    }
}
