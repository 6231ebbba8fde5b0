import Foundation
@preconcurrency import Glibc
import Synchronization

/// What the server sends: responses, their bytes on the wire, and the HTTP rules they follow.
extension TestHTTPServer {
    func respondToHead(
        _ fd: Int32,
        _ request: RecordedRequest,
        _ resource: TestResource,
        _ faults: TestFaults
    ) -> Ending {
        if faults.silentHead { return .stall }
        if let status = faults.headStatus {
            var extra: [(name: String, value: String)] = []
            if status == 405 {
                extra.append((name: "Allow", value: "GET"))
            }
            return self.sendSimple(fd, status: status, extraHeaders: extra, isHead: true)
        }
        let gzipped = Self.shouldGzip(request, faults)
        let length = gzipped ? TestGzip.encode(resource.body).count : resource.repeatedLength ?? resource.body.count
        var headers = Self.representationHeaders(resource, gzipped: gzipped)
        if !faults.omitContentLength && !faults.chunkedWithoutTerminator {
            headers.append((name: "Content-Length", value: String(length)))
        }
        headers.append((name: "Connection", value: "close"))
        return self.deliver(fd, status: 200, headers: headers, Delivery(), isHead: true)
    }

    func respondToGet(
        _ fd: Int32,
        _ request: RecordedRequest,
        _ resource: TestResource,
        _ faults: TestFaults
    ) -> Ending {
        if let status = faults.status {
            var extra: [(name: String, value: String)] = []
            if let retryAfter = faults.retryAfter {
                extra.append((name: "Retry-After", value: retryAfter))
            }
            if status == 401 {
                extra.append((name: "WWW-Authenticate", value: "Basic realm=\"test\""))
            }
            if status == 405 {
                extra.append((name: "Allow", value: "HEAD"))
            }
            return self.sendSimple(fd, status: status, extraHeaders: extra, isHead: false)
        }

        if !faults.ignoreConditions,
            Self.isConditional(request) && (faults.notModifiedETag != nil || Self.isNotModified(request, resource))
        {
            var headers = Self.representationHeaders(resource, gzipped: false)
            if let tag = faults.notModifiedETag {
                headers.removeAll { $0.name == "ETag" }
                headers.append((name: "ETag", value: tag))
            }
            headers.append((name: "Connection", value: "close"))
            return self.deliver(fd, status: 304, headers: headers, Delivery(), isHead: true)
        }
        let gzipped = Self.shouldGzip(request, faults)
        let representation = gzipped ? TestGzip.encode(resource.body) : resource.body
        let length = gzipped ? representation.count : resource.repeatedLength ?? representation.count
        var headers = Self.representationHeaders(resource, gzipped: gzipped)
        var status = 200
        var delivery = Delivery(payload: representation, range: 0..<length)

        if !faults.ignoreRange, let rangeValue = request.header("Range"),
            let wanted = Self.parseSingleByteRange(rangeValue)
        {
            let ifRange = request.header("If-Range")
            let validatorMatches = faults.ignoreIfRange || ifRange.map { Self.ifRangeMatches($0, resource) } ?? true
            if validatorMatches {
                if wanted.first >= length {
                    let body = faults.rangeNotSatisfiableBody ?? Array(Self.htmlPage(416).utf8)
                    let notSatisfiable: [(name: String, value: String)] = [
                        (name: "Content-Range", value: "bytes */\(length)"),
                        (name: "Content-Type", value: "text/html; charset=utf-8"),
                        (name: "Content-Length", value: String(body.count)),
                        (name: "Connection", value: "close"),
                    ]
                    let page = Delivery(payload: body, range: 0..<body.count)
                    return self.deliver(fd, status: 416, headers: notSatisfiable, page, isHead: false)
                }
                let end = min(wanted.last ?? (length - 1), length - 1)
                let start = min(max(wanted.first - faults.contentRangeShift, 0), end)
                let contentRange = "bytes \(start)-\(end)/\(length)"
                status = 206
                if faults.multipartRanges {
                    let boundary = Self.multipartBoundary
                    var multipart: [UInt8] = []
                    multipart.reserveCapacity(end - start + 1 + 256)
                    let partHead =
                        "--\(boundary)\r\nContent-Type: \(resource.contentType)\r\n"
                        + "Content-Range: \(contentRange)\r\n\r\n"
                    multipart.append(contentsOf: partHead.utf8)
                    multipart.append(contentsOf: representation[start...end])
                    multipart.append(contentsOf: "\r\n--\(boundary)--\r\n".utf8)
                    headers.removeAll { $0.name == "Content-Type" }
                    headers.insert((name: "Content-Type", value: "multipart/byteranges; boundary=\(boundary)"), at: 0)
                    delivery = Delivery(payload: multipart, range: 0..<multipart.count)
                } else {
                    delivery.range = start..<(end + 1)
                    if !faults.omitContentRange {
                        headers.append((name: "Content-Range", value: contentRange))
                    }
                }
            }
        }

        if faults.omitContentLength || faults.chunkedWithoutTerminator {
            headers.append((name: "Transfer-Encoding", value: "chunked"))
            delivery.chunked = true
            delivery.sendTerminator = !faults.chunkedWithoutTerminator
        } else {
            headers.append((name: "Content-Length", value: String(delivery.range.count)))
        }
        headers.append((name: "Connection", value: "close"))

        var stops: [(count: Int, ending: Ending)] = []
        if let count = faults.resetAfterBodyBytes {
            stops.append((count: count, ending: .reset))
        }
        if let count = faults.stallAfterBodyBytes {
            stops.append((count: count, ending: .stall))
        }
        if status == 206, let start = faults.stallRangeStartingAt, delivery.range.lowerBound == start {
            stops.append((count: 1000, ending: .stall))
        }
        if let count = faults.closeAfterBodyBytes {
            stops.append((count: count, ending: .graceful))
        }
        if let stop = stops.min(by: { $0.count < $1.count }) {
            delivery.stopAfter = max(0, stop.count)
            delivery.stopEnding = stop.ending
        }
        delivery.bytesPerSecond = faults.bytesPerSecond
        if let rate = faults.unrangedBytesPerSecond,
            request.header("Range") == nil || delivery.range.lowerBound < faults.throttledBefore ?? 0
        {
            delivery.bytesPerSecond = rate
        }
        return self.deliver(fd, status: status, headers: headers, delivery, isHead: false)
    }

    func sendCanned(_ fd: Int32, _ response: TestResponse, isHead: Bool) -> Ending {
        var headers = response.headers
        func has(_ name: String) -> Bool {
            headers.contains { $0.name.lowercased() == name.lowercased() }
        }
        let bodyless = (100..<200).contains(response.status) || response.status == 204 || response.status == 304
        if !bodyless && !has("Content-Length") && !has("Transfer-Encoding") {
            headers.append((name: "Content-Length", value: String(response.body.count)))
        }
        if !has("Connection") {
            headers.append((name: "Connection", value: "close"))
        }
        var delivery = Delivery(payload: response.body, range: 0..<response.body.count)
        delivery.stopAfter = response.closeAfterBodyBytes.map { max(0, $0) }
        let sendsBody = !isHead || response.bodyOnHead
        let ending = self.deliver(fd, status: response.status, headers: headers, delivery, isHead: !sendsBody)
        let truncated = sendsBody && (delivery.stopAfter.map { $0 < response.body.count } ?? false)
        return ending == .graceful && response.keepsAlive && !truncated ? .keepAlive : ending
    }

    /// A small HTML answer with Content-Length and `Connection: close`.
    func sendSimple(
        _ fd: Int32,
        status: Int,
        extraHeaders: [(name: String, value: String)],
        isHead: Bool
    ) -> Ending {
        let body = isHead ? [] : Array(Self.htmlPage(status).utf8)
        var headers: [(name: String, value: String)] = [
            (name: "Content-Type", value: "text/html; charset=utf-8"),
            (name: "Content-Length", value: String(body.count)),
        ]
        headers += extraHeaders
        headers.append((name: "Connection", value: "close"))
        let delivery = Delivery(payload: body, range: 0..<body.count)
        return self.deliver(fd, status: status, headers: headers, delivery, isHead: isHead)
    }

    static func representationHeaders(
        _ resource: TestResource,
        gzipped: Bool
    ) -> [(name: String, value: String)] {
        var headers: [(name: String, value: String)] = [
            (name: "Date", value: Self.httpDate(Date())),
            (name: "Content-Type", value: resource.contentType),
        ]
        if gzipped {
            headers.append((name: "Content-Encoding", value: "gzip"))
        }
        if let etag = resource.etag {
            headers.append((name: "ETag", value: etag))
        }
        if let lastModified = resource.lastModified {
            headers.append((name: "Last-Modified", value: lastModified))
        }
        headers.append((name: "Accept-Ranges", value: "bytes"))
        headers += resource.extraHeaders
        return headers
    }

    /// IMF-fixdate (RFC 9110 §5.6.7) of `date`, for the `Date` header.
    static func httpDate(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }

    static func htmlPage(_ status: Int) -> String {
        let title = "\(status) \(Self.reasonPhrase(status))"
        return "<!DOCTYPE html>\n<html><head><title>\(title)</title></head><body><h1>\(title)</h1></body></html>\n"
    }
}
