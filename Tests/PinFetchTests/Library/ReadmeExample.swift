// The README's "Use the library" example, verbatim: ReadmeExampleTests checks that the two agree
// and runs it. Only `import PinFetch`, so it compiles against the public API alone.
import PinFetch

/// Fetches a pinned tarball, then two files at once; says why a download restarts or retries.
func fetchRelease(base: String, into directory: String, sha256: String) async throws(PinFetchError) -> [FetchResult] {
    var options = FetchOptions()
    options.retries = 3
    options.events = { event in
        switch event {
        case .restarted(let path, let reason):
            print("\(path): starting over from byte 0: \(reason)")
        case .retrying(let retry):
            let wait = Int((retry.delaySeconds * 1000).rounded())
            print("\(retry.path): \(retry.reason); trying \(retry.url) in \(wait) ms")
        case .warning(let path, let message):
            print("\(path): warning: \(message)")
        case .progress, .request, .response, .decision:
            break
        }
    }
    let fetcher = Fetcher(options: options)
    let tarball = try await fetcher.fetch(
        "\(base)/tool.tar.gz",
        to: "\(directory)/tool.tar.gz",
        verifying: try Pin(sha256Hex: sha256)
    )
    print("\(tarball.path): \(tarball.bytes) bytes, sha256 \(tarball.digest ?? "")")

    let jobs = ["NOTES.txt", "LICENSE"].map { name in
        FetchJob(mirrors: ["\(base)/\(name)"], destination: "\(directory)/\(name)")
    }
    let results = await fetcher.run(jobs, parallelism: 2) { index, result in
        print("\(jobs[index].destination): \(result.status.rawValue)")
    }
    return [tarball] + results
}
