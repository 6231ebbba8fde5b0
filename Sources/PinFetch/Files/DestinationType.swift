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
            var target = stat()
            guard stat(path, &target) == 0, target.st_mode & S_IFMT != S_IFREG else { return nil }
            return "\(path) is a symbolic link to a \(Self.name(of: target.st_mode & S_IFMT)): "
                + "pinfetch replaces only regular files; choose another output"
        }
        return "\(path) is a \(Self.name(of: type)): pinfetch replaces only regular files; choose another output"
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
