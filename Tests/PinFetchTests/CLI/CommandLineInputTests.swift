import Foundation
import PinFetchCLI
import Testing

@testable import PinFetch

/// Bad input on the command line or in its environment is exit 2 before any request, with a
/// message that says what the option or variable needs.
struct CommandLineInputTests {
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
