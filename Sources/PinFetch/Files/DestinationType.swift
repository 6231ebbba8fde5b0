@preconcurrency import Glibc

/// What may stand at a destination: nothing, a regular file, or a symbolic
/// link to a regular file or to nothing; the verified file replaces it with a `rename`, which
/// replaces a link itself and never writes through it. A directory, FIFO, socket or device, or
/// a link to one, is never replaced (run as root, `-o /dev/null` must not replace `/dev/null`).
package enum DestinationType {
    /// Why pinfetch will not write to `path`, as a one-line message; `nil` when it may.
    package static func refusal(_ path: String) -> String? {
        var named = stat()
        guard lstat(path, &named) == 0 else { return nil }  // nothing there yet
        let type = named.st_mode & S_IFMT
        if type == S_IFREG { return nil }
        if type == S_IFLNK {
            if let descriptor = Self.descriptorLink(path) {
                return "\(path) is a symbolic link to \(descriptor), a descriptor of the process: pinfetch "
                    + "replaces only regular files (for standard output give -o -)"
            }
            var target = stat()
            guard stat(path, &target) == 0, target.st_mode & S_IFMT != S_IFREG else { return nil }
            return "\(path) is a symbolic link to a \(Self.name(of: target.st_mode & S_IFMT)): "
                + "pinfetch replaces only regular files; choose another output"
        }
        return "\(path) is a \(Self.name(of: type)): pinfetch replaces only regular files; choose another output"
    }

    /// The first target on the chain of links from `path` (at most 8) that names a process's
    /// descriptor (`/proc/…/fd/N`, `/dev/fd/N`, `/dev/stdout`): what stands behind it is another
    /// file each time it is opened, and a rename would replace the link itself.
    private static func descriptorLink(_ path: String) -> String? {
        var current = path
        for _ in 0..<8 {
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let count = readlink(current, &buffer, buffer.count - 1)
            guard count > 0 else { return nil }
            var target = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if !target.hasPrefix("/") {
                let directory = current.lastIndex(of: "/").map { String(current[...$0]) } ?? "./"
                target = directory + target
            }
            if target.hasPrefix("/proc/") || target.hasPrefix("/dev/fd/")
                || ["/dev/stdout", "/dev/stderr", "/dev/stdin"].contains(target)
            {
                return target
            }
            current = target
        }
        return nil
    }

    private static func name(of type: mode_t) -> String {
        switch type {
        case S_IFDIR: return "directory"
        case S_IFIFO: return "FIFO"
        case S_IFSOCK: return "socket"
        case S_IFCHR: return "character device"
        case S_IFBLK: return "block device"
        default: return "special file"
        }
    }
}
