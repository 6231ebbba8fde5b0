import PinFetchCLI

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

let status = await CommandLineTool.run(Array(CommandLine.arguments.dropFirst()))
exit(status)
