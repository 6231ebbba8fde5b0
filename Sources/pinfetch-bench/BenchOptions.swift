import Foundation

/// The command line of `pinfetch-bench`.
struct BenchOptions {
    /// Rounds per case; each round runs pinfetch and its comparisons once.
    var rounds = 5
    /// The file of cases 1, 2 and 5 (MiB).
    var sizeMiB = 1024
    /// The larger file of case 3 (MiB).
    var largeMiB = 4096
    /// Case 4: how many files, and the size of each (KiB).
    var files = 500
    var fileKiB = 100
    /// The work directory; `nil` makes one under /tmp.
    var work: String?
    /// Keep the work directory (and its files) at the end.
    var keep = false
    /// The cases to run (1...10).
    var cases: Set<Int> = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
    /// The pinfetch binary; `nil` is `pinfetch` next to this executable.
    var pinfetch: String?
    var showHelp = false

    static let help = """
        USAGE: pinfetch-bench [options]

        Measures the pinfetch binary against curl, aria2c, sha256sum and openssl on loopback
        (nginx with sendfile, started on a free port) and prints Markdown tables of medians,
        with PASS/MISS for the project's targets. A missed target still exits 0; errors exit 1.

        It runs the release `pinfetch` next to its own executable (.build/release/pinfetch):
        `swift run -c release pinfetch-bench` builds both; after `swift build -c release`,
        run .build/release/pinfetch-bench. Needs /usr/sbin/nginx, curl, aria2c, openssl,
        sha256sum, and free disk in the work directory for the files plus one copy of the largest
        (about size + 2 × large MiB; checked first).

        Cases:
          1  SIZE MiB pinned: pinfetch vs curl -o && sync, curl -o, curl && sha256sum -c, aria2c --checksum
          2  resume from 90 % vs a full pinfetch download; rehashed_bytes
          3  pinfetch peak RSS for SIZE and LARGE MiB
          4  FILES files of KIB KiB with -j 8: pinfetch vs aria2c -j 8 -i, curl --parallel --parallel-max 8
             (followed by sync, and alone)
          5  CPU seconds (user+sys) per GiB: pinfetch vs openssl dgst -sha256
          6  64 MiB at 24 MiB/s, SIGKILL at 30 %: bytes the rerun keeps ÷ bytes in .part at the kill
          7  startup: pinfetch --version vs curl --version (100 runs each per round), and the binary's size
          8  case 4's files over HTTPS (HTTP/2 offered) through a relay adding a 50 ms round trip:
             pinfetch -j 64 vs curl --parallel --parallel-max 64 --http2, aria2c -j 16; TCP connections
          9  case 1's file at 20 MiB/s per connection: pinfetch --segments 8 vs --segments 1,
             aria2c -x 8 -s 8 --checksum, curl; then unthrottled, --segments 8 vs 1
          10 reruns over case 1's file in place: pinned vs openssl dgst -sha256 over it; unpinned,
             the body bytes received (a 304 to its condition)

        Options:
          --rounds N       rounds, each pairing pinfetch with its comparisons (default 5)
          --size-mib N     file size of cases 1, 2, 5 in MiB (default 1024)
          --large-mib N    larger file of case 3 in MiB (default 4096)
          --files N        number of files of case 4 (default 500)
          --file-kib N     size of each file of case 4 in KiB (default 100)
          --work DIR       work directory (default: a new directory under /tmp)
          --keep           keep the work directory and its files
          --only LIST      run only these cases, e.g. --only 1,5
          --pinfetch PATH  the pinfetch binary (default: next to this executable)
          -h, --help       this text
        """

    init() {}

    /// Parses `arguments` (without the program name); `--name=value` works too.
    init(parsing arguments: [String]) throws(BenchError) {
        var queue = arguments[...]
        while let argument = queue.popFirst() {
            var name = argument
            var inlineValue: String?
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            }
            func value() throws(BenchError) -> String {
                if let inlineValue { return inlineValue }
                guard let next = queue.popFirst() else { throw BenchError("\(name) needs a value") }
                return next
            }
            func number(minimum: Int) throws(BenchError) -> Int {
                let text = try value()
                guard let parsed = Int(text), parsed >= minimum else {
                    throw BenchError("\(name) takes a whole number ≥ \(minimum), not '\(text)'")
                }
                return parsed
            }
            switch name {
            case "-h", "--help": self.showHelp = true
            case "--rounds": self.rounds = try number(minimum: 1)
            case "--size-mib": self.sizeMiB = try number(minimum: 16)
            case "--large-mib": self.largeMiB = try number(minimum: 16)
            case "--files": self.files = try number(minimum: 1)
            case "--file-kib": self.fileKiB = try number(minimum: 1)
            case "--work": self.work = try value()
            case "--keep": self.keep = true
            case "--pinfetch": self.pinfetch = try value()
            case "--only":
                let text = try value()
                let parsed = text.split(separator: ",").map { Int($0.trimmingCharacters(in: .whitespaces)) }
                guard !parsed.isEmpty, parsed.allSatisfy({ $0.map { (1...10).contains($0) } ?? false }) else {
                    throw BenchError("--only takes case numbers 1 to 10 separated by commas, not '\(text)'")
                }
                self.cases = Set(parsed.compactMap { $0 })
            default: throw BenchError("unknown option '\(argument)' (see --help)")
            }
        }
    }
}
