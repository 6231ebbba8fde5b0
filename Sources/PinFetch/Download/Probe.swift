/// What the HEAD probe learned of the representation (advisory: Resume and checkpoints, "Probe").
struct Probe: Hashable, Sendable {
    /// `Content-Length` of the HEAD answer in bytes, when sent.
    var length: Int64?
    /// The validator of the HEAD answer.
    var validator: Validator
}

/// With `--content-disposition`: the safe base name the server gives (RFC 6266 §4.3). The
/// HEAD's answer names it when it can; when HEAD is refused or says nothing, the GET's head does
/// (that GET stops after its head: the body is asked for again once the destination, its lock
/// and its partial are known).
enum ServerNaming {
    /// The name mirror `mirror` gives the file, or `nil` when it gives none that is safe.
    /// - Throws: a file not started (``FileRequests/checkStarting()``), or a request libcurl
    ///   could not set up.
    static func name(_ requests: FileRequests, mirror: Int) throws(PinFetchError) -> String? {
        var value = requests.probeAnswer(mirror).head?.value("content-disposition")
        if value == nil {
            let delegate = HeadOnlyDelegate()
            let headers = ["Accept-Encoding: identity"] + requests.requester.options.headers
            _ = try requests.send(.get, headers: headers, delegate: delegate, mirror: mirror)
            if let head = delegate.head, (200..<300).contains(head.status) {
                value = head.value("content-disposition")
            }
        }
        return value.flatMap { SafeFileName.fromContentDisposition($0) }
    }
}

/// Looks at the final head of an answer and stops the transfer before its body.
private final class HeadOnlyDelegate: TransferDelegate {
    override func receive(head: ResponseHead) -> Bool { false }
}
