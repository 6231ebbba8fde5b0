import Foundation
@preconcurrency import Glibc

/// The tests' own token server's signing side, for a registry with `auth: token` (docker's token
/// authentication): a self-signed RSA certificate made by the `openssl` command (the registry's
/// `rootcertbundle`), and JWTs signed with its key (RS256, the certificate in `x5c`, as the
/// distribution registry verifies them), with the claims the registry checks: `iss`, `aud`
/// (its `service`), `exp`/`nbf` and `access`.
struct RegistryTokens {
    static let issuer = "pinfetch-tests"
    static let service = "pinfetch-registry"

    let directory: String
    /// The certificate as `x5c` carries it: its DER, base64.
    let certificateDER: String

    /// The certificate's PEM file: the registry's `rootcertbundle`.
    var bundle: String { self.directory + "/token-cert.pem" }

    /// Makes the key and its certificate in `directory`.
    static func make(in directory: String) async throws -> RegistryTokens {
        let made = try await ChildProcess.run(
            "/usr/bin/openssl",
            [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", directory + "/token-key.pem", "-out",
                directory + "/token-cert.pem", "-days", "2", "-subj", "/CN=pinfetch-token-issuer",
            ],
            logs: directory + "/openssl-req"
        )
        guard case .exited(0) = made.termination else { throw NginxError("openssl req: \(made.transcript)") }
        let pem = try String(contentsOfFile: directory + "/token-cert.pem", encoding: .utf8)
        let der = pem.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        return RegistryTokens(directory: directory, certificateDER: der)
    }

    /// A token for `actions` (`pull`, `push`) on `repository`, whose `exp` is `lifetime` seconds
    /// from now (negative: expired already; the registry allows 60 s of clock skew past it).
    func token(_ repository: String, actions: [String] = ["pull"], lifetime: Int = 300) async throws -> String {
        let now = Int(Date().timeIntervalSince1970)
        let header = #"{"typ":"JWT","alg":"RS256","x5c":["\#(self.certificateDER)"]}"#
        let access = actions.map { #""\#($0)""# }.joined(separator: ",")
        let claims =
            #"{"iss":"\#(Self.issuer)","sub":"ci","aud":"\#(Self.service)","exp":\#(now + lifetime),"nbf":\#(now - 120),"iat":\#(now - 120),"jti":"\#(UUID().uuidString)","access":[{"type":"repository","name":"\#(repository)","actions":[\#(access)]}]}"#
        let input = Self.base64URL(Array(header.utf8)) + "." + Self.base64URL(Array(claims.utf8))
        let name = UUID().uuidString.prefix(8)
        let inputPath = "\(self.directory)/jwt-\(name)"
        try input.write(toFile: inputPath, atomically: true, encoding: .utf8)
        let signed = try await ChildProcess.run(
            "/usr/bin/openssl",
            ["dgst", "-sha256", "-sign", self.directory + "/token-key.pem", "-out", inputPath + ".sig", inputPath],
            logs: "\(self.directory)/openssl-\(name)"
        )
        guard case .exited(0) = signed.termination else { throw NginxError("openssl dgst: \(signed.transcript)") }
        let signature = try Data(contentsOf: URL(fileURLWithPath: inputPath + ".sig"))
        return input + "." + Self.base64URL(Array(signature))
    }

    static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
}
