import FoundationEssentials
@preconcurrency import Glibc

/// Secrets replaced by `***` wherever pinfetch shows or stores a URL or a header (messages,
/// `-v`, proxy URLs).
package enum Redaction {
    /// `url` with the password of its user information (`http://user:***@host/path`), a user
    /// name given alone (`http://***@host/`: often a token), and the values of well-known
    /// signing and token parameters (``isSecretName(_:)``: `?X-Amz-Signature=***`) replaced, in
    /// the query and in the fragment (`#access_token=***`). Other parameters are shown as they
    /// are. Works on any `scheme://` URL, proxy URLs included. Parameters are split on `&` and
    /// `;`.
    package static func url(_ url: String) -> String {
        // Without a user part, a query or a fragment there is nothing to hide (most URLs, asked
        // about several times per file).
        guard
            url.utf8.contains(where: { $0 == UInt8(ascii: "@") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") })
        else { return url }
        var text = url
        if let slashes = text.utf8.firstRange(of: "://".utf8) {
            let rest = text[slashes.upperBound...]
            let authority = rest[
                ..<(rest.utf8.firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") } ?? rest.endIndex)
            ]
            if let at = authority.lastIndex(ofASCII: "@") {
                if let colon = authority[..<at].firstIndex(ofASCII: ":") {
                    text = String(text[..<colon]) + ":***" + text[at...]
                } else {
                    // A user name alone is often a token (`https://TOKEN@host/`): hidden too.
                    text = String(text[..<slashes.upperBound]) + "***" + text[at...]
                }
            }
        }
        // The query's parameters, then the fragment's (`#access_token=…`, OAuth's implicit flow).
        let hash = text.firstIndex(ofASCII: "#") ?? text.endIndex
        var shown = String(text[..<hash])
        if let question = shown.firstIndex(ofASCII: "?") {
            shown = String(shown[...question]) + Self.hidingValues(shown[shown.index(afterASCII: question)...])
        }
        guard hash < text.endIndex else { return shown }
        return shown + "#" + Self.hidingValues(text[text.index(afterASCII: hash)...])
    }

    /// What names the resource a signed URL points to, its signature aside (a redirect's
    /// target, compared from run to run): `url` without its fragment and without the query
    /// parameters that sign it or bound it in time, which change at each signing
    /// (``isSecretName(_:)``, ``isSigningName(_:)``: `X-Amz-Signature`, `X-Amz-Date`,
    /// `Expires`, Azure's `se`), its user part as ``url(_:)`` shows it. The other parameters
    /// stay, in their order: they may be what names the resource (`/get?f=a.bin`).
    package static func resource(_ url: String) -> String {
        let withoutFragment = url.prefix { $0 != "#" }
        guard let question = withoutFragment.firstIndex(ofASCII: "?") else { return Self.url(String(withoutFragment)) }
        let kept = withoutFragment[withoutFragment.index(afterASCII: question)...]
            .split(omittingEmptySubsequences: true) { $0 == "&" || $0 == ";" }
            .filter { parameter in
                let name = String(parameter.prefix { $0 != "=" })
                return !Self.isSecretName(name) && !Self.isSigningName(name)
            }
        let path = Self.url(String(withoutFragment[..<question]))
        return kept.isEmpty ? path : path + "?" + kept.joined(separator: "&")
    }

    /// Whether a query parameter named `raw` (compared as ``isSecretName(_:)`` does) is one that
    /// a signed URL's signer sets afresh at each signing without naming another resource:
    /// when it was signed, how long it holds, with what algorithm and headers (AWS SigV4, Google
    /// Cloud Storage V4, Azure SAS, CloudFront and CDN `Expires`).
    static func isSigningName(_ raw: String) -> Bool {
        var name = (Text.percentDecoded(raw) ?? raw).trimmingWhitespace().lowercased()
        if name.hasSuffix("[]") { name.removeLast(2) }
        name = name.filter { $0 != "-" && $0 != "_" && $0 != "." }
        return Self.signingQueryNames.contains(name)
    }

    /// ``isSigningName(_:)``'s names, as it compares them.
    static let signingQueryNames: Set<String> = [
        "xamzdate", "xamzexpires", "xamzalgorithm", "xamzsignedheaders", "xamzsecuritytoken", "xamzusersecret",
        "xgoogdate", "xgoogexpires", "xgoogalgorithm", "xgoogsignedheaders", "googleaccessid", "awsaccesskeyid",
        "expires", "expiry", "expire", "exp", "validuntil", "ttl", "timestamp", "ts", "nonce",
        // Azure SAS: version, services, resource types, permissions, start, expiry, protocol, IP.
        "sv", "ss", "srt", "sp", "se", "spr", "sip", "sr", "skoid", "sktid", "skt", "ske", "sks", "skv",
    ]

    /// `parameters` (`a=1&b=2`, split on `&` and `;`) with the values of secret ones as `***`.
    private static func hidingValues(_ parameters: Substring) -> String {
        // Scalar by scalar: a combining mark after `=` or `&` makes one `Character` of the two.
        var result = String.UnicodeScalarView()
        var name = String.UnicodeScalarView()
        var inValue = false
        var hiding = false
        for scalar in parameters.unicodeScalars {
            if scalar == "&" || scalar == ";" {
                result.append(scalar)
                name = String.UnicodeScalarView()
                inValue = false
                hiding = false
            } else if scalar == "=", !inValue {
                result.append(scalar)
                inValue = true
                hiding = Self.isSecretName(String(name))
                if hiding { result.append(contentsOf: "***".unicodeScalars) }
            } else if !inValue {
                name.append(scalar)
                result.append(scalar)
            } else if !hiding {
                result.append(scalar)
            }
        }
        return String(result)
    }

    /// `text` (a library's error message, say) with every `scheme://…` in it redacted as
    /// ``url(_:)`` does: libcurl names the proxy URL, password and all, in some of its errors.
    package static func text(_ text: String) -> String {
        guard text.utf8.firstRange(of: "://".utf8) != nil else { return text }
        var result = ""
        var rest = Substring(text)
        while let marker = rest.utf8.firstRange(of: "://".utf8) {
            let start =
                rest[..<marker.lowerBound].lastIndex { !($0.isLetter || $0.isNumber || "+-.".contains($0)) }
                .map { rest.index(after: $0) } ?? rest.startIndex
            let end = rest[marker.upperBound...].firstIndex { $0.isWhitespace || "'\"<>".contains($0) } ?? rest.endIndex
            result += rest[..<start] + Self.malformedURL(String(rest[start..<end]))
            rest = rest[end...]
        }
        return result + rest
    }

    /// `line` (what a helper program printed on its standard error) redacted as ``text(_:)``
    /// does, the value after a word naming a secret (`password=…`, `Secret: …`, `token=…`)
    /// replaced by `***`, and every run of 20 or more key characters (letters, digits,
    /// `+/_.~-`) that holds a letter and a digit too: an access key and its secret, a session
    /// token, a JWT, a `ghp_` token. A helper that fails may print what it holds; a path (a run
    /// that starts with `/`) is kept.
    package static func helperLine(_ line: String) -> String {
        // `password=…`, `Secret: …`, `token=…`: the value of a name that says it is a secret.
        var words: [String] = []
        var hideNext = false
        for word in Self.text(line).split(separator: " ", omittingEmptySubsequences: false) {
            if hideNext, !word.isEmpty {
                words.append("***")
                hideNext = false
                continue
            }
            let lower = word.lowercased()
            let secretName = ["password", "passwd", "secret", "token", "apikey", "api_key", "credential"].contains {
                lower.contains($0)
            }
            if secretName, let mark = word.firstIndex(where: { $0 == "=" || $0 == ":" }) {
                let value = word[word.index(after: mark)...]
                if value.isEmpty {
                    hideNext = word.last == ":"
                } else {
                    words.append(word[...mark] + "***")
                    continue
                }
            }
            words.append(String(word))
        }
        return Self.hidingKeyRuns(words.joined(separator: " "))
    }

    /// `line` with runs of 20 or more key characters that hold a letter and a digit as `***`
    /// (a run starting with `/` is a path, kept).
    private static func hidingKeyRuns(_ line: String) -> String {
        var result = ""
        var run = ""
        func flush() {
            let scalars = run.unicodeScalars
            let mixed =
                scalars.contains { ("A"..."Z").contains($0) || ("a"..."z").contains($0) }
                && scalars.contains { ("0"..."9").contains($0) } && run.first != "/"
            result += scalars.count >= 20 && mixed ? "***" : run
            run = ""
        }
        for scalar in line.unicodeScalars {
            if scalar.isASCII,
                scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)
                    || "+/_.~-".unicodeScalars.contains(scalar)
            {
                run.unicodeScalars.append(scalar)
            } else {
                flush()
                result.unicodeScalars.append(scalar)
            }
        }
        flush()
        return result
    }

    /// A URL that may be malformed (a password holding an unencoded `/`, `?` or `#` ends the
    /// authority early, so ``url(_:)`` cannot find it) for an error message: everything
    /// between `://` and the last `@` is hidden.
    package static func malformedURL(_ url: String) -> String {
        let hidden = Self.url(url)
        guard let slashes = hidden.utf8.firstRange(of: "://".utf8),
            let at = hidden[slashes.upperBound...].lastIndex(ofASCII: "@")
        else {
            return hidden
        }
        return hidden[..<slashes.upperBound] + "***" + hidden[at...]
    }

    /// Whether a query parameter named `raw` carries a secret. Its name is compared percent-
    /// decoded, lower-cased, without a trailing `[]` and without `-`, `_` and `.`: one of
    /// ``secretQueryNames``, or a name holding a word of ``secretQueryWords`` (`oauth_token`,
    /// `X-Oss-Signature`, `q-signature`), starting with `auth` or ending in `key` or `sig`.
    /// Hiding a value that was no secret costs only its display.
    static func isSecretName(_ raw: String) -> Bool {
        var name = (Text.percentDecoded(raw) ?? raw).trimmingWhitespace().lowercased()
        if name.hasSuffix("[]") { name.removeLast(2) }
        name = name.filter { $0 != "-" && $0 != "_" && $0 != "." }
        guard !name.isEmpty else { return false }
        return Self.secretQueryNames.contains(name) || Self.secretQueryWords.contains { name.contains($0) }
            || name.hasPrefix("auth") || name.hasSuffix("key") || name.hasSuffix("sig")
    }

    /// A header line `Name: value` with the value of `Authorization`, `Proxy-Authorization`,
    /// `Cookie` and `Set-Cookie` replaced (`Authorization: ***`), a `Location` redacted as a URL
    /// (``url(_:)``); other lines as they are.
    package static func headerLine(_ line: String) -> String {
        guard let colon = line.firstIndex(ofASCII: ":") else { return line }
        let name = line[..<colon].trimmingWhitespace().lowercased()
        if name == "location" || name == "content-location" {
            return line[...colon] + " "
                + Self.url(String(line[line.index(afterASCII: colon)...].trimmingWhitespace()))
        }
        return Self.secretHeaderNames.contains(name) ? line[...colon] + " ***" : line
    }

    /// `Name: ***`: a header line the user gave, shown without its value (`-v`).
    package static func hidingValue(_ line: String) -> String {
        guard let colon = line.firstIndex(ofASCII: ":") else { return "***" }
        return line[...colon] + " ***"
    }

    /// Header fields whose values are credentials (lower case).
    static let secretHeaderNames: Set<String> = [
        "authorization", "proxy-authorization", "cookie", "set-cookie", "x-amz-security-token",
    ]

    /// Query parameter names whose values are credentials, as ``isSecretName(_:)`` compares
    /// them: AWS S3 and Google Cloud Storage signed URLs (`X-Amz-Credential`), Azure SAS
    /// (`sig`), CloudFront (`Policy`, `Key-Pair-Id`), Akamai (`hdnts`), nginx `secure_link`
    /// (`md5`, `st`), CDN signing (`sign`, `hash`, `verify`), one-time codes, and passwords.
    static let secretQueryNames: Set<String> = [
        "xamzcredential", "xgooglecredential", "xgoogcredential", "policy", "keypairid", "code", "otp", "hdnts",
        "hdnea", "pass", "passwd", "pwd", "jwt", "sid", "session", "sessionid", "ticket", "hmac", "md5", "sign",
        "hash", "verify", "st",
    ]

    /// Words that make a query parameter's value a credential wherever they stand in its name.
    static let secretQueryWords = ["token", "signature", "secret", "password", "credential"]
}
