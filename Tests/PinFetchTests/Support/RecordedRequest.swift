import Foundation

/// One request as the server received it.
struct RecordedRequest: Sendable {
    /// The request method, e.g. `GET` or `HEAD`.
    var method: String
    /// The request-target, e.g. `/file`.
    var target: String
    /// Header fields in arrival order, names as sent.
    var headers: [(name: String, value: String)]

    /// The value of the first header field named `name` (case-insensitive), or nil.
    func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        return self.headers.first { $0.name.lowercased() == wanted }?.value
    }

    /// All values of header fields named `name` (case-insensitive), in arrival order.
    func headers(named name: String) -> [String] {
        let wanted = name.lowercased()
        return self.headers.filter { $0.name.lowercased() == wanted }.map(\.value)
    }
}
