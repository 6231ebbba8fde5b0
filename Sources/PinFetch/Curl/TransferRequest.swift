import FoundationEssentials

/// What one request asks of libcurl.
struct TransferRequest {
    enum Method { case head, get, put, post }
    var url: String
    /// `scheme://host:port` of ``url``, when the caller knows it (saves parsing the URL again).
    var origin: String?
    var method: Method
    /// Complete header lines, `Name: value`.
    var headers: [String]
    /// Seconds; `nil` keeps libcurl's default.
    var connectTimeout: Double?
    /// Seconds without a new byte before the transfer is abandoned (checked in the progress
    /// callback, about once a second when idle; `CURLOPT_LOW_SPEED_TIME` averages over ~5 s).
    var stallTimeout: Double?
    /// Trust anchors, client certificate, proxy, netrc file, rate limit.
    var transport = TransportSettings()
    /// Whether this request may take credentials from the netrc file (it is on its mirror's origin).
    var netrc = false
    /// Bytes per second the body must average over ``stallTimeout`` seconds, or the transfer is
    /// abandoned (`CURLOPT_LOW_SPEED_LIMIT`/`_TIME`); `nil` for no floor.
    var minimumRate: Int?
    /// Seconds the whole request may take (`CURLOPT_TIMEOUT_MS`), or `nil` for no limit.
    var timeout: Double?
    /// Seconds after the request took its connection within which the response's head must
    /// have come, or the transfer is abandoned (a ``TransferOutcome/Category/network`` outcome);
    /// `nil` for no such bound. For an advisory request (`HEAD`) that must not hold the fetch.
    var answerTimeout: Double?
    /// Open a new connection instead of reusing one this handle keeps (`CURLOPT_FRESH_CONNECT`), e.g. to
    /// retry a protocol failure seen on a reused connection (``TransferOutcome/reusedConnection``). Other
    /// kept connections stay in the handle.
    var freshConnection: Bool = false
    /// Whether this is the first request of a file that has made none yet: while it waits for a
    /// connection (``TransferEngine``), `--fail-fast` may drop it (``TransferOutcome/Category/notStarted``).
    var opensFile: Bool = false
    /// Ask over HTTP/1.1, on a connection of its own (a segment of a file: streams of
    /// one HTTP/2 connection would share that connection's speed limit).
    var ownConnection: Bool = false
    /// The body of a `put`: a file read from its start (``UploadSource``).
    var upload: UploadSource?
    /// The body of a `post`: a form, `application/x-www-form-urlencoded` (the caller's
    /// `Content-Type`), copied by libcurl (`CURLOPT_COPYPOSTFIELDS`).
    var form: String?
    /// Sign with AWS Signature Version 4 (libcurl's `CURLOPT_AWS_SIGV4`): `provider` is
    /// libcurl's `aws:amz:REGION:SERVICE`, `user` is `KEY:SECRET`. The caller adds the
    /// `x-amz-content-sha256` field libcurl signs but does not add itself (7.88).
    var signing: (provider: String, user: String)?
}

/// The bytes a `PUT` sends (a remote cache upload): a verified file, read with
/// `pread` by libcurl's read callback on the engine's thread. Only a file just written and
/// synced is sent, so the reads come from the page cache.
final class UploadSource: @unchecked Sendable {
    let file: PartialFile
    /// Bytes to send.
    let size: Int64
    /// Bytes sent so far (the engine's thread only).
    var offset: Int64 = 0

    init(file: PartialFile, size: Int64) {
        self.file = file
        self.size = size
    }

    /// Fills `buffer` with the next bytes; 0 at the end, `nil` when the file cannot be read.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        let want = Int(min(Int64(buffer.count), self.size - self.offset))
        guard want > 0 else { return 0 }
        guard
            let got = try? self.file.read(
                into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<want]),
                at: self.offset
            ),
            got > 0
        else { return nil }
        self.offset += Int64(got)
        return got
    }
}
