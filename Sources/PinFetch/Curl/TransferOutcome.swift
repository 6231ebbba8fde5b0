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
    /// options that trust a private certificate authority (unless the certificate was for
    /// another name, which no CA fixes); a failure to reach or pass the proxy of the request for
    /// `url` says it was the proxy, and which (``TransportSettings/proxyShown(for:)``).
    func pointingToTheFix(_ transport: TransportSettings, url: String) -> TransferOutcome {
        var outcome = self
        if self.category == .tls {
            outcome.message +=
                Self.hostNameMismatch(self.message)
                ? "; the certificate is for another host name: ask for the name it is for"
                : "; to trust a private certificate authority give --cacert FILE (or set CURL_CA_BUNDLE)"
        }
        if self.code == Int(CURLE_OPERATION_TIMEDOUT.rawValue), !self.message.contains("--") {
            outcome.message += Self.timeoutOption(self.message)
        }
        guard let proxy = transport.proxyShown(for: url) else { return outcome }
        // CURLE_PROXY (97, libcurl 7.73) is not in every header: by number.
        let proxyCodes = [CURLE_COULDNT_RESOLVE_PROXY, CURLE_COULDNT_CONNECT].map { Int($0.rawValue) } + [97]
        let lower = self.message.lowercased()
        if proxyCodes.contains(self.code) || lower.contains("proxy") || lower.contains("connect tunnel") {
            outcome.message = "the proxy \(proxy): \(self.message)"
            if self.category == .authentication {
                outcome.message += " (\(transport.proxyCredentialsAdvice(for: url)))"
            }
        }
        return outcome
    }

    /// The option that sets the limit libcurl's timeout `message` is about: its connect
    /// phase ("Connection timed out", "Resolving timed out"), its low-speed limit ("Operation
    /// too slow"), or either when libcurl says no more ("Timeout was reached").
    private static func timeoutOption(_ message: String) -> String {
        let lower = message.lowercased()
        // The whole fetch's time (--max-time, CURLOPT_TIMEOUT_MS), said where it ran out.
        if lower.hasPrefix("out of time") || lower.hasPrefix("operation timed out") { return "" }
        if lower.contains("connection timed out") || lower.contains("connection timeout")
            || lower.contains("resolving timed out")
        {
            return " (--connect-timeout S sets the limit)"
        }
        if lower.contains("too slow") { return " (--stall-timeout S sets the limit)" }
        return " (--connect-timeout S and --stall-timeout S set the limits)"
    }

    /// Whether libcurl's message says the certificate does not name the host asked for
    /// (OpenSSL's "no alternative certificate subject name matches target host name").
    private static func hostNameMismatch(_ message: String) -> Bool {
        let lower = message.lowercased()
        return lower.contains("subject name") || lower.contains("does not match target host")
            || lower.contains("doesn't match target host")
    }
}
