import Foundation
import Synchronization

/// Downloads URLs to files, resuming partials and verifying pins (DESIGN.md).
///
/// ```swift
/// let result = try await Fetcher().fetch(url, to: "app.tar.gz", verifying: try Pin(sha256Hex: hex))
/// ```
public struct Fetcher: Sendable {
    /// Retries, timeouts, headers and progress for every fetch of this fetcher.
    public var options: FetchOptions

    public init(options: FetchOptions = FetchOptions()) {
        self.options = options
    }

    /// Downloads `url` to `destination`, resuming a partial, and verifies it against `pin`.
    ///
    /// The hash context is saved every few MiB in `<destination>.part.state`, so a rerun sends
    /// `Range: bytes=<offset>-` with `If-Range` (strong validators only, RFC 9110 §13.1.5) and
    /// rereads nothing. The file appears at `destination` only once its digest matches.
    /// Runs on its own thread: the cooperative pool is never blocked. Task cancellation stops
    /// the transfer and keeps a checkpoint.
    ///
    /// - Parameters:
    ///   - url: An absolute `http` or `https` URL.
    ///   - destination: The file path to create or replace.
    ///   - pin: The expected digest, or `nil` to compute (SHA-256) and report one.
    /// - Returns: The size in bytes, the digest, `resumedFrom` (a byte offset) and counters.
    /// - Throws: ``PinFetchError``: ``PinFetchError/Code/usage`` for a malformed URL,
    ///   ``PinFetchError/Code/digestMismatch`` when the bytes do not match `pin`,
    ///   ``PinFetchError/Code/network`` when the retries are used up, and the other codes as
    ///   DESIGN.md's exit statuses list them.
    public func fetch(
        _ url: String,
        to destination: String,
        verifying pin: Pin? = nil
    ) async throws(PinFetchError) -> FetchResult {
        let result = await self.run(url, to: destination, verifying: pin)
        if let error = result.error { throw error }
        return result
    }

    /// Like ``fetch(_:to:verifying:)`` but never throws: a failure is in ``FetchResult/error``
    /// with ``FetchResult/status`` `failed`, and the counters say how far it got (for `--json`).
    public func run(_ url: String, to destination: String, verifying pin: Pin? = nil) async -> FetchResult {
        let control = TransferControl()
        let options = self.options
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<FetchResult, Never>) in
                Thread.detachNewThread {
                    do throws(PinFetchError) {
                        let run = try FetchRun(
                            url: url,
                            destination: destination,
                            pin: pin,
                            options: options,
                            control: control
                        )
                        continuation.resume(returning: run.execute())
                    } catch {
                        continuation.resume(
                            returning: .failed(
                                url: url,
                                path: destination,
                                algorithm: pin?.algorithm ?? .sha256,
                                error: error
                            )
                        )
                    }
                }
            }
        } onCancel: {
            control.cancel()
        }
    }
}

/// Cancellation shared between the caller and the transfer thread; libcurl sees it in its
/// progress callback and stops with `CURLE_ABORTED_BY_CALLBACK`.
final class TransferControl: Sendable {
    private let cancelled = Atomic<Bool>(false)
    func cancel() { self.cancelled.store(true, ordering: .relaxed) }
    var isCancelled: Bool { self.cancelled.load(ordering: .relaxed) }
}

/// Validates an absolute `http`/`https` URL with a host.
/// - Throws: ``PinFetchError/Code/usage`` naming what is wrong.
func validateURL(_ text: String) throws(PinFetchError) {
    guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased() else {
        throw PinFetchError(.usage, "malformed URL '\(text.prefix(200))'")
    }
    guard scheme == "http" || scheme == "https" else {
        throw PinFetchError(.usage, "unsupported URL scheme '\(scheme)' (use http or https)")
    }
    guard let host = components.host, !host.isEmpty else {
        throw PinFetchError(.usage, "URL has no host: '\(text.prefix(200))'")
    }
}
