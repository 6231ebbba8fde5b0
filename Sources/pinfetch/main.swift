import PinFetchCLI

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

// A reader that closes the pipe early (`pinfetch -o - URL | head -c 10`) gives EPIPE, reported
// with exit 3, instead of a silent death by SIGPIPE.
signal(SIGPIPE, SIG_IGN)
let status = await CommandLineTool.run(Array(CommandLine.arguments.dropFirst()))
exit(status)
