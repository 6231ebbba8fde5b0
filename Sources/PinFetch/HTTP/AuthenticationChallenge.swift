/// One challenge of a `WWW-Authenticate` field (RFC 9110 §11.6.1): its scheme (`Bearer`,
/// `Basic`) and its parameters (`realm`, `service`, `scope`), names lower-cased.
struct AuthenticationChallenge: Equatable {
    /// The scheme, lower-cased.
    var scheme: String
    var parameters: [String: String]

    /// The challenges of a field value: `Bearer realm="https://a/token",service="r"` gives one,
    /// `Basic realm="x", Bearer realm="y"` two. Parameters are `name=token` or
    /// `name="quoted string"` (RFC 9110 §11.2, §5.6.4); a `token68` is skipped; what does not
    /// parse ends the list.
    static func parse(_ value: String) -> [AuthenticationChallenge] {
        var challenges: [AuthenticationChallenge] = []
        let bytes = Array(value.utf8)
        var index = 0
        func skipBlanks() { while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x09 { index += 1 } }
        func token() -> String {
            let start = index
            while index < bytes.count, Self.isTokenByte(bytes[index]) { index += 1 }
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }
        while index < bytes.count {
            skipBlanks()
            while index < bytes.count, bytes[index] == UInt8(ascii: ",") {
                index += 1
                skipBlanks()
            }
            let scheme = token().lowercased()
            guard !scheme.isEmpty else { break }
            var challenge = AuthenticationChallenge(scheme: scheme, parameters: [:])
            // Parameters until one that is followed by no `=` (the next challenge's scheme).
            while true {
                skipBlanks()
                let mark = index
                let name = token().lowercased()
                skipBlanks()
                guard !name.isEmpty, index < bytes.count, bytes[index] == UInt8(ascii: "=") else {
                    index = mark  // the next challenge's scheme
                    break
                }
                // A token68 right after the scheme (`Basic dXNlcg==`): `=`s then a comma or the end.
                var end = index
                while end < bytes.count, bytes[end] == UInt8(ascii: "=") { end += 1 }
                if challenge.parameters.isEmpty,
                    end > index + 1 || end == bytes.count || bytes[end] == UInt8(ascii: ",")
                {
                    var after = end
                    while after < bytes.count, bytes[after] == 0x20 || bytes[after] == 0x09 { after += 1 }
                    if after == bytes.count || bytes[after] == UInt8(ascii: ",") {
                        index = after
                        break
                    }
                }
                index += 1
                skipBlanks()
                var parameter = ""
                if index < bytes.count, bytes[index] == UInt8(ascii: "\"") {
                    index += 1
                    var raw: [UInt8] = []
                    while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
                        if bytes[index] == UInt8(ascii: "\\"), index + 1 < bytes.count { index += 1 }
                        raw.append(bytes[index])
                        index += 1
                    }
                    guard index < bytes.count else { return challenges }  // an unterminated quote
                    index += 1
                    parameter = String(decoding: raw, as: UTF8.self)
                } else {
                    parameter = token()
                }
                challenge.parameters[name] = parameter
                skipBlanks()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ",") else { break }
                index += 1
            }
            challenges.append(challenge)
        }
        return challenges
    }

    /// RFC 9110 §5.6.2 `tchar`.
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        (0x61...0x7A).contains(byte | 0x20) || (0x30...0x39).contains(byte) || "!#$%&'*+-.^_`|~".utf8.contains(byte)
    }
}
