/// What an S3-compatible store's error body says: `<Error><Code>NoSuchKey</Code><Message>…`
/// (Amazon S3 API Reference, "Error responses").
struct S3ErrorBody: Equatable {
    /// S3's codes for credentials that do not work, whatever the status (AWS documents
    /// `ExpiredToken` and `InvalidToken` as `400`).
    static let authenticationCodes: Set<String> = [
        "ExpiredToken", "InvalidToken", "TokenRefreshRequired", "InvalidAccessKeyId", "SignatureDoesNotMatch",
        "AccessDenied", "AuthorizationHeaderMalformed", "InvalidSecurity",
    ]

    /// Bytes of a body read at most.
    static let limit = 16 << 10

    /// S3's error code (`SignatureDoesNotMatch`, `ExpiredToken`, `NoSuchKey`, `SlowDown`, …).
    var code: String
    /// Its message, at most 200 characters, or empty.
    var message: String

    /// The code and message of `body`, or `nil` when it holds no `<Error><Code>`.
    init?(_ body: [UInt8]) {
        let text = String(decoding: body, as: UTF8.self)
        guard text.contains("<Error>"), let code = Self.element("Code", in: text), !code.isEmpty else { return nil }
        self.code = String(
            code.unicodeScalars.filter { $0.properties.isAlphabetic || ("0"..."9").contains($0) }.prefix(64)
        )
        self.message = String(
            (Self.element("Message", in: text) ?? "").unicodeScalars.map { $0.value < 0x20 ? " " : Character($0) }
                .prefix(200)
        )
    }

    /// The text of the first `<name>…</name>`, its five predefined entities decoded.
    static func element(_ name: String, in text: String) -> String? {
        guard let open = text.firstRange(of: "<\(name)>"),
            let close = text[open.upperBound...].firstRange(of: "</\(name)>")
        else { return nil }
        return String(text[open.upperBound..<close.lowerBound])
            .replacing("&lt;", with: "<").replacing("&gt;", with: ">").replacing("&quot;", with: "\"")
            .replacing("&apos;", with: "'").replacing("&amp;", with: "&")
    }

    /// `decision` (a failure for an answer of `status`) naming this error: a `403` is an
    /// authentication failure (exit 6: a wrong or expired key, or no permission), whatever
    /// else the status said stays as it was (`NoSuchKey` and `NoSuchBucket` are `404`s, exit 8;
    /// `SlowDown` a `503`, retried).
    func applied(to decision: AnswerDecision, status: Int) -> AnswerDecision {
        let said = "S3 \(self.code)" + (self.message.isEmpty ? "" : ": \(self.message)")
        switch decision {
        case .fail(let code, let message):
            let authentication = status == 403 || Self.authenticationCodes.contains(self.code)
            return .fail(authentication ? .authentication : code, "\(message), \(said)")
        case .retry(let code, let message, let retryAfter):
            return .retry(code, "\(message), \(said)", retryAfter: retryAfter)
        default:
            return decision
        }
    }
}
