import Foundation
import PinFetch

/// Turns the command line into the files to fetch: one file from the URLs given (mirrors of
/// it), or many from `-i` (DESIGN.md, "Many files").
enum JobPlan {
    /// The jobs, in order.
    /// - Throws: ``PinFetchError/Code/usage`` for anything about the input that is wrong, before
    ///   any file is created.
    static func jobs(for arguments: Arguments) async throws(PinFetchError) -> [FetchJob] {
        let destination = try arguments.destination()
        var pin = arguments.pin
        if let source = arguments.checksumFile {
            let file = try ChecksumFile(parsing: await Self.load(source, arguments))
            pin = try file.pin(for: (destination as NSString).lastPathComponent)
        }
        return [FetchJob(mirrors: arguments.urls, destination: destination, pin: pin)]
    }

    /// The bytes of a small input file given as a path or an `http(s)` URL (at most 16 MiB).
    /// - Throws: ``PinFetchError/Code/usage`` when it cannot be read or fetched.
    static func load(_ source: String, _ arguments: Arguments) async throws(PinFetchError) -> [UInt8] {
        let lower = source.lowercased()
        guard lower.hasPrefix("http://") || lower.hasPrefix("https://") else {
            guard let data = FileManager.default.contents(atPath: source), data.count <= 16 << 20 else {
                throw PinFetchError(.usage, "cannot read \(source)")
            }
            return [UInt8](data)
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pinfetch-\(UUID().uuidString)")
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw PinFetchError(.fileIO, "cannot create \(directory.path)")
        }
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("input").path
        var options = arguments.options
        options.progress = nil
        let result = await Fetcher(options: options).run(source, to: path)
        if let error = result.error {
            throw PinFetchError(error.code, "cannot fetch \(source): \(error.message)", underlying: error.underlying)
        }
        guard let data = FileManager.default.contents(atPath: path), data.count <= 16 << 20 else {
            throw PinFetchError(.usage, "\(source) is not a small file")
        }
        return [UInt8](data)
    }
}
