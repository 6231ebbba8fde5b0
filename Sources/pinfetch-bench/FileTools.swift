import Foundation
@preconcurrency import Glibc

/// File chores of the benchmark, in 1 MiB steps so no file is ever held in memory.
enum FileTools {
    static let chunkSize = 1 << 20

    /// Writes `bytes` bytes read from `/dev/urandom` to `path` (replacing it).
    static func createRandomFile(at path: String, bytes: Int) throws(BenchError) {
        let source = open("/dev/urandom", O_RDONLY | O_CLOEXEC)
        guard source >= 0 else { throw self.error("cannot open", "/dev/urandom") }
        defer { close(source) }
        let destination = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard destination >= 0 else { throw self.error("cannot create", path) }
        defer { close(destination) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: self.chunkSize, alignment: 16)
        defer { buffer.deallocate() }
        var remaining = bytes
        while remaining > 0 {
            let wanted = min(remaining, self.chunkSize)
            let count = read(source, buffer.baseAddress, wanted)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw self.error("cannot read", "/dev/urandom") }
            var written = 0
            while written < count {
                let result = write(destination, buffer.baseAddress! + written, count - written)
                if result < 0 && errno == EINTR { continue }
                guard result > 0 else { throw self.error("cannot write", path) }
                written += result
            }
            remaining -= count
        }
    }

    /// Reads `path` once and throws the bytes away, so later reads come from the page cache.
    static func prewarm(_ path: String) throws(BenchError) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw self.error("cannot open", path) }
        defer { close(fd) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: self.chunkSize, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let count = read(fd, buffer.baseAddress, self.chunkSize)
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { throw self.error("cannot read", path) }
            if count == 0 { return }
        }
    }

    /// The size of `path` in bytes, or `nil` when it does not exist.
    static func size(of path: String) -> Int? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Int(info.st_size)
    }

    /// Bytes available to an unprivileged user on the file system of `path`.
    static func availableBytes(at path: String) -> Int? {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return nil }
        return Int(info.f_bavail) * Int(info.f_frsize)
    }

    /// Removes `path` (a file or a directory tree) if it exists.
    static func remove(_ path: String) {
        try? FileManager.default.removeItem(atPath: path)
    }

    /// Creates `path` and its parents.
    static func makeDirectory(_ path: String) throws(BenchError) {
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            throw BenchError("cannot create directory \(path): \(error.localizedDescription)")
        }
    }

    /// Writes a small text file.
    static func writeText(_ text: String, to path: String) throws(BenchError) {
        do {
            try text.write(toFile: path, atomically: true, encoding: .utf8)
        } catch {
            throw BenchError("cannot write \(path): \(error.localizedDescription)")
        }
    }

    /// Reads a small text file ("" when it is missing).
    static func readText(_ path: String) -> String {
        (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    }

    /// The directory of the running executable (from `/proc/self/exe`).
    static func executableDirectory() -> String {
        let resolved =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? CommandLine.arguments[0]
        return (resolved as NSString).deletingLastPathComponent
    }

    /// The first executable called `name` on `PATH`.
    static func findOnPath(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/\(name)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }

    private static func error(_ what: String, _ path: String) -> BenchError {
        BenchError("\(what) \(path): \(String(cString: strerror(errno)))")
    }
}
