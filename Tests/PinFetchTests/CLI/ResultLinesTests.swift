import PinFetch
import Testing

@testable import PinFetchCLI

/// The lines a person reads about each file: within a terminal's width, whole in a log.
struct ResultLinesTests {
    static let longName = String(repeating: "a-long-release-name-", count: 5) + "v1.2.3.tar.gz"

    @Test func `a result line fits a terminal's width, and a log keeps the whole path`() async throws {
        try await withTestHTTPServer(serving: TestResource(body: Fixtures.a, etag: Fixtures.etagA)) { server in
            try await withTemporaryDirectory { directory in
                let result = await Fetcher.immediate().run(server.url(), to: "\(directory)/\(Self.longName)")
                #expect(result.error == nil, "\(failure(result))")
                let narrow = ResultLines.result(result, verbose: false, columns: 60)
                #expect(TerminalCapabilities.displayWidth(String(narrow.dropLast())) < 60, "\(narrow)")
                // The directory goes first, then the name's middle.
                #expect(narrow.hasPrefix("pinfetch: a-lon") && narrow.contains("…"), "\(narrow)")
                let wide = ResultLines.result(result, verbose: false, columns: 400)
                #expect(wide.hasPrefix("pinfetch: \(directory)/\(Self.longName)  "), "\(wide)")
                #expect(narrow.hasSuffix("  sha256:\(Fixtures.sha256A.prefix(8))…  downloaded\n"), "\(narrow)")
                // Narrower still, the digest goes, then the size: the line never wraps.
                for columns in [50, 40, 34] {
                    let line = ResultLines.result(result, verbose: false, columns: columns)
                    #expect(TerminalCapabilities.displayWidth(String(line.dropLast())) < columns, "\(line)")
                    #expect(line.hasSuffix("downloaded\n"), "\(line)")
                }
                let logged = ResultLines.result(result, verbose: false)
                #expect(logged.hasPrefix("pinfetch: \(directory)/\(Self.longName)  "), "\(logged)")
            }
        }
    }
}
