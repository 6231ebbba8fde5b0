/// In a batch, a file pinned like one an earlier entry already verified is a copy of that file,
/// checked against the pin like a cache entry, instead of a second download of the same bytes
/// (and a second upload to a remote cache). A file that no longer holds them (changed since)
/// only costs a warning: the next source is asked.
struct SiblingSource: Source {
    /// The earlier entry's verified file.
    let path: String

    func place(_ context: SourceContext) throws(PinFetchError) -> SourceAnswer {
        guard let pin = context.pin, self.path != context.destination else { return .passed }
        // Never through a link, nor a FIFO or a device put there since.
        guard let entry = try? PartialFile(path: self.path, readOnly: true) else {
            context.reporter.warn("\(self.path), pinned the same, is no longer a regular file: downloading this file")
            return .passed
        }
        let (placed, hashed, digest) = try VerifiedCopy(context: context, pin: pin).place(
            entry,
            clone: FileCopy.ficlone,
            named: "the batch's file"
        ) {
            context.reporter.warn(
                "\(self.path), pinned the same, no longer holds the pinned bytes: downloading this file"
            )
        }
        guard let size = placed else { return SourceAnswer(outcome: .passed, rehashedBytes: hashed) }
        context.reporter.decide("copied from \(self.path), pinned the same earlier in this batch: no request")
        return SourceAnswer(
            outcome: .placed(size: size, digest: digest),
            status: .alreadyComplete,
            cache: .local,
            rehashedBytes: hashed
        )
    }
}
