import FoundationEssentials
@preconcurrency import Glibc

/// What the HEAD probe learned of the representation (advisory: DESIGN.md, "Probe").
struct Probe: Hashable, Sendable {
    /// `Content-Length` of the HEAD answer in bytes, when sent.
    var length: Int64?
    /// The validator of the HEAD answer.
    var validator: Validator
}

extension Download {
    /// HEAD the current mirror (advisory): `nil` unless a `2xx` without a content coding came
    /// back. The first call asks; later calls on the same mirror return what it learned.
    func probe() -> Probe? {
        if let known = self.probeResult, known.mirror == self.mirrorIndex { return known.probe }
        let delegate = TransferDelegate()
        let headers = ["Accept-Encoding: identity"] + self.options.headers
        let outcome = try? self.request(.head, headers: headers, delegate: delegate)
        var probe: Probe?
        if let outcome, outcome.category == .ok, let head = delegate.head, (200..<300).contains(head.status),
            !head.hasContentCoding
        {
            probe = Probe(length: head.contentLength, validator: head.validator)
        }
        self.probeResult = (self.mirrorIndex, probe, delegate.head)
        return probe
    }

    /// With `--content-disposition`: the destination becomes the safe base name the server gives
    /// (RFC 6266), inside the naming directory. The HEAD's answer names it when it can; when HEAD
    /// is refused or says nothing, the GET's head does (that GET stops after its head: the body
    /// is asked for again once the destination, its lock and its partial are known).
    func nameByContentDisposition() throws(PinFetchError) {
        guard let directory = self.namingDirectory else { return }
        _ = self.probe()
        var value = self.probeResult?.head?.value("content-disposition")
        if value == nil {
            let delegate = HeadOnlyDelegate()
            _ = try self.request(
                .get,
                headers: ["Accept-Encoding: identity"] + self.options.headers,
                delegate: delegate
            )
            if let head = delegate.head, (200..<300).contains(head.status) {
                value = head.value("content-disposition")
            }
        }
        if let value, let name = SafeFileName.fromContentDisposition(value) {
            self.destination = Text.path(directory, name)
            self.serverNamed = true
        }
    }
}

/// Looks at the final head of an answer and stops the transfer before its body.
private final class HeadOnlyDelegate: TransferDelegate {
    override func receive(head: ResponseHead) -> Bool { false }
}
