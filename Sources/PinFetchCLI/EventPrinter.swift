import FoundationEssentials
@preconcurrency import Glibc
import PinFetch
import Synchronization

/// What the command line prints of a fetch's ``FetchEvent``s on stderr: each warning once
/// (even with `-q`), each retry and each start over from byte 0 unless `-q` (a `Retry-After`
/// wait must not look like a hung job; a mirror that sent other bytes is worth knowing about),
/// and with `-v` every request, the deciding fields of every answer and every decision.
/// Lines go through the ``ProgressReporter`` so progress bars never hide them.
final class EventPrinter: Sendable {
    private let reporter: ProgressReporter
    private let quiet: Bool
    private let verbose: Bool
    private let warned = Mutex<Set<String>>([])

    init(reporter: ProgressReporter, quiet: Bool, verbose: Bool) {
        self.reporter = reporter
        self.quiet = quiet
        self.verbose = verbose
    }

    /// Prints what `event` calls for, if anything.
    func print(_ event: FetchEvent) {
        switch event {
        case .progress:
            return
        case .warning(_, let message):
            guard self.warned.withLock({ $0.insert(message).inserted }) else { return }
            self.reporter.message("pinfetch: warning: \(Printable.text(message))\n")
        case .retrying(let retry):
            self.reporter.retrying(retry.path, in: retry.delaySeconds)
            guard !self.quiet else { return }
            self.reporter.message("pinfetch: \(Printable.text("\(retry.reason); \(Self.describeNext(retry))"))\n")
        case .restarted(let path, let reason):
            guard !self.quiet else { return }
            let name = Printable.text(Text.lastPathComponent(path))
            self.reporter.message("pinfetch: \(name): starting over from byte 0: \(Printable.text(reason))\n")
        case .decision(let path, let message):
            self.detail(path, "* \(message)")
        case .request(let path, let method, let url, let headers):
            self.detail(path, (["> \(method) \(url)"] + headers.map { "> \($0)" }))
        case .response(let path, let status, let headers):
            self.detail(path, (["< HTTP \(status)"] + headers.map { "< \($0)" }))
        }
    }

    /// "retrying in 4 s (retry 2 of 5)", or "trying mirror 2 of 3: URL".
    static func describeNext(_ retry: FetchRetry) -> String {
        let seconds = retry.delaySeconds
        let wait =
            seconds <= 0
            ? "now"
            : seconds < 60 ? "in \(Text.fixed(seconds, places: 1)) s" : "in \(ProgressReporter.duration(seconds))"
        guard let number = retry.retry else {
            return "trying mirror \(retry.mirror) of \(retry.mirrors): \(retry.url)"
        }
        let mirror = retry.mirrors > 1 ? " on mirror \(retry.mirror) of \(retry.mirrors)" : ""
        return "retrying\(mirror) \(wait) (retry \(number) of \(retry.retries))"
    }

    private func detail(_ path: String, _ lines: String...) { self.detail(path, lines) }

    /// With `-v`: `lines`, each as `pinfetch: NAME: LINE`, control characters escaped.
    private func detail(_ path: String, _ lines: [String]) {
        guard self.verbose else { return }
        let name = Printable.text(Text.lastPathComponent(path))
        self.reporter.message(lines.map { "pinfetch: \(name): \(Printable.text($0))\n" }.joined())
    }
}
