import Dispatch
import Foundation
@preconcurrency import Glibc
import Synchronization

/// What must not outlive the benchmark: running children, the nginx master, the work
/// directory. On SIGINT/SIGTERM it stops the children (nginx with SIGQUIT), removes what the
/// benchmark made unless `--keep`, and exits with 128 + the signal.
final class ChildRegistry: Sendable {
    static let shared = ChildRegistry()

    private struct State {
        var children: Set<pid_t> = []
        var server: pid_t?
        var removeOnSignal: [String] = []
        var stopping = false
    }

    private let state = Mutex(State())

    /// Whether a signal is ending the benchmark (errors from the stopped children are noise).
    var isStopping: Bool { self.state.withLock { $0.stopping } }

    /// Notes a started child.
    func remember(_ pid: pid_t) {
        self.state.withLock { _ = $0.children.insert(pid) }
    }

    /// Notes a reaped child.
    func forget(_ pid: pid_t) {
        self.state.withLock { _ = $0.children.remove(pid) }
    }

    /// The nginx master, stopped with SIGQUIT on a signal (`nil` once it is stopped).
    func setServer(_ pid: pid_t?) {
        self.state.withLock { $0.server = pid }
    }

    /// Paths removed when a signal ends the benchmark.
    func setRemoveOnSignal(_ paths: [String]) {
        self.state.withLock { $0.removeOnSignal = paths }
    }

    /// Handles SIGINT and SIGTERM while the returned sources are kept alive.
    func installSignalHandlers() -> [any DispatchSourceSignal] {
        var sources: [any DispatchSourceSignal] = []
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [self] in self.stopEverything(signal: number) }
            source.resume()
            sources.append(source)
        }
        return sources
    }

    private func stopEverything(signal number: Int32) -> Never {
        let state = self.state.withLock {
            $0.stopping = true
            return $0
        }
        FileHandle.standardError.write(Data("pinfetch-bench: interrupted, stopping\n".utf8))
        for pid in state.children where pid != state.server { kill(pid, SIGTERM) }
        if let server = state.server {
            kill(server, SIGQUIT)
            for _ in 0..<50 where waitpid(server, nil, WNOHANG) == 0 { usleep(100_000) }
        }
        for path in state.removeOnSignal { try? FileManager.default.removeItem(atPath: path) }
        exit(128 + number)
    }
}
