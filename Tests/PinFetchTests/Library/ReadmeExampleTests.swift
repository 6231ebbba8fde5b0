import Foundation
import PinFetch
import Testing

/// The README's "Use the library" example is `ReadmeExample.swift`, word for word, and it works.
struct ReadmeExampleTests {
    static let root = Fixtures.repository

    /// The lines of the README's first ```swift block after "## Use the library".
    static func readmeExample() throws -> [Substring] {
        let readme = try String(contentsOf: Self.root.appending(path: "README.md"), encoding: .utf8)
        let section = try #require(readme.range(of: "## Use the library"))
        let after = readme[section.upperBound...]
        let open = try #require(after.range(of: "```swift\n"))
        let close = try #require(after[open.upperBound...].range(of: "```\n"))
        return after[open.upperBound..<close.lowerBound].split(separator: "\n", omittingEmptySubsequences: false)
    }

    @Test func `the README's example is ReadmeExample.swift without its first two comment lines`() throws {
        let source = try String(
            contentsOf: Self.root.appending(path: "Tests/PinFetchTests/Library/ReadmeExample.swift"),
            encoding: .utf8
        )
        let lines = source.split(separator: "\n", omittingEmptySubsequences: false).dropFirst(2)
        #expect(Array(lines) == (try Self.readmeExample()))
    }

    @Test func `the README's example fetches and verifies`() async throws {
        let files: [String: [UInt8]] = [
            "/tool.tar.gz": Fixtures.a, "/NOTES.txt": Array("notes\n".utf8), "/LICENSE": Array("MIT\n".utf8),
        ]
        try await withTestHTTPServer(serving: TestResource(body: [])) { server in
            server.handler = { request, _ in
                files[request.target].map {
                    TestResponse(status: 200, headers: [(name: "ETag", value: #""x""#)], body: $0)
                }
            }
            try await withTemporaryDirectory { directory in
                let results = try await fetchRelease(base: server.baseURL, into: directory, sha256: Fixtures.sha256A)
                #expect(results.map(\.status) == [.downloaded, .downloaded, .downloaded])
                for (path, bytes) in files {
                    #expect(contents(directory + path) == bytes)
                }
                await #expect(throws: PinFetchError.self) {
                    _ = try await fetchRelease(base: server.baseURL, into: directory + "/b", sha256: Fixtures.sha256B)
                }
            }
        }
    }
}
