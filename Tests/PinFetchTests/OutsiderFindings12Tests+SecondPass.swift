import Foundation
@preconcurrency import Glibc
import PinFetchCLI
import Testing

@testable import PinFetch

/// What a second outsider pass broke in issue 12's build, each kept as the input that broke it.
extension OutsiderFindings12Tests {
    /// Second outsider pass, finding 13: without -i, the message spoke of "-i FILE".
    @Test func `--base-url with a URL and no -i says what --base-url needs`() {
        let error = #expect(throws: PinFetchError.self) {
            try Arguments.parse(["--checksum-file", "SUMS", "--base-url", "http://h.test/", "http://h.test/f"])
        }
        #expect(error?.code == .usage)
        #expect(error?.message.hasPrefix("--base-url goes with -i FILE") == true, "\(error?.message ?? "")")
    }
}
