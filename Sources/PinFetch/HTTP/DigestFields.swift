import FoundationEssentials
@preconcurrency import Glibc

/// `Repr-Digest` and `Content-Digest` fields (RFC 9530): a Structured Field Dictionary
/// (RFC 8941 §3.2) of algorithm keys to byte sequences, e.g.
/// `sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:, sha-512=:...:`.
///
/// Only `sha-256` and `sha-512` are kept (RFC 9530 §5 registers others, such as the insecure
/// `md5`, which are ignored). Pure Swift, fuzzable on its own.
enum DigestFields {
    /// The digests in `value` by algorithm; members that are malformed, of another algorithm, or
    /// of the wrong length are skipped. A key given twice with two different values is
    /// ``ResponseHead/contradiction``: RFC 8941 §3.2 would keep the last, but a server that states
    /// two digests for one representation has vouched for neither, and no bytes match it.
    static func parse(_ value: some StringProtocol) -> [HashAlgorithm: [UInt8]] {
        var digests: [HashAlgorithm: [UInt8]] = [:]
        for member in Self.members(of: value) {
            guard let equals = member.firstIndex(of: "=") else { continue }
            let key = member[..<equals].trimmingWhitespace().lowercased()
            var item = member[member.index(after: equals)...].trimmingWhitespace()
            if let parameters = item.firstIndex(of: ";") { item = item[..<parameters].trimmingWhitespace() }
            let algorithm: HashAlgorithm
            switch key {
            case "sha-256": algorithm = .sha256
            case "sha-512": algorithm = .sha512
            default: continue
            }
            guard item.count >= 2, item.first == ":", item.last == ":",
                let bytes = Data(base64Encoded: String(item.dropFirst().dropLast())),
                bytes.count == algorithm.digestLength
            else { continue }
            let digest = [UInt8](bytes)
            if let earlier = digests[algorithm], earlier != digest {
                digests[algorithm] = ResponseHead.contradiction
            } else {
                digests[algorithm] = digest
            }
        }
        return digests
    }

    /// Splits at top-level commas (a byte sequence holds none; a quoted string might).
    private static func members(of value: some StringProtocol) -> [Substring] {
        var members: [Substring] = []
        let text = Substring(value)
        var start = text.startIndex
        var quoted = false
        var index = text.startIndex
        while index < text.endIndex {
            let character = text[index]
            if character == "\"" { quoted.toggle() }
            if character == ",", !quoted {
                members.append(text[start..<index])
                start = text.index(after: index)
            }
            index = text.index(after: index)
        }
        members.append(text[start...])
        return members
    }
}
