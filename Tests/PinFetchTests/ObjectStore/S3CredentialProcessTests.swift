import Foundation
@preconcurrency import Glibc
import Testing

/// A `credential_process` that hangs holds a run only until it is stopped: a stop signal ends
/// the helper and everything it started (its own process group), and pinfetch exits 130.
@Suite(.serialized) struct S3CredentialProcessTests {
    /// Whether process `pid` has ended (gone, or a zombie no one reaped yet).
    static func ended(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return true }
        // `pid (name) STATE …`: the state follows the last `)`.
        return stat.split(separator: ")").last?.trimmingCharacters(in: .whitespaces).first == "Z"
    }

    @Test func `SIGINT ends a hanging credential_process and what it started, and the run exits 130`() async throws {
        try await withTemporaryDirectory { work in
            try FileManager.default.createDirectory(atPath: "\(work)/.aws", withIntermediateDirectories: true)
            let helper = "\(work)/hangs.sh"
            try "#!/bin/sh\nsleep 300 &\necho $! > '\(work)/sleep.pid'\nwait\n".write(
                toFile: helper,
                atomically: true,
                encoding: .utf8
            )
            chmod(helper, 0o755)
            try "[profile hangs]\ncredential_process = \(helper)\n".write(
                toFile: "\(work)/.aws/config",
                atomically: true,
                encoding: .utf8
            )
            let run = try ChildProcess(
                try EndToEndTests.pinfetchExecutable(),
                ["--no-cache", "-o", "\(work)/out", "s3://builds/app.bin"],
                logs: "\(work)/pinfetch",
                environment: [
                    "HOME": work, "AWS_PROFILE": "hangs", "AWS_ENDPOINT_URL_S3": "http://127.0.0.1:9",
                    "AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_WEB_IDENTITY_TOKEN_FILE": "",
                    "AWS_CONFIG_FILE": "", "AWS_SHARED_CREDENTIALS_FILE": "",
                ]
            )
            // The helper has started its child.
            var pid: Int32?
            for _ in 0..<400 where pid == nil {
                pid = (try? String(contentsOfFile: "\(work)/sleep.pid", encoding: .utf8))
                    .flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
                if pid == nil { try await Task.sleep(for: .milliseconds(50)) }
            }
            let sleeper = try #require(pid, "the helper never ran: \(run.transcript)")
            run.signal(SIGINT)
            let termination = try await run.wait(timeout: .seconds(20))
            #expect(termination == .exited(130), "\(run.transcript)")
            #expect(run.standardError.contains("interrupted before its first byte"), "\(run.standardError)")
            // The helper's group was killed: its sleep is gone (within the time a kill takes).
            for _ in 0..<100 where !Self.ended(sleeper) { try await Task.sleep(for: .milliseconds(50)) }
            #expect(Self.ended(sleeper))
            if !Self.ended(sleeper) { kill(sleeper, SIGKILL) }
            #expect(!FileManager.default.fileExists(atPath: "\(work)/out"))
        }
    }
}
