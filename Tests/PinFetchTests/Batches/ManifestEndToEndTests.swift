import Foundation
import Testing

/// A manifest of dozens of files served by real nginx, fetched by the real executable with `-j`.
@Suite(.enabled(if: ProcessInfo.processInfo.environment["PINFETCH_SKIP_E2E"] != "1", "PINFETCH_SKIP_E2E=1"))
struct ManifestEndToEndTests {
    /// Distinct content for file `index`, `size` bytes.
    static func body(_ index: Int, size: Int) -> [UInt8] {
        (0..<size).map { UInt8(truncatingIfNeeded: ($0 &* 2_654_435_761) >> 13 ^ index &* 31) }
    }

    @Test func `forty-eight files from a manifest and from a SHA256SUMS with -j 4`() async throws {
        let count = 48
        let bodies = (0..<count).map { Self.body($0, size: 50_000 + $0 * 997) }
        try await withNginx { nginx in
            for (index, body) in bodies.enumerated() { try nginx.serve(body, as: "file\(index).bin") }
            try await withTemporaryDirectory { work in
                let manifest =
                    ["# dozens of files"]
                    + bodies.enumerated().map { index, body in
                        "\(nginx.url("file\(index).bin")) sha256:\(Fixtures.sha256(body)) sub/f\(index).bin"
                    }
                try (manifest.joined(separator: "\n") + "\n").write(
                    toFile: work + "/manifest",
                    atomically: true,
                    encoding: .utf8
                )
                let tool = EndToEndTests()
                let run = try await tool.pinfetch(
                    ["-j", "4", "-P", work + "/out", "-i", work + "/manifest"],
                    logs: work + "/manifest-run"
                ).result
                #expect(run.status == 0, EndToEndTests.explain(run, nginx))
                let wrong = bodies.indices.filter { contents(work + "/out/sub/f\($0).bin") != bodies[$0] }
                #expect(wrong.isEmpty)
                #expect(run.standardOutput.split(separator: "\n").count == count)
                // Each of the 4 workers keeps its connection from file to file.
                let connections = Set(nginx.requests.map(\.connection))
                #expect(nginx.requests.count == count)
                #expect(connections.count <= 4, "\(connections.count) connections for \(count) files")

                let sums = bodies.enumerated().map { "\(Fixtures.sha256($1))  file\($0).bin" }
                try (sums.joined(separator: "\n") + "\n").write(
                    toFile: work + "/SHA256SUMS",
                    atomically: true,
                    encoding: .utf8
                )
                let mirror = try await tool.pinfetch(
                    ["-j", "4", "-P", work + "/mirror", "--base-url", nginx.url(""), "-i", work + "/SHA256SUMS"],
                    logs: work + "/sums-run"
                ).result
                #expect(mirror.status == 0, EndToEndTests.explain(mirror, nginx))
                let missing = bodies.indices.filter { contents(work + "/mirror/file\($0).bin") != bodies[$0] }
                #expect(missing.isEmpty)
            }
        }
    }
}
