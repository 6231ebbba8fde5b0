import FoundationEssentials
@preconcurrency import Glibc
import PinFetch

/// The `--json` line for one file (the command-line article, "JSON result"), keys in snake_case; the
/// digest's key is its algorithm (`sha256` or `sha512`).
struct JSONReport: Encodable {
    let result: FetchResult
    /// The exit status of this file's outcome (it differs from the code's for a SIGTERM).
    let exitStatus: Int32
    /// For the fetch of an input file given by URL: `checksum-file` or `manifest` (on failure),
    /// `artifact` (an artifact's manifest, always); its line has
    /// `input` set to that and `path` null (the file is read, never saved). `nil` for a file.
    var input: String? = nil

    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ string: String) { self.stringValue = string }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    private struct KeptPartial: Encodable {
        let path: String
        let bytes: Int64
    }

    private struct MirrorReport: Encodable {
        let url: String
        let outcome: String
    }

    private struct ErrorReport: Encodable {
        let kind: String
        let message: String
        let exit_code: Int32
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(self.result.url, forKey: Key("url"))
        if let input = self.input {
            try container.encode(input, forKey: Key("input"))
            try container.encodeNil(forKey: Key("path"))  // a temporary, removed by now
        } else {
            try container.encode(self.result.path, forKey: Key("path"))
        }
        try container.encode(self.result.status.rawValue, forKey: Key("status"))
        try container.encode(self.result.bytes, forKey: Key("bytes"))
        try container.encode(self.result.digest, forKey: Key(self.result.algorithm.rawValue))
        try container.encode(self.result.resumedFrom, forKey: Key("resumed_from"))
        try container.encode(self.result.downloadedBytes, forKey: Key("downloaded_bytes"))
        try container.encode(self.result.rehashedBytes, forKey: Key("rehashed_bytes"))
        try container.encode(self.result.restarts, forKey: Key("restarts"))
        try container.encode(self.result.attempts, forKey: Key("attempts"))
        try container.encode(self.result.fromCache, forKey: Key("from_cache"))
        try container.encode(
            self.result.cache?.rawValue ?? (self.result.fromCache ? "local" : nil),
            forKey: Key("cache")
        )
        try container.encode((self.result.elapsedSeconds * 1000).rounded() / 1000, forKey: Key("elapsed_s"))
        try container.encode(self.result.source, forKey: Key("source"))
        try container.encode(
            self.result.mirrors.map { MirrorReport(url: $0.url, outcome: $0.outcome) },
            forKey: Key("mirrors")
        )
        // An input file's partial was in a temporary directory, removed with it.
        try container.encode(
            self.input == nil ? self.result.partial.map { KeptPartial(path: $0.path, bytes: $0.bytes) } : nil,
            forKey: Key("partial")
        )
        if let error = self.result.error {
            let report = ErrorReport(kind: error.code.description, message: error.message, exit_code: self.exitStatus)
            try container.encode(report, forKey: Key("error"))
        }
    }

}

/// The `--dry-run --json` line for one file: `path`, `url`, `mirrors`, `pin` (`sha256:HEX` or
/// `null`), `action` (`already-complete`, `from-cache`, `copy`, `resume`, `download`) and
/// `resume_bytes` (bytes a resume would keep, else `null`).
struct DryRunReport: Encodable {
    let job: FetchJob
    let urls: [String]
    let pin: String?
    let action: DryRun.Action

    private enum CodingKeys: String, CodingKey {
        case path, url, mirrors, pin, action
        case resumeBytes = "resume_bytes"
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.job.destination, forKey: .path)
        try container.encode(self.urls[0], forKey: .url)
        try container.encode(self.urls, forKey: .mirrors)
        try container.encode(self.pin, forKey: .pin)
        let name: String
        var bytes: Int64?
        switch self.action {
        case .alreadyComplete: name = "already-complete"
        case .fromCache: name = "from-cache"
        case .resume(let kept):
            name = "resume"
            bytes = kept
        case .download: name = "download"
        case .copy: name = "copy"
        }
        try container.encode(name, forKey: .action)
        try container.encode(bytes, forKey: .resumeBytes)
    }

}

extension Encodable {
    /// One line of JSON, keys sorted, `/` unescaped (`--json`, `--dry-run --json`).
    func line() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(self) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }
}
