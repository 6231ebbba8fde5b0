import Foundation
@preconcurrency import Glibc

// pinfetch-bench: the project's benchmark. It drives the built `pinfetch` binary as a child
// process and never imports the library (see `BenchOptions.help`).

let status: Int32
do {
    let options = try BenchOptions(parsing: Array(CommandLine.arguments.dropFirst()))
    if options.showHelp {
        print(BenchOptions.help)
        status = 0
    } else {
        try Benchmark(options: options).run()
        status = 0
    }
} catch {
    while ChildRegistry.shared.isStopping { pause() }  // the signal handler exits
    FileHandle.standardError.write(Data("pinfetch-bench: \(error.message)\n".utf8))
    status = 1
}
exit(status)
