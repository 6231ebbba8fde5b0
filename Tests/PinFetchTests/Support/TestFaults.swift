import Foundation

/// Ways to misbehave; all default to "behave correctly".
///
/// The body-truncating faults (`closeAfterBodyBytes`, `resetAfterBodyBytes`, `stallAfterBodyBytes`) count
/// message-body bytes (after content coding, excluding chunk framing). When several are set the smallest count
/// wins (ties: reset, then stall, then close). A count that is not smaller than the body has no effect.
struct TestFaults: Sendable {
    /// Send only K body bytes of a GET response, then close (FIN). Headers still announce the full length.
    var closeAfterBodyBytes: Int? = nil
    /// Like `closeAfterBodyBytes`, but abort with a TCP RST (`SO_LINGER {1, 0}` then close).
    var resetAfterBodyBytes: Int? = nil
    /// Answer a ranged GET with 200 and the whole body.
    var ignoreRange: Bool = false
    /// Honour Range even when If-Range does not match.
    var ignoreIfRange: Bool = false
    /// Answer a GET whatever its If-None-Match or If-Modified-Since say (as servers without
    /// conditional support do).
    var ignoreConditions: Bool = false
    /// Answer every conditional GET with 304 and this ETag (a confused cache).
    var notModifiedETag: String? = nil
    /// On 206: start the served range this many bytes earlier than asked (negative = later), with a
    /// Content-Range that truthfully says so. The start is clamped to the representation.
    var contentRangeShift: Int = 0
    /// Send 206 without a Content-Range header.
    var omitContentRange: Bool = false
    /// Answer a ranged GET with a 206 `multipart/byteranges` body holding one part.
    var multipartRanges: Bool = false
    /// Answer HEAD with this status (e.g. 405, 403, 501) and no validators.
    var headStatus: Int? = nil
    /// Answer nothing to HEAD: the connection stays open and silent (GETs are answered).
    var silentHead: Bool = false
    /// Send the body gzip-encoded (`Content-Encoding: gzip`) when the request's Accept-Encoding allows it.
    /// Ranges then apply to the gzip bytes. HEAD mirrors the GET headers.
    var gzip: Bool = false
    /// Send gzip even if Accept-Encoding does not allow it (implies `gzip`).
    var gzipEvenIfNotAllowed: Bool = false
    /// Body to send with 416; default a short HTML page.
    var rangeNotSatisfiableBody: [UInt8]? = nil
    /// Answer every GET (not HEAD) with this status and a small HTML body.
    var status: Int? = nil
    /// `Retry-After` header value to add to `status` answers.
    var retryAfter: String? = nil
    /// Send the GET body chunked (`Transfer-Encoding: chunked`) instead of with Content-Length.
    var omitContentLength: Bool = false
    /// Chunked body (implies `omitContentLength`) that ends before the final 0-size chunk.
    var chunkedWithoutTerminator: Bool = false
    /// Throttle the body: small writes with sleeps in between.
    var bytesPerSecond: Int? = nil
    /// Throttle only answers to requests without `Range` (a slow first stream, fast pieces).
    var unrangedBytesPerSecond: Int? = nil
    /// With `unrangedBytesPerSecond`: throttle ranged answers that start before this byte too (a
    /// slow first piece however it is asked for).
    var throttledBefore: Int? = nil
    /// Send K body bytes, then keep the connection open and silent until shutdown or the client goes away.
    var stallAfterBodyBytes: Int? = nil
    /// A ranged answer that starts at exactly this byte sends 1000 body bytes, then stalls as
    /// `stallAfterBodyBytes` does (one lagging piece; a copy asked from another byte is fine).
    var stallRangeStartingAt: Int? = nil
}
