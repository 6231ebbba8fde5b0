import Foundation
import PinFetchCLI
import Testing

@testable import PinFetch

/// Bad input on the command line or in its environment is exit 2 before any request, with a
/// message that says what the option or variable needs.
struct CommandLineInputTests {
    /// A link to a descriptor of the process (`/dev/stdout`'s kind) is never replaced by the
    /// file: as root, `-o /dev/stdout` once replaced the system's link for every process.
    @Test func `a link to a process's descriptor is refused and stays a link`() async throws {
        try await withTemporaryDirectory { directory in
            let link = "\(directory)/out"
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "/proc/self/fd/1")
            let hop = "\(directory)/hop"
            try FileManager.default.createSymbolicLink(atPath: hop, withDestinationPath: "out")
            for path in [link, hop] {
                let run = await runCLI(["-o", path, "http://127.0.0.1:9/file"])
                #expect(run.status == 2, "\(run.standardError)")
                #expect(run.standardError.contains("a descriptor of the process"), "\(run.standardError)")
                #expect(run.standardError.contains("give -o -"), "\(run.standardError)")
            }
            let target = try FileManager.default.destinationOfSymbolicLink(atPath: link)
            #expect(target == "/proc/self/fd/1")
        }
    }

    /// User input: --base-url with a URL and a --checksum-file, and no -i.
    @Test func `--base-url with a URL and no -i says what --base-url needs`() {
        let error = #expect(throws: PinFetchError.self) {
            try Arguments.parse(["--checksum-file", "SUMS", "--base-url", "http://h.test/", "http://h.test/f"])
        }
        #expect(error?.code == .usage)
        #expect(error?.message.hasPrefix("--base-url goes with -i FILE") == true, "\(error?.message ?? "")")
    }

    /// User environment: a relative PINFETCH_CACHE_DIR; names with a directional mark.
    @Test func `a relative PINFETCH_CACHE_DIR is bad input, and a directional mark is no name`() async throws {
        try await withTemporaryDirectory { directory in
            let child = try ChildProcess(
                try EndToEndTests.pinfetchExecutable(),
                ["-q", "-o", "\(directory)/x", "http://127.0.0.1:9/x"],
                logs: "\(directory)/run",
                environment: ["PINFETCH_CACHE_DIR": "relative"]
            )
            try await child.wait(timeout: .seconds(30))
            #expect(child.termination == .exited(2), "\(child.transcript)")
            #expect(child.standardError.contains("PINFETCH_CACHE_DIR must be an absolute path"))
            #expect(throws: PinFetchError.self) { try SafeFileName.resolve("a\u{200F}b", in: "d") }
            #expect(SafeFileName.fromContentDisposition("attachment; filename=\"a\u{200E}b\"") == "ab")
        }
    }
}
