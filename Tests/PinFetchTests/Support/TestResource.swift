import Foundation

/// The representation the server currently serves.
struct TestResource: Sendable {
    /// The representation bytes (before any content coding).
    var body: [UInt8]
    /// Full `ETag` header value as sent, e.g. `"\"v1\""` or `"W/\"v1\""`; nil = no ETag header.
    var etag: String?
    /// `Last-Modified` header value as sent, e.g. `"Sat, 01 Jan 2000 00:00:00 GMT"`; nil = none.
    var lastModified: String?
    /// `Content-Type` header value.
    var contentType: String = "application/octet-stream"
    /// When set, the representation is `body` repeated cyclically up to this many bytes, generated
    /// as it is sent (for files larger than memory should hold, e.g. 5 GiB). No gzip then.
    var repeatedLength: Int? = nil
    /// More header fields sent with every HEAD, 200 and 206 answer (e.g. `Repr-Digest`).
    var extraHeaders: [(name: String, value: String)] = []

    /// Creates a resource; validators default to none.
    init(
        body: [UInt8],
        etag: String? = nil,
        lastModified: String? = nil,
        contentType: String = "application/octet-stream"
    ) {
        self.body = body
        self.etag = etag
        self.lastModified = lastModified
        self.contentType = contentType
    }
}
