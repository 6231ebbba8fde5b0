import Foundation
@preconcurrency import Glibc
import PinFetch
import Testing

/// Answers that are not HTTP at all, and destinations that are directories (found by trying to
/// break the tool as a new user would).
struct BrokenAnswerTests {
    static let quiet = ["-q", "--json", "--retry-delay", "0", "--retries", "0"]

    /// A loopback server that answers every connection with `reply` and closes it.
    final class RawServer: @unchecked Sendable {
        let port: Int
        private let fd: Int32

        init(reply: String) throws {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr = in_addr(s_addr: in_addr_t(0x7F00_0001).bigEndian)
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                    bind(fd, generic, length) == 0 && listen(fd, 8) == 0 && getsockname(fd, generic, &length) == 0
                }
            }
            try #require(fd >= 0 && bound)
            self.fd = fd
            self.port = Int(UInt16(bigEndian: address.sin_port))
            Thread.detachNewThread {
                while true {
                    let client = accept(fd, nil, nil)
                    guard client >= 0 else { return }
                    var buffer = [UInt8](repeating: 0, count: 4096)
                    _ = recv(client, &buffer, buffer.count, 0)
                    _ = Array(reply.utf8).withUnsafeBytes {
                        send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
                    }
                    close(client)
                }
            }
        }

        func shutdown() { _ = Glibc.shutdown(self.fd, Int32(SHUT_RDWR)) }
    }

    @Test func `an answer that is not HTTP is exit 7 with a JSON line, and the next mirror is tried`() async throws {
        let garbage = try RawServer(reply: "this is not http at all\r\n\r\nnor is this\r\n")
        defer { garbage.shutdown() }
        try await withTestHTTPServer(serving: TestResource(body: Fixtures.a, etag: Fixtures.etagA)) { good in
            try await withTemporaryDirectory { directory in
                let url = "http://127.0.0.1:\(garbage.port)/file"
                let alone = await Fetcher.immediate(retries: 0).run(url, to: "\(directory)/a.bin")
                #expect(alone.error?.code == .protocolViolation, "\(failure(alone))")
                #expect(listing(directory).isEmpty)

                var job = FetchJob(mirrors: [url, good.url()], destination: "\(directory)/b.bin")
                job.pin = try Pin(sha256Hex: Fixtures.sha256A)
                let mirrored = try #require(await Fetcher.immediate(retries: 0).run([job]).first)
                #expect(mirrored.error == nil, "\(failure(mirrored))")
                #expect(contents("\(directory)/b.bin") == Fixtures.a)

                // The command line's exit status and --json line for it.
                let run = await runCLI(Self.quiet + ["-o", "\(directory)/a.bin", url])
                #expect(run.status == 7)
                #expect((run.json["error"] as? [String: Any])?["exit_code"] as? Int == 7)
                #expect(listing(directory) == ["b.bin"])
            }
        }
    }

    @Test(arguments: ["existing", "new/", "existing/"])
    func `a destination that is a directory is exit 2 before any request`(output: String) async throws {
        try await withTestHTTPServer(serving: TestResource(body: Fixtures.a, etag: Fixtures.etagA)) { server in
            try await withTemporaryDirectory { directory in
                try FileManager.default.createDirectory(
                    atPath: "\(directory)/existing",
                    withIntermediateDirectories: true
                )
                let run = await runCLI(Self.quiet + ["-o", "\(directory)/\(output)", server.url()])
                #expect(run.status == 2)
                // One that does not exist is not said to be one.
                let said = output == "new/" ? "ends in '/', so it names a directory" : "is a directory: name the file"
                #expect(run.standardError.contains(said), "\(run.standardError)")
                #expect(server.requests.isEmpty)
                #expect(listing(directory) == ["existing"])
                #expect(listing("\(directory)/existing").isEmpty)
            }
        }
    }
}
