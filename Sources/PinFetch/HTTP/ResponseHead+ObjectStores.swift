import FoundationEssentials
@preconcurrency import Glibc

/// Digests that object stores publish for the whole stored object in their own fields, cross-
/// checked like `Repr-Digest`: a disagreement is exit 9 even without a pin. Never a
/// pin: they come from the server being checked.
extension ResponseHead {
    /// Amazon S3's `x-amz-checksum-sha256`: the base64 SHA-256 of the whole object, returned when
    /// the object was stored with that checksum (and the client asked, or the store always
    /// sends it). Only a full-object checksum counts: `x-amz-checksum-type` absent or
    /// `FULL_OBJECT`, and no `-N` part count after the base64 (a multipart upload's `COMPOSITE`
    /// checksum is a digest of the parts' digests, not of the bytes). `nil` otherwise, and when no
    /// value is 32 bytes of base64 (such values are skipped). Given twice with two values, on two lines or on one
    /// joined with a comma (as a proxy may join repeated fields, RFC 9110 §5.3), it is
    /// ``contradiction``: the server contradicts itself, and no bytes can match.
    var amazonSHA256: [UInt8]? {
        if let type = self.value("x-amz-checksum-type"), type.uppercased() != "FULL_OBJECT" { return nil }
        var found: Set<[UInt8]> = []
        for line in self.values("x-amz-checksum-sha256") {
            // A member that is no full-object checksum (a part count, not base64 of 32 bytes)
            // checks nothing, and the others are still checked.
            for member in line.split(separator: ",") {
                let value = member.trimmingWhitespace()
                guard !value.contains("-"), let bytes = Data(base64Encoded: String(value)), bytes.count == 32 else {
                    continue
                }
                found.insert([UInt8](bytes))
            }
        }
        return found.count > 1 ? Self.contradiction : found.first
    }

    /// Google Cloud Storage's `x-goog-hash` `md5=` member: the base64 MD5 of the stored object
    /// (the field may come more than once, `crc32c=` and `md5=` in one or in two). `nil` when the
    /// object is stored with a content coding (`x-goog-stored-content-encoding` other than
    /// `identity`: GCS may serve it decompressed, so the MD5 is of other bytes), when the answer
    /// has a content coding, for a composite object (no `md5=`), and for a member that is not 16
    /// bytes of base64; ``contradiction`` for two `md5=` members that disagree.
    var googleMD5: [UInt8]? {
        if let stored = self.value("x-goog-stored-content-encoding"), stored.lowercased() != "identity" { return nil }
        guard !self.hasContentCoding else { return nil }
        var found: Set<[UInt8]> = []
        for value in self.values("x-goog-hash") {
            for member in value.split(separator: ",") {
                let trimmed = member.trimmingWhitespace()
                guard trimmed.lowercased().hasPrefix("md5=") else { continue }
                guard let bytes = Data(base64Encoded: String(trimmed.dropFirst(4))), bytes.count == 16 else {
                    return nil
                }
                found.insert([UInt8](bytes))
            }
        }
        return found.count > 1 ? Self.contradiction : found.first
    }
}
