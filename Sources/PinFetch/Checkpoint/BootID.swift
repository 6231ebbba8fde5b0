@preconcurrency import Glibc

/// The kernel's identifier of the running boot, `/proc/sys/kernel/random/boot_id` (random(4)):
/// a fresh random UUID at every boot.
///
/// Bytes a process wrote but did not `fsync` live in the page cache until the kernel writes them
/// back; they are lost only when the page cache is: a power loss, a kernel crash, a reset — each
/// of which is a new boot. So a light checkpoint written in this boot describes bytes that are
/// still in the partial, whatever happened to the process that wrote them (a `kill -9`, an
/// out-of-memory kill, a crash): <doc:ResumeAndCheckpoints#The-rolling-hash-checkpoint>.
enum BootID {
    /// This boot's identifier, or `nil` where the kernel does not say (no `/proc`): then no light
    /// checkpoint is trusted without hashing its span again.
    static let current: String? = {
        guard let bytes = FileSystem.readSmallFile("/proc/sys/kernel/random/boot_id", limit: 64) else { return nil }
        let text = String(decoding: bytes, as: UTF8.self).filter { !$0.isWhitespace }
        return text.count == 36 ? text : nil
    }()
}
