import CXattr
@preconcurrency import Glibc

/// Extended attributes of the `user.` namespace (xattr(7)): small named values a file carries
/// with it through a rename. The only use of `CXattr`.
enum ExtendedAttribute {
    /// What reading an attribute found.
    enum Value: Equatable {
        /// The attribute's bytes.
        case bytes([UInt8])
        /// The file has no such attribute, or cannot be read.
        case absent
        /// The file system keeps no user extended attributes (`ENOTSUP`).
        case unsupported
    }

    /// Sets `name` to `value` on the open file `fd`; `false` when the file system refused.
    @discardableResult
    static func set(_ name: String, to value: [UInt8], on fd: Int32) -> Bool {
        value.withUnsafeBytes { fsetxattr(fd, name, $0.baseAddress, $0.count, 0) } == 0
    }

    /// Removes `name` from the open file `fd`, if it is there.
    static func remove(_ name: String, from fd: Int32) {
        _ = fremovexattr(fd, name)
    }

    /// The value of `name` on the open file `fd`, of at most `limit` bytes.
    static func read(_ name: String, on fd: Int32, limit: Int = 4096) -> Value {
        var value = [UInt8](repeating: 0, count: limit)
        let count = value.withUnsafeMutableBytes { fgetxattr(fd, name, $0.baseAddress, $0.count) }
        guard count >= 0 else { return errno == ENOTSUP || errno == EOPNOTSUPP ? .unsupported : .absent }
        return .bytes(Array(value[..<count]))
    }

    /// The value of `name` on `path`, of at most `limit` bytes, not following a symbolic link.
    static func read(_ name: String, at path: String, limit: Int = 4096) -> Value {
        var value = [UInt8](repeating: 0, count: limit)
        let count = value.withUnsafeMutableBytes { lgetxattr(path, name, $0.baseAddress, $0.count) }
        guard count >= 0 else { return errno == ENOTSUP || errno == EOPNOTSUPP ? .unsupported : .absent }
        return .bytes(Array(value[..<count]))
    }
}
