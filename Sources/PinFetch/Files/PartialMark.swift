/// The extended attribute `user.pinfetch.partial` that a download sets on the partial it
/// creates, holding its destination's file name (<doc:ResumeAndCheckpoints#Whose-file-is-it>).
///
/// A `.part` path may hold a file pinfetch did not write for this destination: the verified
/// output of another download named `x.part`, or a user's file. A partial without a checkpoint
/// (a run killed in its first moments) and such a file look alike but for this mark, so only a
/// marked (or checkpointed) partial is emptied or removed. The mark is taken off once the file
/// is placed (``Placement``): a file placed as `x` carries at most the name `x`, which is no
/// other destination's, so it never passes for a partial. Where the file system has no
/// user extended attributes, nothing can be told apart and partials are taken as before.
enum PartialMark {
    private static let attribute = "user.pinfetch.partial"

    /// What a path carries.
    enum Found: Equatable {
        /// The mark, naming the destination (its last path component) the partial was made for.
        case partial(of: String)
        /// No mark (or the path cannot be read).
        case none
        /// The file system keeps no user extended attributes.
        case unsupported
    }

    /// Marks the open file `fd` as the partial of `destination` (its last path component is
    /// kept). A failure is ignored: the file is then taken as one without the mark.
    static func set(_ fd: Int32, destination: String) {
        ExtendedAttribute.set(Self.attribute, to: Array(Text.lastPathComponent(destination).utf8), on: fd)
    }

    /// Takes the mark off the open file `fd`, if it has one.
    static func remove(_ fd: Int32) {
        ExtendedAttribute.remove(Self.attribute, from: fd)
    }

    /// The mark on `path`, not following a symbolic link.
    static func read(_ path: String) -> Found {
        switch ExtendedAttribute.read(Self.attribute, at: path, limit: 256) {
        case .bytes(let name): .partial(of: String(decoding: name, as: UTF8.self))
        case .absent: .none
        case .unsupported: .unsupported
        }
    }
}
