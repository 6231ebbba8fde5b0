import Foundation
import Testing

/// The binary stays small: the library, the command line and the executable
/// import `FoundationEssentials`, never all of Foundation (which brings ICU's 30 MB of data into
/// a static build). CI also builds the static binary and fails above 17 MB.
struct BinarySizeTests {
    @Test(arguments: ["PinFetch", "PinFetchCLI", "pinfetch"])
    func `the shipped modules never import all of Foundation`(module: String) throws {
        let directory = ReadmeExampleTests.root.appending(path: "Sources/\(module)")
        let files = try FileManager.default.subpathsOfDirectory(atPath: directory.path)
            .filter { $0.hasSuffix(".swift") }
        #expect(!files.isEmpty)
        let pattern =
            /^\s*(@\w+\s+)*(public |internal |package )?import\s+(Foundation|FoundationNetworking|FoundationXML|FoundationInternationalization)\s*$/
        for file in files {
            let text = try String(contentsOf: directory.appending(path: file), encoding: .utf8)
            for line in text.split(separator: "\n") where line.wholeMatch(of: pattern) != nil {
                Issue.record("Sources/\(module)/\(file): \(line) (use FoundationEssentials)")
            }
        }
    }
}
