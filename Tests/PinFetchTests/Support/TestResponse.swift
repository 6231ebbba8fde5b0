import Foundation

/// A canned response returned by `TestHTTPServer.handler`.
///
/// The server adds `Content-Length` (unless a Content-Length or Transfer-Encoding header is present, or the
/// status forbids a body) and `Connection: close` (unless a Connection header is present). The body is sent
/// verbatim (not for HEAD, unless `bodyOnHead`).
///
/// With a `Connection: keep-alive` header the server keeps the connection open after the whole response and
/// reads the next request from it (RFC 9112 §9.3), until the client closes it, the server shuts down or a
/// response without keep-alive ends it. A response cut short by `closeAfterBodyBytes` still closes.
struct TestResponse: Sendable {
    /// The status code.
    var status: Int
    /// Header fields to send, in order.
    var headers: [(name: String, value: String)]
    /// The message body, sent as is.
    var body: [UInt8]
    /// Send only this many body bytes, then close (FIN).
    var closeAfterBodyBytes: Int? = nil
    /// Send the body even in answer to HEAD, which RFC 9110 §9.3.2 forbids: a misbehaving server whose stray
    /// bytes wait on a kept-alive connection in front of the next response.
    var bodyOnHead: Bool = false

    /// Creates a canned response.
    init(
        status: Int,
        headers: [(name: String, value: String)] = [],
        body: [UInt8] = [],
        closeAfterBodyBytes: Int? = nil,
        bodyOnHead: Bool = false
    ) {
        self.status = status
        self.headers = headers
        self.body = body
        self.closeAfterBodyBytes = closeAfterBodyBytes
        self.bodyOnHead = bodyOnHead
    }

    /// Whether a `Connection` header lists `keep-alive` (case-insensitive).
    var keepsAlive: Bool {
        self.headers.contains { header in
            header.name.lowercased() == "connection"
                && header.value.split(separator: ",").contains {
                    $0.trimmingCharacters(in: .whitespaces).lowercased() == "keep-alive"
                }
        }
    }
}
