/// A failure of a fetch: a stable ``code`` and a one-line ``message`` for people.
///
/// Each ``Code`` maps to one `pinfetch` exit status (<doc:CommandLine#Exit-status>), so callers
/// can `switch` on the kind without parsing messages. Messages never contain header values
/// given with `-H` (they may hold credentials).
public struct PinFetchError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kind of failure; each has one `pinfetch` exit status (<doc:CommandLine#Exit-status>).
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        fileprivate enum Storage: Int32 {  // raw value = exit status
            case generic = 1
            case usage, fileIO, network, tlsVerification, authentication
            case protocolViolation, serverResponse, digestMismatch, destinationLocked
            case cancelled = 130
        }

        fileprivate let storage: Storage

        /// Exit 1: anything not covered by another code.
        public static let generic = Code(storage: .generic)
        /// Exit 2: a bad argument or bad input (URL, pin, checksum file).
        public static let usage = Code(storage: .usage)
        /// Exit 3: local file I/O failed (disk full, permissions, read-only directory).
        public static let fileIO = Code(storage: .fileIO)
        /// Exit 4: the network failed and the retries are used up.
        public static let network = Code(storage: .network)
        /// Exit 5: TLS certificate or host name verification failed.
        public static let tlsVerification = Code(storage: .tlsVerification)
        /// Exit 6: the server asked for authentication (HTTP 401 or 407).
        public static let authentication = Code(storage: .authentication)
        /// Exit 7: an answer that cannot be used safely (e.g. a `206` without `Content-Range`).
        public static let protocolViolation = Code(storage: .protocolViolation)
        /// Exit 8: an HTTP error status (4xx, or 5xx after the retries).
        public static let serverResponse = Code(storage: .serverResponse)
        /// Exit 9: the downloaded bytes do not match the pin.
        public static let digestMismatch = Code(storage: .digestMismatch)
        /// Exit 10: another process held the destination's lock past the lock timeout.
        public static let destinationLocked = Code(storage: .destinationLocked)

        /// Exit 130 (143 when the command line was stopped by SIGTERM): the fetch was cancelled;
        /// a checkpoint was kept so the next run resumes.
        public static let cancelled = Code(storage: .cancelled)

        /// The `pinfetch` exit status for this kind of failure (1...10).
        public var exitStatus: Int32 { self.storage.rawValue }

        /// The name used as `error.kind` in `--json` output, e.g. `digestMismatch`.
        public var description: String { "\(self.storage)" }
    }

    /// The kind of failure.
    public var code: Code
    /// One line for people: what failed, with the URL, offset or path it concerns.
    public var message: String
    /// The underlying number when there is one: a `CURLcode`, an `errno`, or an HTTP status.
    public var underlying: Int?
    /// Why, for the failures a caller in this package tells apart without reading ``message``.
    package var reason: Reason?

    /// A failure this package's callers recognise by kind, not by its wording.
    package enum Reason: Hashable, Sendable {
        /// The file is larger than ``FetchOptions/maximumFileSize``, `maximum` bytes.
        case largerThanMaximumFileSize(maximum: Int64)
    }

    /// Creates an error of kind `code` with a one-line `message`.
    public init(_ code: Code, _ message: String, underlying: Int? = nil) {
        self.code = code
        self.message = message
        self.underlying = underlying
    }

    /// Creates an error of kind `code` with a one-line `message` and why it happened.
    package init(_ code: Code, _ message: String, reason: Reason) {
        self.init(code, message)
        self.reason = reason
    }

    /// Errors are equal when their code, message and underlying number are: `reason` only
    /// tells this package's callers what the message says.
    public static func == (lhs: PinFetchError, rhs: PinFetchError) -> Bool {
        lhs.code == rhs.code && lhs.message == rhs.message && lhs.underlying == rhs.underlying
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(self.code)
        hasher.combine(self.message)
        hasher.combine(self.underlying)
    }

    public var description: String { self.message }
}
