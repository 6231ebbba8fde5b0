/// How one libcurl transfer ended.
struct TransferOutcome {
    enum Category {
        case ok, network, tls, protocolViolation, authentication, aborted, other
        /// Dropped while it waited for a connection, before libcurl had it: the run was cancelled,
        /// or (`--fail-fast`) another file failed.
        case notStarted
    }
    /// The `CURLcode`.
    var code: Int
    /// libcurl's error text (`CURLOPT_ERRORBUFFER`, else `curl_easy_strerror`).
    var message: String
    var category: Category
    /// Whether the request went out on a connection kept from an earlier request. A protocol failure
    /// there may be left over from an earlier answer on that connection (bytes after a HEAD answer),
    /// so it is worth one retry with ``TransferRequest/freshConnection``.
    var reusedConnection: Bool = false
}

extension TransferOutcome {
    /// The kind of failure a transfer that did not end well is, as a file's error (and its
    /// mirror's outcome in `--json`) names it.
    var failureCode: PinFetchError.Code {
        switch self.category {
        case .network: .network
        case .tls: .tlsVerification
        case .authentication: .authentication
        case .protocolViolation: .protocolViolation
        case .ok, .aborted, .other, .notStarted: .generic
        }
    }
}
