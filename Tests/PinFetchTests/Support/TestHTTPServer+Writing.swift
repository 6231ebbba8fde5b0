import Foundation
@preconcurrency import Glibc
import Synchronization

/// Writing a response to the socket: pacing, faults, chunked framing, and the HTTP helpers.
extension TestHTTPServer {
    /// Writes the head, then (unless HEAD) the body as planned; returns how the connection should end.
    func deliver(
        _ fd: Int32,
        status: Int,
        headers: [(name: String, value: String)],
        _ delivery: Delivery,
        isHead: Bool
    ) -> Ending {
        var head = "HTTP/1.1 \(status) \(Self.reasonPhrase(status))\r\n"
        for header in headers {
            head += "\(header.name): \(header.value)\r\n"
        }
        head += "\r\n"
        guard self.sendAll(fd, Array(head.utf8)) else {
            return .abort
        }
        if isHead {
            return .graceful
        }

        let range = delivery.range
        var end = range.upperBound
        var truncated = false
        if let stop = delivery.stopAfter, stop < range.count {
            end = range.lowerBound + stop
            truncated = true
        }
        let pieceSize =
            delivery.bytesPerSecond.map { max(1, min(Self.writeChunkSize, $0 / 20)) }
            ?? Self.writeChunkSize
        let clock = ContinuousClock()
        let started = clock.now
        var offset = range.lowerBound
        while offset < end {
            if self.isShutDown {
                return .abort
            }
            // A repeated resource is generated from its period: offset modulo the payload size.
            let start = offset % delivery.payload.count
            let count = min(pieceSize, end - offset, delivery.payload.count - start)
            if delivery.chunked {
                guard self.sendAll(fd, Array((String(count, radix: 16) + "\r\n").utf8)) else {
                    return .abort
                }
            }
            let (written, ok) = delivery.payload.withUnsafeBytes { raw in
                self.send(fd, raw.baseAddress! + start, count)
            }
            self.state.withLock { $0.bodyBytesSent += written }
            guard ok else {
                return .abort
            }
            if delivery.chunked {
                guard self.sendAll(fd, Array("\r\n".utf8)) else {
                    return .abort
                }
            }
            offset += count
            if let rate = delivery.bytesPerSecond, rate > 0, offset < end {
                let due = started + .seconds(Double(offset - range.lowerBound) / Double(rate))
                while clock.now < due {
                    if self.isShutDown {
                        return .abort
                    }
                    let remaining = (due - clock.now).components
                    let micros = remaining.seconds * 1_000_000 + remaining.attoseconds / 1_000_000_000_000
                    usleep(UInt32(max(1, min(micros, 50_000))))
                }
            }
        }
        if truncated {
            return delivery.stopEnding
        }
        if delivery.chunked && delivery.sendTerminator {
            guard self.sendAll(fd, Array("0\r\n\r\n".utf8)) else {
                return .abort
            }
        }
        return .graceful
    }

    func sendAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { raw in
            raw.isEmpty || self.send(fd, raw.baseAddress!, raw.count).ok
        }
    }

    /// Writes all `count` bytes, retrying partial writes and EINTR. `ok` is false if the peer went away.
    func send(_ fd: Int32, _ base: UnsafeRawPointer, _ count: Int) -> (written: Int, ok: Bool) {
        var written = 0
        while written < count {
            let result = Glibc.send(fd, base + written, count - written, Int32(MSG_NOSIGNAL))
            if result < 0 {
                if errno == EINTR {
                    continue
                }
                return (written, false)  // EPIPE, ECONNRESET, or shut down: stop quietly.
            }
            if result == 0 {
                return (written, false)
            }
            written += result
        }
        return (written, true)
    }

    /// Sends FIN, then reads and discards until the client closes (at most 2 s), so that unread client bytes
    /// do not turn our close into an RST that could destroy response data still in flight.
    func closeGracefully(_ fd: Int32) {
        _ = Glibc.shutdown(fd, Int32(SHUT_WR))
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(2)
        var scratch = [UInt8](repeating: 0, count: 4096)
        while clock.now < deadline && !self.isShutDown {
            guard self.waitReadable(fd, milliseconds: 50) else {
                continue
            }
            let received = scratch.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if received < 0 && errno == EINTR {
                continue
            }
            if received <= 0 {
                return
            }
        }
    }

    /// Keeps the connection open and silent until shutdown or until the client closes or resets it.
    func stall(_ fd: Int32) {
        var scratch = [UInt8](repeating: 0, count: 4096)
        while !self.isShutDown {
            guard self.waitReadable(fd, milliseconds: 50) else {
                continue
            }
            let received = scratch.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if received < 0 && errno == EINTR {
                continue
            }
            if received <= 0 {
                return
            }
        }
    }

    /// True if `fd` is readable (or has EOF or an error pending) within the timeout.
    func waitReadable(_ fd: Int32, milliseconds: Int32) -> Bool {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ready = poll(&descriptor, 1, milliseconds)
        return ready > 0
    }

    // MARK: HTTP semantics

    /// Parses `bytes=N-` or `bytes=N-M` (one range); nil for anything else. Huge numbers saturate.
    static func parseSingleByteRange(_ value: String) -> (first: Int, last: Int?)? {
        guard let equals = value.firstIndex(of: "=") else {
            return nil
        }
        let unit = value[..<equals].trimmingCharacters(in: .whitespaces)
        let spec = value[value.index(after: equals)...].trimmingCharacters(in: .whitespaces)
        guard unit.lowercased() == "bytes", let dash = spec.firstIndex(of: "-") else {
            return nil
        }
        guard let first = Self.parseDigits(spec[..<dash]) else {
            return nil
        }
        let lastText = spec[spec.index(after: dash)...]
        if lastText.isEmpty {
            return (first: first, last: nil)
        }
        guard let last = Self.parseDigits(lastText), last >= first else {
            return nil
        }
        return (first: first, last: last)
    }

    static func parseDigits(_ text: Substring) -> Int? {
        guard !text.isEmpty else {
            return nil
        }
        var value = 0
        for byte in text.utf8 {
            guard byte >= 48 && byte <= 57 else {
                return nil
            }
            let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(Int(byte - 48))
            value = (overflow1 || overflow2) ? Int.max : sum
        }
        return value
    }

    /// RFC 9110 §13.1.5: an entity-tag matches only by strong comparison against a strong current ETag;
    /// an HTTP-date matches only if it equals the Last-Modified value exactly.
    static func ifRangeMatches(_ value: String, _ resource: TestResource) -> Bool {
        let condition = value.trimmingCharacters(in: .whitespaces)
        if condition.hasPrefix("\"") || condition.hasPrefix("W/") {
            guard let etag = resource.etag, !etag.hasPrefix("W/"), !condition.hasPrefix("W/") else {
                return false
            }
            return condition.utf8.elementsEqual(etag.utf8)
        }
        guard let lastModified = resource.lastModified else {
            return false
        }
        return condition.utf8.elementsEqual(lastModified.utf8)
    }

    /// Whether the request carries `If-None-Match` or `If-Modified-Since`.
    static func isConditional(_ request: RecordedRequest) -> Bool {
        request.header("If-None-Match") != nil || request.header("If-Modified-Since") != nil
    }

    /// RFC 9110 §13.1.2: `If-None-Match` matches by weak comparison against the current ETag (or
    /// `*` any); only without it, §13.1.3: `If-Modified-Since` holds when `Last-Modified` is not
    /// later than its date (compared as text here: the tests send back what was served).
    static func isNotModified(_ request: RecordedRequest, _ resource: TestResource) -> Bool {
        if let condition = request.header("If-None-Match") {
            guard let etag = resource.etag else { return false }
            func opaque(_ tag: Substring) -> Substring { tag.hasPrefix("W/") ? tag.dropFirst(2) : tag }
            return condition.split(separator: ",").contains { item in
                let tag = item.trimmingCharacters(in: .whitespaces)
                return tag == "*" || opaque(Substring(tag)) == opaque(Substring(etag))
            }
        }
        guard let since = request.header("If-Modified-Since"), let lastModified = resource.lastModified else {
            return false
        }
        return since == lastModified
    }

    /// Whether Accept-Encoding allows gzip: an explicit gzip/x-gzip entry decides, else `*`; q=0 forbids.
    static func acceptsGzip(_ acceptEncoding: String?) -> Bool {
        guard let acceptEncoding else {
            return false
        }
        var gzipQuality: Double?
        var anyQuality: Double?
        for item in acceptEncoding.split(separator: ",") {
            let parts = item.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let coding = parts.first?.lowercased(), !coding.isEmpty else {
                continue
            }
            var quality = 1.0
            for parameter in parts.dropFirst() {
                let pair = parameter.split(separator: "=", maxSplits: 1)
                if pair.count == 2, pair[0].trimmingCharacters(in: .whitespaces).lowercased() == "q",
                    let parsed = Double(pair[1].trimmingCharacters(in: .whitespaces))
                {
                    quality = parsed
                }
            }
            if coding == "gzip" || coding == "x-gzip" {
                gzipQuality = quality
            } else if coding == "*" {
                anyQuality = quality
            }
        }
        if let gzipQuality {
            return gzipQuality > 0
        }
        return (anyQuality ?? 0) > 0
    }

    static func shouldGzip(_ request: RecordedRequest, _ faults: TestFaults) -> Bool {
        faults.gzipEvenIfNotAllowed || (faults.gzip && Self.acceptsGzip(request.header("Accept-Encoding")))
    }

    static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 201: "Created"
        case 204: "No Content"
        case 206: "Partial Content"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 303: "See Other"
        case 304: "Not Modified"
        case 307: "Temporary Redirect"
        case 308: "Permanent Redirect"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 410: "Gone"
        case 412: "Precondition Failed"
        case 416: "Range Not Satisfiable"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        default: "Status \(status)"
        }
    }
}
