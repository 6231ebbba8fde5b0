import Foundation
@preconcurrency import Glibc
import Testing

/// A certificate authority made for one test with `openssl` (P-256 keys, valid two days), and a
/// server certificate it issued for `127.0.0.1` (IP SAN) and `localhost` (DNS SAN).
struct TestCertificateAuthority {
    /// The CA certificate (PEM): what `--cacert` names.
    var certificate: String
    /// The server certificate and key (PEM) for nginx.
    var server: Nginx.TLS
    /// A client certificate and its key (PEM) the CA issued (`clientAuth`), for mutual TLS.
    var client: (certificate: String, key: String)

    static let openssl = "/usr/bin/openssl"

    /// Makes the CA and the server certificate as files in `directory`.
    /// - Throws: ``ChildProcessError`` with openssl's output when a step fails.
    static func make(in directory: String) async throws -> TestCertificateAuthority {
        let authority = TestCertificateAuthority(
            certificate: directory + "/ca.pem",
            server: Nginx.TLS(certificate: directory + "/server.pem", key: directory + "/server.key"),
            client: (directory + "/client.pem", directory + "/client.key")
        )
        let authorityKey = directory + "/ca.key"
        let request = directory + "/server.csr"
        let extensions = directory + "/server.ext"
        try """
        basicConstraints = critical, CA:FALSE
        keyUsage = critical, digitalSignature
        extendedKeyUsage = serverAuth
        subjectAltName = IP:127.0.0.1, DNS:localhost

        """.write(toFile: extensions, atomically: true, encoding: .utf8)
        let clientExtensions = directory + "/client.ext"
        try """
        basicConstraints = critical, CA:FALSE
        keyUsage = critical, digitalSignature
        extendedKeyUsage = clientAuth

        """.write(toFile: clientExtensions, atomically: true, encoding: .utf8)
        let newKey = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        let steps: [[String]] = [
            ["req", "-x509"] + newKey + ["-keyout", authorityKey, "-out", authority.certificate, "-days", "2"]
                + ["-subj", "/CN=pinfetch test CA", "-addext", "basicConstraints=critical,CA:TRUE"]
                + ["-addext", "keyUsage=critical,keyCertSign,cRLSign"],
            ["req"] + newKey + ["-keyout", authority.server.key, "-out", request, "-subj", "/CN=127.0.0.1"],
            ["x509", "-req", "-in", request, "-CA", authority.certificate, "-CAkey", authorityKey]
                + ["-set_serial", "2", "-days", "2", "-extfile", extensions, "-out", authority.server.certificate],
            ["req"] + newKey + ["-keyout", authority.client.key, "-out", request, "-subj", "/CN=pinfetch test client"],
            ["x509", "-req", "-in", request, "-CA", authority.certificate, "-CAkey", authorityKey]
                + [
                    "-set_serial", "3", "-days", "2", "-extfile", clientExtensions, "-out",
                    authority.client.certificate,
                ],
        ]
        for (index, arguments) in steps.enumerated() {
            let run = try await ChildProcess.run(Self.openssl, arguments, logs: directory + "/openssl-\(index)")
            guard run.termination == .exited(0) else { throw ChildProcessError("openssl failed:\n\(run.transcript)") }
        }
        return authority
    }
}
