import Foundation
@preconcurrency import Glibc
import Synchronization

/// Case 8 of the benchmark: case 4's files over HTTPS with HTTP/2, through a relay
/// that adds 25 ms each way (a 50 ms round trip), each client at the concurrency its users run
/// it with: `pinfetch -j 64`, `curl --parallel --parallel-max 64 --http2`, `aria2c -j 16`.
extension Benchmark {
    /// One way of the relay's delay.
    static let roundTripDelay = Duration.milliseconds(25)

    func caseRoundTrip() throws(BenchError) {
        let count = self.options.files
        let authority = try self.makeCertificates(in: self.root + "/tls")
        try FileTools.makeDirectory(self.root + "/nginx-h2")
        let server = try NginxServer(
            root: self.www,
            directory: self.root + "/nginx-h2",
            slowAfter: 0,
            tls: authority.server
        )
        defer { server.stop() }
        let relay = try DelayRelay(to: server.port, delay: Self.roundTripDelay)
        defer { relay.stop() }
        let base = "https://127.0.0.1:\(relay.port)"
        let directory = self.out + "/rtt"
        let lists = try self.writeManyLists(base: base, directory: directory, prefix: "rtt-")
        let manifestPath = lists.manifest
        let ariaPath = lists.aria2c
        let curlPath = lists.curl
        let verifyDirectory = { (name: String) throws(BenchError) in try self.expectManyFiles(in: directory, by: name) }
        let pinfetch = self.pinfetch(
            "case8-pinfetch",
            ["-j", "64", "--cacert", authority.certificate, "-P", directory, "-i", manifestPath]
        )
        var contenders = [
            Contender(name: "pinfetch -j 64", command: pinfetch, outputs: [directory]) { _ throws(BenchError) in
                _ = try self.expectPinfetch(pinfetch, status: "downloaded", files: count)
                try verifyDirectory("pinfetch")
            },
            Contender(
                name: "curl --parallel --parallel-max 64 --http2",
                command: Command(
                    self.tools.curl,
                    [
                        "-q", "-s", "--http2", "--parallel", "--parallel-max", "64", "--cacert", authority.certificate,
                        "-K", curlPath,
                    ],
                    standardError: self.errorPath("case8-curl")
                ),
                outputs: [directory]
            ) { _ throws(BenchError) in try verifyDirectory("curl") },
            Contender(
                name: "aria2c -j 16",
                command: Command(
                    self.tools.aria2c,
                    [
                        "--no-conf", "-q", "-j", "16", "-i", ariaPath, "-d", directory, "--allow-overwrite=true",
                        "--auto-file-renaming=false", "--ca-certificate=\(authority.certificate)",
                    ],
                    standardError: self.errorPath("case8-aria2c")
                ),
                outputs: [directory]
            ) { _ throws(BenchError) in try verifyDirectory("aria2c") },
        ]
        for index in contenders.indices { contenders[index].directories = [directory] }
        let results = try self.rounds("case 8", contenders)
        // One more run each, to count the TCP connections it opened (through the relay).
        var connections: [String: Int] = [:]
        for contender in contenders {
            let before = relay.accepted.load(ordering: .relaxed)
            _ = try self.measure(contender)
            connections[contender.name] = relay.accepted.load(ordering: .relaxed) - before
        }
        let rate = { (runs: [Measurement]) in Samples(runs.map { Double(count) / $0.wallSeconds }) }
        let pinfetchRate = rate(results["pinfetch -j 64"] ?? [])
        let rtt = Int(Self.roundTripDelay.components.attoseconds / 500_000_000_000_000)
        print("## 8. \(count) files of \(self.options.fileKiB) KiB over HTTPS (HTTP/2 offered), \(rtt) ms round trip\n")
        var table = MarkdownTable([
            "command", "wall s (median)", "min", "max", "files/s", "TCP connections", "CPU s",
            "pinfetch files/s ÷ this",
        ])
        for contender in contenders {
            let runs = results[contender.name] ?? []
            table.add(
                [contender.name] + Format.seconds(Samples(runs.map(\.wallSeconds))) + [
                    Format.fixed(rate(runs).median, 0),
                    String(connections[contender.name] ?? 0),
                    Format.fixed(Samples(runs.map(\.cpuSeconds)).median),
                    Format.ratio(pinfetchRate.ratios(to: rate(runs)).median),
                ]
            )
        }
        print(table.rendered() + "\n")
        let curlRatio = pinfetchRate.ratios(to: rate(results["curl --parallel --parallel-max 64 --http2"] ?? [])).median
        let ariaRatio = pinfetchRate.ratios(to: rate(results["aria2c -j 16"] ?? [])).median
        self.targets.append(
            TargetResult(
                name: "8a pinfetch files/s ÷ curl --http2's at \(rtt) ms RTT",
                detail: "\(Format.ratio(curlRatio)) (target ≥ 1.00x)",
                passed: curlRatio >= 1.0
            )
        )
        self.targets.append(
            TargetResult(
                name: "8b pinfetch files/s ÷ aria2c -j 16's at \(rtt) ms RTT",
                detail: "\(Format.ratio(ariaRatio)) (target ≥ 3.00x)",
                passed: ariaRatio >= 3.0
            )
        )
    }

    /// A test certificate authority and a server certificate for 127.0.0.1 signed by it, made
    /// with `openssl` in `directory` (P-256 keys, valid two days).
    /// - Returns: The authority's certificate (for the clients) and the server's files.
    func makeCertificates(in directory: String) throws(BenchError) -> (certificate: String, server: NginxServer.TLS) {
        try FileTools.makeDirectory(directory)
        let extensions = directory + "/server.ext"
        try FileTools.writeText("subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n", to: extensions)
        let steps: [[String]] = [
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
                directory + "/ca.key", "-out", directory + "/ca.pem", "-subj", "/CN=pinfetch-bench test CA", "-days",
                "2", "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign",
            ],
            [
                "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
                directory + "/server.key", "-out", directory + "/server.csr", "-subj", "/CN=127.0.0.1",
            ],
            [
                "x509", "-req", "-in", directory + "/server.csr", "-CA", directory + "/ca.pem", "-CAkey",
                directory + "/ca.key", "-CAcreateserial", "-out", directory + "/server.pem", "-days", "2", "-extfile",
                extensions,
            ],
        ]
        for step in steps {
            let result = try ChildProcess.output(of: Command(self.tools.openssl, step))
            guard result.exitStatus == 0 else {
                throw BenchError("openssl \(step[0]) failed (\(result.exitStatus)): \(result.text)")
            }
        }
        return (
            directory + "/ca.pem",
            NginxServer.TLS(certificate: directory + "/server.pem", key: directory + "/server.key")
        )
    }
}
