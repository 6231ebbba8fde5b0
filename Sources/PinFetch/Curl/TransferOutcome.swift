internal import CCurl

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

extension TransferOutcome {
    /// This outcome, its message pointing to the fix: a failed certificate check names the
    /// options that trust a private certificate authority; a failure to reach or pass the proxy
    /// (`proxy`: ``TransportSettings/proxyShown(for:)``) says it was the proxy, and which.
    func pointingToTheFix(proxy: String?) -> TransferOutcome {
        var outcome = self
        if self.category == .tls {
            outcome.message += "; to trust a private certificate authority give --cacert FILE (or set CURL_CA_BUNDLE)"
        }
        guard let proxy else { return outcome }
        // CURLE_PROXY (97, libcurl 7.73) is not in every header: by number.
        let proxyCodes = [CURLE_COULDNT_RESOLVE_PROXY, CURLE_COULDNT_CONNECT].map { Int($0.rawValue) } + [97]
        let lower = self.message.lowercased()
        if proxyCodes.contains(self.code) || lower.contains("proxy") || lower.contains("connect tunnel") {
            outcome.message = "the proxy \(proxy): \(self.message)"
            if self.category == .authentication {
                outcome.message += " (give --proxy-user USER:PASSWORD, or them in the proxy URL)"
            }
        }
        return outcome
    }
}
