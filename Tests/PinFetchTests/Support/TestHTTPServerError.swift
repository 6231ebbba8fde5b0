import Foundation

/// A socket call failed while setting up the server.
struct TestHTTPServerError: Error, CustomStringConvertible {
    /// The failing call.
    var operation: String
    /// `errno` after the call.
    var code: Int32

    var description: String {
        "TestHTTPServer: \(self.operation) failed: \(String(cString: strerror(self.code))) (\(self.code))"
    }
}
