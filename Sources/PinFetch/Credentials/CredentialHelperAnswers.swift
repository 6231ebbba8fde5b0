import FoundationEssentials
import Synchronization

/// What the run's credential helpers answered, by URI: a helper is run for a URI once, and
/// again only after the `expires` it gave (EngFlow's credential-helper spec: a tool SHOULD
/// cache until then); an answer without one holds for the run. Shared by every copy of the
/// ``FetchOptions`` it came with.
package final class CredentialHelperAnswers: Sendable {
    private struct Answer {
        var lines: [String]
        var expires: Date?
    }

    private let answers = Mutex<[String: Answer]>([:])

    package init() {}

    /// The helper's JSON (`headers` of lists of values, `expires` an RFC 3339 time).
    private struct Printed: Decodable {
        var headers: [String: [String]]?
        var expires: String?
    }

    /// Bytes of a helper's answer read at most.
    static let limit = 1 << 20

    /// The header lines (`Name: value`, one per value) that `helpers` give for a request to
    /// `uri` on `host`, and whether they were asked now (not kept from an earlier answer).
    /// No matching helper gives none.
    /// - Throws: ``PinFetchError/Code/authentication`` (exit 6) for a helper that cannot be run,
    ///   fails (its first line of standard error, redacted, in the message), runs past
    ///   `timeout` seconds or answers something else than the protocol's JSON (a header name
    ///   that is not a token, a value with a line break); ``PinFetchError/Code/cancelled``.
    func headers(
        for uri: String,
        host: String,
        helpers: [CredentialHelper],
        timeout: Double,
        isCancelled: () -> Bool
    ) throws(PinFetchError) -> (lines: [String], asked: Bool, helper: String)? {
        guard let helper = CredentialHelper.chosen(from: helpers, for: host) else { return nil }
        if let known = self.answers.withLock({ $0[uri] }), known.expires.map({ $0.timeIntervalSinceNow > 0 }) ?? true {
            return (known.lines, false, helper.path)
        }
        let answer = try Self.run(helper, uri: uri, timeout: timeout, isCancelled: isCancelled)
        self.answers.withLock { $0[uri] = answer }
        return (answer.lines, true, helper.path)
    }

    /// Forgets the answer for `uri`: the server refused what it gave.
    func forget(_ uri: String) { _ = self.answers.withLock { $0.removeValue(forKey: uri) } }

    private static func run(
        _ helper: CredentialHelper,
        uri: String,
        timeout: Double,
        isCancelled: () -> Bool
    ) throws(PinFetchError) -> Answer {
        let name = "credential helper \(helper.path)"
        let encoder = JSONEncoder()
        encoder.outputFormatting = .withoutEscapingSlashes
        let request = (try? encoder.encode(["uri": uri])).map { Array($0) } ?? []
        let ended: ChildCommand.Ended
        do throws(PinFetchError) {
            ended = try ChildCommand.run(
                [helper.path, "get"],
                input: request,
                timeout: timeout,
                isCancelled: isCancelled
            )
        } catch {
            throw PinFetchError(.authentication, "\(name): \(error.message)")
        }
        if let failure = ended.failure(of: name, timeLimit: "\(Text.number(timeout)) s (--credential-helper-timeout)") {
            throw failure
        }
        guard ended.output.count <= Self.limit,
            let printed = try? JSONDecoder().decode(Printed.self, from: Data(ended.output))
        else {
            throw PinFetchError(.authentication, "\(name) printed no JSON object with \"headers\"")
        }
        var lines: [String] = []
        for (field, values) in (printed.headers ?? [:]).sorted(by: { $0.key < $1.key }) {
            guard !field.isEmpty, field.utf8.allSatisfy(Self.isTokenByte) else {
                throw PinFetchError(.authentication, "\(name) gave a header name that is not a token")
            }
            // The fields that frame or route the request are pinfetch's (and libcurl's) to set.
            guard !Self.framingFields.contains(field.lowercased()) else {
                throw PinFetchError(.authentication, "\(name) gave \(field), which pinfetch sets itself")
            }
            for value in values {
                // A line break would start a header of the helper's choosing (RFC 9110 §5.5).
                guard !value.unicodeScalars.contains(where: { ($0.value < 0x20 && $0 != "\t") || $0.value == 0x7F })
                else {
                    throw PinFetchError(.authentication, "\(name) gave a value of \(field) with a control character")
                }
                lines.append("\(field): \(value)")
            }
        }
        var expires: Date?
        if let text = printed.expires {
            guard let date = try? Date(text, strategy: .iso8601) else {
                throw PinFetchError(.authentication, "\(name): \"expires\" is not an RFC 3339 time")
            }
            expires = date
        }
        return Answer(lines: lines, expires: expires)
    }

    /// Fields a helper may not give (RFC 9110 §7.2, §8.6, §7.6.1; RFC 9112 §6.1).
    static let framingFields: Set<String> = [
        "host", "content-length", "transfer-encoding", "connection", "expect", "range", "if-range", "te",
        "upgrade", "keep-alive",
    ]

    /// RFC 9110 §5.6.2 `tchar`.
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        (0x61...0x7A).contains(byte | 0x20) || (0x30...0x39).contains(byte) || "!#$%&'*+-.^_`|~".utf8.contains(byte)
    }
}
