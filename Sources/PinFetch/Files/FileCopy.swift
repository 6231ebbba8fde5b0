@preconcurrency import Glibc

/// An independent copy of one open file into another, for the cache (the cache holds
/// copies, not aliases).
///
/// In order of preference: a reflink (`ioctl(FICLONE)`, `ioctl_ficlone(2)`: the two files share
/// extents until either is written, on Btrfs, XFS and the like), then `copy_file_range(2)` (the
/// kernel copies without a user-space buffer, and may do it server-side on NFS), then `pread` and
/// `pwrite`. Never a hard link: a later `chmod` or edit of one file never shows in the other.
enum FileCopy {
    /// How the bytes were copied.
    enum Method: Equatable, Sendable {
        /// The two files share extents (`FICLONE`).
        case reflink
        /// The kernel copied the bytes (`copy_file_range`), or `pread`/`pwrite` did.
        case copy
    }

    /// Clones all of `source` into `destination` (both file descriptors), returning 0 or the
    /// `errno` of the failure. The seam through which tests make reflinks fail or succeed on a
    /// file system without them.
    typealias Clone = @Sendable (_ source: Int32, _ destination: Int32) -> Int32

    /// `ioctl(destination, FICLONE, source)`.
    static let ficlone: Clone = { source, destination in
        ioctl(destination, Self.ficloneRequest, source) == 0 ? 0 : errno
    }

    /// `FICLONE`, `_IOW(0x94, 9, int)` in `linux/fs.h` (a macro Swift does not import).
    private static let ficloneRequest: UInt = 0x4004_9409

    /// Copies the whole of `source` (its size when called) to `destination`, which must be empty.
    /// A reflink is tried first through `clone`; any failure of it falls back to a copy.
    /// - Returns: How the bytes were copied.
    /// - Throws: ``PinFetchError/Code/fileIO`` when reading or writing fails.
    /// - Throws: also ``PinFetchError/Code/cancelled`` once `isCancelled` says so (asked between
    ///   pieces of at most 64 MiB).
    static func copy(
        from source: PartialFile,
        to destination: PartialFile,
        clone: Clone = Self.ficlone,
        isCancelled: () -> Bool = { false }
    ) throws(PinFetchError) -> Method {
        let size = try source.size()
        if size > 0, clone(source.descriptor, destination.descriptor) == 0 { return .reflink }
        var offset = try Self.copyInKernel(from: source, to: destination, size: size, isCancelled: isCancelled)
        guard offset < size else { return .copy }
        // copy_file_range refused (another file system type, an old kernel): copy by hand.
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        while offset < size {
            if isCancelled() { throw PinFetchError(.cancelled, "cancelled while copying \(source.path)") }
            let count = try source.read(into: buffer, at: offset)
            if count == 0 { break }  // the source shrank: the copy is shorter, and its hash says so
            try destination.write(UnsafeRawBufferPointer(rebasing: buffer[..<count]), at: offset)
            offset += Int64(count)
        }
        return .copy
    }

    /// `copy_file_range` from byte 0 until `size` bytes are copied, the source ends, or the
    /// call is refused (`EXDEV`, `ENOSYS`, `EINVAL`, `EOPNOTSUPP`); returns the bytes copied.
    private static func copyInKernel(
        from source: PartialFile,
        to destination: PartialFile,
        size: Int64,
        isCancelled: () -> Bool
    ) throws(PinFetchError) -> Int64 {
        guard let copyFileRange = Self.copyFileRange else { return 0 }
        var input = off_t(0)
        var output = off_t(0)
        while Int64(input) < size {
            if isCancelled() { throw PinFetchError(.cancelled, "cancelled while copying \(source.path)") }
            let piece = Int(min(size - Int64(input), 64 << 20))
            let count = copyFileRange(source.descriptor, &input, destination.descriptor, &output, piece, 0)
            if count > 0 { continue }
            if count == 0 { break }
            switch errno {
            case EINTR: continue
            case EXDEV, ENOSYS, EINVAL, EOPNOTSUPP, EBADF: return Int64(input)
            default: throw FileSystem.error("cannot copy to", destination.path)
            }
        }
        return Int64(input)
    }

    private typealias CopyFileRange =
        @convention(c) (Int32, UnsafeMutablePointer<off_t>?, Int32, UnsafeMutablePointer<off_t>?, Int, UInt32) -> Int

    /// glibc's `copy_file_range` (declared only under `_GNU_SOURCE`, so Swift's Glibc module
    /// does not import it), looked up once; `nil` on a C library without it.
    private static let copyFileRange: CopyFileRange? = {
        guard let symbol = dlsym(nil, "copy_file_range") else { return nil }
        return unsafeBitCast(symbol, to: CopyFileRange.self)
    }()
}
