import Foundation
import PinFetch
import Testing

@testable import PinFetchCLI

/// Every entry of ``OptionTable``, driven from the table itself: each parses in each of its
/// spellings and does something, repeats only when it says so, and the errors of a missing
/// value, a value given to a flag and an unknown option are the typed values with the words
/// pinfetch has always printed.
struct OptionTableTests {
    static let url = "http://h.test/dir/file.bin"
    static let sha256 = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"

    /// A value an option takes, and what else a command line needs for that option to be valid.
    struct Sample {
        var value: String?
        var context = [OptionTableTests.url]
        var environment: [String: String] = [:]
    }

    /// A sample for each option, by long spelling; files it names are made in `directory`.
    static func samples(in directory: String) throws -> [String: Sample] {
        let certificate = "\(directory)/ca.pem"
        let clientPEM = "\(directory)/client.pem"
        let netrc = "\(directory)/netrc"
        try Fixtures.certificatePEM.write(
            toFile: certificate,
            atomically: true,
            encoding: .utf8
        )
        // A certificate with its key in one file, as --cert takes it.
        try (Fixtures.certificatePEM + Fixtures.privateKeyPEM).write(
            toFile: clientPEM,
            atomically: true,
            encoding: .utf8
        )
        try "machine h.test login u password p\n".write(toFile: netrc, atomically: true, encoding: .utf8)
        let valued: [String: String] = [
            "--output": "out.bin", "--directory-prefix": "d", "--jobs": "4", "--max-connections-per-host": "2",
            "--segments": "4", "--segment-size": "1M", "--checksum-file": "SUMS",
            "--hashed-mirror": "https://m.test/{algo}/{hex}", "--cache-dir": "/cache",
            "--remote-cache": "https://c.test/", "--remote-cache-header": "X-A: 1", "--remote-cache-timeout": "2",
            "--sha256": Self.sha256, "--checksum": "sha512:" + String(repeating: "ab", count: 64), "--retries": "3",
            "--retry-delay": "0.5", "--connect-timeout": "5", "--stall-timeout": "7", "--lock-timeout": "9",
            "--max-filesize": "1M", "--header": "X-A: 1", "--user": "u:p", "--netrc-file": netrc,
            "--credential-helper": "example.com=/bin/true", "--credential-helper-timeout": "3",
            "--cacert": certificate, "--cert": clientPEM, "--proxy": "http://p.test:3128", "--noproxy": "*",
            "--max-time": "60", "--limit-rate": "1M", "--continue-at": "-", "--output-dir": "d", "--retry": "3",
            "--tries": "3", "--user-agent": "ua/1", "--proxy-user": "u:p", "--max-redirs": "3",
            "--max-redirect": "3",
        ]
        var samples = valued.mapValues { Sample(value: $0) }
        for option in OptionTable.all where !option.takesValue { samples[option.long] = Sample() }
        // curl's -s needs a file to write to (curl alone writes to standard output).
        samples["--silent"] = Sample(context: [Self.url, "-O"])
        samples["--no-progress-meter"] = Sample(context: [Self.url, "-O"])
        samples["--input-file"] = Sample(value: "M", context: [])
        samples["--base-url"] = Sample(value: "https://b.test/", context: ["-i", "SUMS"])
        samples["--include"] = Sample(value: "linux/*", context: ["-i", "M"])
        samples["--exclude"] = Sample(value: "*.sig", context: ["-i", "M"])
        samples["--shard"] = Sample(value: "0/2", context: ["-i", "M"])
        samples["--shard-count"] = Sample(
            value: "3",
            context: ["-i", "M", "--shard", "auto"],
            environment: ["JOB_COMPLETION_INDEX": "1"]
        )
        samples["--signature"] = Sample(
            value: "sig",
            context: [Self.url, "--checksum-file", "S", "--trusted-key", "k"]
        )
        samples["--trusted-key"] = Sample(value: "k", context: [Self.url, "--checksum-file", "S"])
        samples["--key"] = Sample(value: clientPEM, context: [Self.url, "--cert", clientPEM])
        return samples
    }

    /// Each way to give `option` with `value`: `-o V`, `--output V`, `--output=V` (`-q`,
    /// `--quiet` for a flag).
    static func spellings(of option: OptionSpec, value: String?) -> [[String]] {
        guard let value else { return option.spellings.map { [$0] } }
        return option.spellings.map { [$0, value] } + [["\(option.long)=\(value)"]]
    }

    /// Everything a parse produced, comparable as text.
    static func parsed(_ arguments: [String], _ environment: [String: String]) throws(ArgumentError) -> String {
        var text = ""
        Swift.dump(try Arguments.parsing(arguments, environment: environment), to: &text)
        return text
    }

    /// The options that change what is parsed: all but curl's and wget's spellings of what
    /// pinfetch always does, and `-k`, which is refused.
    static let effective = OptionTable.all.map(\.long).filter {
        !OptionTable.alwaysDone.contains($0) && !OptionTable.alwaysRefused.contains($0)
    }

    @Test(arguments: Self.effective)
    func `every option parses in each of its spellings, and does something`(long: String) async throws {
        try await withTemporaryDirectory { directory in
            let option = try #require(OptionTable.option(spelled: long))
            let sample = try #require(try Self.samples(in: directory)[long], "no sample for \(long)")
            // Without the option the context may not parse (`--shard auto` needs `--shard-count`).
            let without = try? Self.parsed(sample.context, sample.environment)
            let given = Self.spellings(of: option, value: sample.value)
            #expect(given.count == option.spellings.count + (option.takesValue ? 1 : 0))
            let results = try given.map { try Self.parsed(sample.context + $0, sample.environment) }
            #expect(Set(results).count == 1, "\(given)")
            #expect(results.first != without, "\(long) changed nothing")
            // Given twice: a repeatable option adds to what it gave, another gives the same or is refused.
            var twice: String?
            do throws(ArgumentError) {
                twice = try Self.parsed(sample.context + given[0] + given[0], sample.environment)
            } catch {
                twice = nil
            }
            if option.repeatable {
                #expect(twice != nil && twice != results.first, "\(long) twice")
            } else {
                #expect(twice == nil || twice == results.first, "\(long) twice")
            }
        }
    }

    @Test func `the table holds each spelling once, long as --name and short as -x`() {
        let spellings = OptionTable.all.flatMap(\.spellings)
        #expect(Set(spellings).count == spellings.count)
        for option in OptionTable.all {
            #expect(
                option.long.hasPrefix("--") && option.long.count > 3 && !option.long.contains("="),
                "\(option.long)"
            )
            // One letter, but wget's -nc.
            if let short = option.short {
                #expect((short.count == 2 || short == "-nc") && short.hasPrefix("-"), "\(short)")
            }
            #expect(option.helpRows.allSatisfy { !$0.lines.isEmpty }, "\(option.long) has no help")
        }
    }

    /// The typed error of `arguments`, and the message `pinfetch` exits 2 with.
    static func expect(
        _ arguments: [String],
        throws expected: ArgumentError,
        saying message: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let error = #expect(throws: ArgumentError.self, sourceLocation: sourceLocation) {
            try Arguments.parsing(arguments, environment: [:])
        }
        #expect(error == expected, sourceLocation: sourceLocation)
        #expect(error?.message == message, sourceLocation: sourceLocation)
        let usage = #expect(throws: PinFetchError.self, sourceLocation: sourceLocation) {
            try Arguments.parse(arguments, environment: [:])
        }
        #expect(usage?.code == .usage && usage?.code.exitStatus == 2, sourceLocation: sourceLocation)
        #expect(usage?.message == message, sourceLocation: sourceLocation)
    }

    @Test(arguments: OptionTable.all.filter(\.takesValue).flatMap(\.spellings))
    func `an option that takes a value, given last, is missing it`(spelling: String) {
        Self.expect([Self.url, spelling], throws: .missingValue(option: spelling), saying: "\(spelling) needs a value")
    }

    @Test(arguments: OptionTable.all.filter { !$0.takesValue }.map(\.long))
    func `a flag given a value is refused`(long: String) {
        Self.expect([Self.url, long + "=1"], throws: .takesNoValue(option: long), saying: "\(long) takes no value")
        Self.expect([Self.url, long + "="], throws: .takesNoValue(option: long), saying: "\(long) takes no value")
    }

    @Test(arguments: ["--bogus", "-y", "-yq", "--j", "-o=a"])
    func `an option not in the table is unknown`(spelling: String) {
        Self.expect(
            [Self.url, spelling],
            throws: .unknownOption(spelling),
            saying: "unknown option \(spelling) (see --help)"
        )
    }

    @Test(arguments: ["--Output", "---output", "--output-", "--outptu"])
    func `a near miss of a long option is unknown, naming the option it is near`(spelling: String) {
        Self.expect(
            [Self.url, spelling],
            throws: .unknownOption(spelling),
            saying: "unknown option \(spelling) (did you mean --output? see --help)"
        )
    }

    @Test func `an unknown long option with a value is an unknown option, not a flag given a value`() {
        Self.expect(
            [Self.url, "--bogus=1"],
            throws: .unknownOption("--bogus"),
            saying: "unknown option --bogus (see --help)"
        )
    }
}
