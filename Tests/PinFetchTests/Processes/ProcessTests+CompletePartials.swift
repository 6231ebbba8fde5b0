import Foundation
import Testing

/// A partial that already holds every byte (a run killed right after the last byte of a body
/// without `Content-Length`) against real nginx over HTTPS, where HTTP/2 is offered: finalized
/// on HEAD's length, with no ranged GET at the end of the file.
extension ProcessTests {
    /// nginx's ETag of a file it serves: its mtime and size in hexadecimal.
    static func nginxETag(of path: String) throws -> String {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        let modified = Int((attributes[.modificationDate] as! Date).timeIntervalSince1970)
        let size = (attributes[.size] as! NSNumber).intValue
        return "\"\(String(modified, radix: 16))-\(String(size, radix: 16))\""
    }

    @Test(arguments: [true, false])
    func `a partial holding every byte is finalized over HTTP/2 with a HEAD only`(pinned: Bool) async throws {
        try await Self.withHTTPSNginx { nginx, authority, work in
            let url = nginx.httpsURL("file")
            let output = work + "/file"
            // Pinned: a body cut right after its last byte (no total known); unpinned: one that
            // ended cleanly and recorded its length.
            try writePartial(
                Fixtures.a[...],
                of: pinned ? nil : Int64(Fixtures.a.count),
                to: output,
                url: url,
                etag: try Self.nginxETag(of: nginx.root + "/file")
            )
            let run = try await self.pinfetch(
                ["--cacert", authority.certificate, "--json", "-o", output, url]
                    + (pinned ? ["--sha256", Fixtures.sha256A] : []),
                logs: work + "/run"
            )
            #expect(run.status == 0, EndToEndTests.explain(run, nginx))
            #expect(contents(output) == Fixtures.a)
            #expect(run.json["downloaded_bytes"] as? Int == 0, "\(run.standardOutput)")
            #expect(run.json["sha256"] as? String == Fixtures.sha256A, "\(run.standardOutput)")
            #expect(nginx.requests.map(\.method) == ["HEAD"], EndToEndTests.explain(run, nginx))
            #expect(listing(work).filter { $0.hasPrefix("file") } == ["file"])
        }
    }
}
