import PinFetch

/// A command line pinfetch cannot run: what is wrong, as a value, with the one line it prints.
///
/// Parsing throws these; ``Arguments/parse(_:environment:)`` turns them into
/// ``PinFetchError/Code/usage`` (exit 2) with ``message`` as the error's message.
enum ArgumentError: Error, Equatable, Sendable {
    /// An option the table does not hold, as it was spelled.
    case unknownOption(String)
    /// An option that takes a value came last, without one.
    case missingValue(option: String)
    /// A flag was given a value (`--json=yes`).
    case takesNoValue(option: String)
    /// An option was given the empty string where it `needs` something (`"a path"`).
    case emptyValue(option: String, needs: String)
    /// A value not of the form the option takes: `expected` says which (`"a whole number from
    /// 1 to 64"`); `given` is the value, shown unless it may hold a secret.
    case badValue(option: String, expected: String, given: String?)
    /// A value of the right form the option still refuses, for `reason` (`"cannot read FILE"`).
    /// `option` may be an environment variable read in its place (`$https_proxy`).
    case refused(option: String, reason: String)
    /// A value the library refused (a pin, a hashed-mirror template, a shard): its message.
    case malformed(String)
    /// Options that do not go together, or one that needs another.
    case conflict(Conflict)
    /// Neither a URL nor `-i`.
    case noURL
    /// `PINFETCH_CACHE_DIR` is not an absolute path (shown quoted).
    case relativeCacheDirectory(String)
    /// A stop signal came while an input file was awaited (`-H @FIFO` with no writer): not bad
    /// input, so ``failure`` is ``PinFetchError/Code/cancelled``. The message says what was read.
    case stopped(String)

    /// The line pinfetch prints after `pinfetch: `.
    var message: String {
        switch self {
        case .unknownOption(let option): "unknown option \(option)" + ForeignOption.advice(for: option)
        case .missingValue(let option): "\(option) needs a value"
        case .takesNoValue(let option): "\(option) takes no value"
        case .emptyValue(let option, let needs): "\(option) needs \(needs)"
        case .badValue(let option, let expected, let given):
            "\(option) takes \(expected)" + (given.map { ", not '\($0)'" } ?? "")
        case .refused(let option, let reason): "\(option): \(reason)"
        case .malformed(let message): message
        case .conflict(let conflict): conflict.message
        case .noURL: "no URL given (see --help)"
        case .relativeCacheDirectory(let directory):
            "PINFETCH_CACHE_DIR must be an absolute path, not \(SafeFileName.quoted(directory))"
        case .stopped(let message): message
        }
    }

    /// The error pinfetch exits with: a usage error (exit 2) saying ``message``, or for
    /// ``stopped(_:)`` the cancellation (exit 128 + the signal).
    var failure: PinFetchError {
        if case .stopped = self { return PinFetchError(.cancelled, self.message) }
        return PinFetchError(.usage, self.message)
    }

    /// A value the library refused, kept as ``malformed(_:)``: the library's refusals of a
    /// value (``Pin``, ``HashedMirror``, `parseShard`) are all usage errors, so only the message
    /// is kept.
    init(_ error: PinFetchError) { self = .malformed(error.message) }
}
