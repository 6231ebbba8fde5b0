import Foundation
@preconcurrency import Glibc
import Testing

@testable import PinFetch

/// What the process tests share: running pinfetch and nginx, waiting, and test files.
extension ProcessTests {
    // MARK: - Running pinfetch

    /// Starts pinfetch with ``EndToEndTests/quiet`` (`--json`, `--no-cache`, …) and `arguments`.
    func startPinfetch(_ arguments: [String], logs: String, environment: [String: String] = [:]) throws -> ChildProcess
    {
        try ChildProcess(
            try EndToEndTests.pinfetchExecutable(),
            EndToEndTests.quiet + arguments,
            logs: logs,
            environment: environment
        )
    }

    /// Runs pinfetch with ``EndToEndTests/quiet`` and `arguments` to its end.
    func pinfetch(_ arguments: [String], logs: String) async throws -> CLIRun {
        let child = try self.startPinfetch(arguments, logs: logs)
        try await child.wait(timeout: .seconds(60))
        return child.result
    }

    /// Polls `condition` every 10 ms while `child` runs; throws when `child` ends first or 30 s pass.
    static func waitUntil(_ what: String, _ child: ChildProcess, _ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while !condition() {
            guard child.isRunning, ContinuousClock.now < deadline else {
                throw ChildProcessError("gave up waiting for \(what):\n\(child.transcript)")
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Starts nginx with HTTPS on a certificate of a CA made for this test, serving fixture A as
    /// `file`; `body` gets nginx, the CA and a work directory. With `clientAuthentication`, nginx
    /// asks for a client certificate of that CA and refuses requests without one.
    static func withHTTPSNginx(
        clientAuthentication: Bool = false,
        _ body: (Nginx, TestCertificateAuthority, String) async throws -> Void
    ) async throws {
        try await withTemporaryDirectory { work in
            let authority = try await TestCertificateAuthority.make(in: EndToEndTests.makeDirectory(work + "/pki"))
            var tls = authority.server
            if clientAuthentication { tls.clientAuthority = authority.certificate }
            try await withNginx(tls: tls) { nginx in
                try nginx.serve(Fixtures.a, as: "file")
                try await body(nginx, authority, work)
            }
        }
    }

    /// The requests `server` saw, one line each, for failure messages.
    static func describe(_ server: TestHTTPServer) -> String {
        server.requests.map { request in
            "\(request.method) \(request.target) range=\(request.header("Range") ?? "-")"
                + " if-range=\(request.header("If-Range") ?? "-")"
        }
        .joined(separator: "; ")
    }

    // MARK: - Files

    /// `count` bytes from ``SeededGenerator``, eight at a time (fast enough in a debug build).
    static func pseudoRandomContent(_ count: Int, seed: UInt64) -> [UInt8] {
        pseudoRandomBytes(count, seed: seed)
    }

    /// Serves `count` files named `f0…` of `size` bytes each from `nginx` and writes their manifest to
    /// `work/list`, one line a file: its `mirrors`, `url(name)`, its pin and its name.
    static func serveFiles(
        _ nginx: Nginx,
        count: Int,
        size: Int,
        in work: String,
        url: (String) -> String,
        mirrors: (String) -> [String] = { _ in [] }
    ) throws -> [String: [UInt8]] {
        var files: [String: [UInt8]] = [:]
        var lines: [String] = []
        for index in 0..<count {
            let name = "f\(index)"
            let bytes = Self.pseudoRandomContent(size, seed: UInt64(100 + index))
            try nginx.serve(bytes, as: name)
            files[name] = bytes
            lines.append(
                (mirrors(name) + [url(name), "sha256:\(Fixtures.sha256(bytes))", name]).joined(separator: " ")
            )
        }
        try (lines.joined(separator: "\n") + "\n").write(toFile: work + "/list", atomically: true, encoding: .utf8)
        return files
    }

    /// Whether `bytes` equals `content`.
    static func equal(_ bytes: Data, _ content: [UInt8]) -> Bool {
        bytes.count == content.count && Self.isPrefix(bytes, of: content)
    }

    /// Whether `bytes` are the first `bytes.count` bytes of `content` (`memcmp`: a debug build
    /// compares 16 MiB arrays element by element far too slowly).
    static func isPrefix(_ bytes: Data, of content: [UInt8]) -> Bool {
        guard bytes.count <= content.count else { return false }
        guard !bytes.isEmpty else { return true }
        return bytes.withUnsafeBytes { bytes in
            content.withUnsafeBytes { content in memcmp(bytes.baseAddress!, content.baseAddress!, bytes.count) == 0 }
        }
    }

    /// What lies beside a destination: the file itself, `.part`, and its checkpoints' offsets.
    struct Snapshot: CustomStringConvertible {
        var destination: Data?
        var partial: Data?
        /// The newest intact durable record's offset, `nil` without one.
        var durableOffset: Int?
        /// The intact light record's offset, `nil` without one.
        var lightOffset: Int?
        /// The names in the directory.
        var names: [String]

        init(_ destination: String) {
            self.destination = FileManager.default.contents(atPath: destination)
            self.partial = FileManager.default.contents(atPath: destination + ".part")
            let records = CheckpointFile.read(destination + ".part.state")
            self.durableOffset = records?.durable.first.map { Int($0.offset) }
            self.lightOffset = records?.light.map { Int($0.offset) }
            let directory = URL(filePath: destination).deletingLastPathComponent().path
            self.names = listing(directory)
        }

        /// Where a rerun after a kill resumes: the light offset when it is past the durable one
        /// (the bytes between them are intact after a kill), else the durable one.
        var checkpointOffset: Int? {
            guard let light = self.lightOffset, light > self.durableOffset ?? 0 else { return self.durableOffset }
            return light
        }

        var description: String {
            let destination = self.destination.map { "\($0.count) bytes" } ?? "absent"
            let partial = self.partial.map { "\($0.count) bytes" } ?? "absent"
            let durable = self.durableOffset.map { "\($0)" } ?? "none"
            let light = self.lightOffset.map { "\($0)" } ?? "none"
            return "destination \(destination), .part \(partial), durable checkpoint \(durable), light \(light), "
                + "files \(self.names)"
        }
    }

    /// What is wrong beside `destination` now, or `nil`: an intact checkpoint that covers more
    /// than `.part` holds and, given `content`, a destination that is not `content` or a `.part`
    /// that is not a prefix of it. A checkpoint without `.part` is fine only beside the destination
    /// (the commit renames `.part` before it removes the checkpoint). Reads the checkpoint before
    /// and after `.part`, so a run replacing it in between is not taken for a violation. (A torn
    /// record is not one: the slots are made to survive it.)
    static func checkpointViolation(_ destination: String, content: [UInt8]?) -> String? {
        let checkpointPath = destination + ".part.state"
        let record = FileManager.default.contents(atPath: checkpointPath)
        let partialSize = Self.fileSize(destination + ".part")
        let again = FileManager.default.contents(atPath: checkpointPath)
        let hasDestination = Self.fileSize(destination) != nil
        if let content {
            if hasDestination, let complete = FileManager.default.contents(atPath: destination),
                !Self.equal(complete, content)
            {
                return "the destination holds \(complete.count) wrong bytes"
            }
            if let partial = FileManager.default.contents(atPath: destination + ".part"),
                !Self.isPrefix(partial, of: content)
            {
                return ".part (\(partial.count) bytes) is not a prefix of the file"
            }
        }
        guard let record, record == again else { return nil }
        let records = CheckpointSlots.records(in: [UInt8](record))
        let offsets = (records.durable + [records.light].compactMap { $0 }).map(\.offset)
        guard let offset = offsets.max() else { return nil }
        guard let partialSize else {
            return hasDestination ? nil : "a checkpoint at \(offset) without .part or destination"
        }
        return offset <= partialSize ? nil : "a checkpoint covers \(offset) bytes, .part holds \(partialSize)"
    }

    /// The size in bytes of the file at `path`, `nil` when there is none.
    static func fileSize(_ path: String) -> Int? {
        var info = stat()
        return stat(path, &info) == 0 ? Int(info.st_size) : nil
    }
}
