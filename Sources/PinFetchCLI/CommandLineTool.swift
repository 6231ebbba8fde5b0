import Dispatch
import FoundationEssentials
@preconcurrency import Glibc
import PinFetch
import Synchronization

/// The `pinfetch` command: parses arguments, runs the fetch, prints `--json` and errors, and
/// turns the outcome into an exit status (the command-line article, "Exit status"). Output goes through injected writers so
/// tests can read it.
public enum CommandLineTool {
    /// The `--help` text, made from ``OptionTable`` (``HelpText``).
    public static let usage = HelpText.text(for: OptionTable.all)

    /// Runs the command with `arguments` (without the program name) and returns its exit status.
    /// SIGHUP, SIGINT and SIGTERM cancel the fetch; a checkpoint is kept and the status is
    /// 129 / 130 / 143.
    /// With many files the status is the most serious of theirs (``severity(of:)``). What was
    /// printed on standard output (`--json`, `--dry-run`, `gc`) but could not be written there
    /// (a reader that closed the pipe, a full disk) makes it at least 3, as curl's 23 does.
    public static func run(_ arguments: [String], output: Output = .process) async -> Int32 {
        let status = await Self.execute(arguments, output: output)
        guard let code = output.standardOutputFailure() else { return status }
        let why =
            code == EPIPE
            ? "the reader closed the pipe" : code == EBADF ? "it is closed" : String(cString: strerror(code))
        output.standardError("pinfetch: standard output did not take what was printed there: \(why)\n")
        let failed = PinFetchError.Code.fileIO.exitStatus
        return Self.severity(of: status) < Self.severity(of: failed) ? failed : status
    }

    private static func execute(_ arguments: [String], output: Output) async -> Int32 {
        if arguments.first == "gc" { return GarbageCommand.run(Array(arguments.dropFirst()), output: output) }
        if arguments.first == "completion" { return ShellCompletion.run(Array(arguments.dropFirst()), output: output) }
        if arguments == ["help"] { return await Self.execute(["--help"], output: output) }
        if arguments == ["help", "gc"] { return GarbageCommand.run(["--help"], output: output) }
        if arguments == ["help", "completion"] {
            output.standardOutput("usage: pinfetch completion bash|zsh|fish\n  Prints the shell's completion script.\n")
            return 0
        }
        // Signals are taken from here on, so that one coming while an input file is awaited
        // (`-H @FIFO` or `-i FIFO` without a writer) ends the run; later they cancel the
        // planning too (a remote checksum file being fetched into a temporary directory is
        // stopped, and the directory removed), and then the fetch.
        let signals = SignalCancellation()
        let running = Mutex<Task<Result<[FetchResult], PinFetchError>, Never>?>(nil)
        signals.install { running.withLock { $0 }?.cancel() }
        defer { signals.uninstall() }
        var parsed: Arguments
        do throws(PinFetchError) {
            parsed = try Arguments.parse(arguments)
        } catch {
            output.standardError("pinfetch: \(Printable.text(error.message))\n")
            return error.code == .cancelled ? 128 + (signals.stopSignal ?? SIGINT) : error.code.exitStatus
        }
        if parsed.action != .fetch {
            output.standardOutput(
                parsed.action == .help
                    ? Self.usage : "pinfetch \(PinFetchVersion.current) (\(PinFetchVersion.libraries))\n"
            )
            return 0
        }
        // -o -: downloaded into a private directory, copied to stdout once verified.
        let delivery: StandardOutputDelivery?
        do throws(PinFetchError) {
            let toStandardOutput = parsed.output == "-" && !parsed.dryRun
            delivery = toStandardOutput ? try StandardOutputDelivery(for: parsed.urls.first ?? "") : nil
        } catch {
            output.standardError("pinfetch: \(Printable.text(error.message))\n")
            if parsed.json {  // the file's line, on stderr as with -o - always
                let url = parsed.urls.first.map(JobPlan.shown) ?? ""
                let result = FetchResult.failed(
                    url: url,
                    path: "-",
                    algorithm: parsed.pin?.algorithm ?? .sha256,
                    error: error
                )
                output.standardError(JSONReport(result: result, exitStatus: error.code.exitStatus).line() + "\n")
            }
            return error.code.exitStatus
        }
        if let delivery { parsed.output = delivery.path }
        defer { delivery?.remove() }
        let parsedArguments = parsed
        let shown = Mutex<[Int: FetchResult]>([:])  // results as the user sees them (-o -)
        let reporter = ProgressReporter(terminal: output.terminal, write: output.standardError)
        // A line on standard output, or on standard error when standard output carries the file (-o -).
        let printJSON: @Sendable (String) -> Void = { line in
            if delivery == nil { output.standardOutput(line + "\n") } else { reporter.message(line + "\n") }
        }
        // A resized terminal gets its bars drawn again at the new width.
        let resize = output.terminal.map { _ in DispatchSource.makeSignalSource(signal: SIGWINCH, queue: .global()) }
        resize?.setEventHandler { reporter.resized() }
        resize?.resume()
        defer { resize?.cancel() }
        let task = Task { () async -> Result<[FetchResult], PinFetchError> in
            let jobs: [FetchJob]
            do throws(PinFetchError) {
                jobs = try await JobPlan.jobs(for: parsedArguments) { report in
                    if case .note(let line) = report {
                        return reporter.message("pinfetch: \(Printable.text(line))\n")
                    }
                    guard parsedArguments.json, !parsedArguments.dryRun else { return }
                    switch report {
                    case .note: break
                    case .input(let role, let result):
                        let status = Self.exitStatus(of: result, signal: signals.stopSignal)
                        printJSON(JSONReport(result: result, exitStatus: status, input: role).line())
                    case .skipped(let result):
                        printJSON(
                            JSONReport(
                                result: result,
                                exitStatus: Self.exitStatus(of: result, signal: signals.stopSignal)
                            ).line()
                        )
                    }
                }
            } catch {
                return .failure(error)
            }
            if parsedArguments.dryRun {
                return Self.dryRun(jobs, parsedArguments, output: output).map { _ in [] }
            }
            reporter.expect(files: jobs.count)
            var options = parsedArguments.options
            if !parsedArguments.quiet { options.progress = { reporter.report($0) } }
            let printer = EventPrinter(
                reporter: reporter,
                quiet: parsedArguments.quiet,
                verbose: parsedArguments.verbose
            )
            options.events = { printer.print($0) }
            // The signal thread may run late under load: a file is not placed once a stop signal
            // came, taken or still pending.
            options.stopRequested = { signals.stopRequested }
            let fetcher = Fetcher(options: options)
            let results = await fetcher.run(jobs, parallelism: parsedArguments.jobs, failFast: parsedArguments.failFast)
            { index, fetched in
                if !parsedArguments.quiet { reporter.finish(fetched.path) }
                let result = delivery?.deliver(fetched, to: output.standardOutputBytes) ?? fetched
                shown.withLock { $0[index] = result }
                let status = Self.exitStatus(of: result, signal: signals.stopSignal)
                if result.status == .skipped {
                    // Counted in the summary line; its JSON line says why.
                } else if let error = result.error, error.code == .cancelled, signals.stopRequested {
                    reporter.message(ResultLines.interrupted(result, columns: output.terminal?.columns()))
                } else if let error = result.error {
                    reporter.message("pinfetch: \(Printable.text(error.message))\n", isError: true)
                    if ProcessInfo.processInfo.environment["GITHUB_ACTIONS"] == "true" {
                        reporter.message(GitHubAnnotation.error(path: result.path, message: error.message) + "\n")
                    }
                } else if !parsedArguments.quiet, !parsedArguments.json {
                    reporter.message(
                        ResultLines.result(
                            result,
                            verbose: parsedArguments.verbose,
                            columns: output.terminal?.columns()
                        )
                    )
                }
                if parsedArguments.json, status != PinFetchError.Code.usage.exitStatus {  // bad input prints no result
                    printJSON(JSONReport(result: result, exitStatus: status).line())
                }
            }
            return .success(results)
        }
        running.withLock { $0 = task }
        if signals.stopRequested { task.cancel() }  // a signal that came before the task was
        let outcome = await task.value
        signals.uninstall()
        reporter.clear()  // after an interruption too: no bar is left, the cursor on a clean line
        let results: [FetchResult]
        switch outcome {
        case .success(let finished):
            results = finished.enumerated().map { index, result in shown.withLock { $0[index] } ?? result }
        case .failure(let error):
            output.standardError("pinfetch: \(Printable.text(error.message))\n")
            if ProcessInfo.processInfo.environment["GITHUB_ACTIONS"] == "true", error.code != .cancelled {
                output.standardError(GitHubAnnotation.error(path: "input", message: error.message) + "\n")
            }
            return error.code == .cancelled ? 128 + (signals.stopSignal ?? SIGINT) : error.code.exitStatus
        }

        if parsed.dryRun { return 0 }
        if results.isEmpty, !parsed.quiet {
            output.standardError("pinfetch: this shard has no entry: nothing to do\n")
        }
        let statuses = results.map { Self.exitStatus(of: $0, signal: signals.stopSignal) }
        if results.count > 1,
            let line = ResultLines.summary(
                results,
                statuses: statuses,
                quiet: parsed.quiet,
                interrupted: signals.stopSignal != nil,
                columns: output.terminal?.columns()
            )
        {
            output.standardError(line)
        }
        return statuses.max { Self.severity(of: $0) < Self.severity(of: $1) } ?? 0
    }

    /// `--dry-run`: one line per file on stdout (a JSON object with `--json`) saying what the
    /// fetch would do (``DryRun``): its destination, URLs, pin and first step. No request.
    private static func dryRun(
        _ jobs: [FetchJob],
        _ arguments: Arguments,
        output: Output
    ) -> Result<Void, PinFetchError> {
        var firstByPin: [Pin: String] = [:]  // a later entry pinned the same is a copy of the first
        for job in jobs {
            var action: DryRun.Action
            do throws(PinFetchError) {
                action = try DryRun.action(for: job, options: arguments.options) { Task.isCancelled }
            } catch {
                return .failure(error)
            }
            if let pin = job.pin {
                if let first = firstByPin[pin], first != job.destination {
                    switch action {
                    case .download, .resume: action = .copy(of: first)
                    case .alreadyComplete, .fromCache, .copy: break
                    }
                } else {
                    firstByPin[pin] = firstByPin[pin] ?? job.destination
                }
            }
            let pin = job.pin.map { "\($0)" }
            // As given: an s3:// object as s3://, not its endpoint's URL.
            let urls = (try? job.urls.get())?.map(\.redacted) ?? job.mirrors.map(Redaction.url)
            if arguments.json {
                output.standardOutput(DryRunReport(job: job, urls: urls, pin: pin, action: action).line() + "\n")
            } else {
                let mirrors = urls.count > 1 ? " (+\(urls.count - 1) mirrors)" : ""
                output.standardOutput(
                    Printable.text(
                        "\(action.description): \(job.destination) <- \(urls[0])\(mirrors), \(pin ?? "no pin")"
                    ) + "\n"
                )
            }
        }
        return .success(())
    }

    /// The exit status of one file's result: its error's, or 128 + the signal for a cancellation.
    static func exitStatus(of result: FetchResult, signal: Int32?) -> Int32 {
        guard let error = result.error else { return 0 }
        return error.code == .cancelled ? 128 + (signal ?? SIGINT) : error.code.exitStatus
    }

    /// How serious an exit status is when many files end differently: an interruption first,
    /// then wrong bytes (9), then what needs a person (2, 5, 6, 7, 3, 10), then what a rerun may
    /// fix (8, 4), then anything else (1), then success.
    static func severity(of status: Int32) -> Int {
        let order: [Int32] = [0, 1, 4, 8, 10, 3, 7, 6, 5, 2, 9, 129, 130, 143]
        return order.firstIndex(of: status) ?? 1
    }
}
