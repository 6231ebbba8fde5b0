/// The keys given with `--trusted-key`: minisign or signify public keys, and
/// OpenPGP public keys (ASCII-armoured or binary), kept as one binary keyring for `gpgv`.
public struct TrustedKeys: Sendable {
    let minisign: [MinisignPublicKey]
    /// The OpenPGP keys' packets, concatenated: a keyring `gpgv --keyring` reads.
    let openPGP: [UInt8]

    /// Reads each key file's bytes.
    /// - Parameter files: Each file's name (for messages) and bytes.
    /// - Throws: ``PinFetchError/Code/usage`` for a file that is neither key kind, naming it.
    public init(files: [(name: String, bytes: [UInt8])]) throws(PinFetchError) {
        var minisign: [MinisignPublicKey] = []
        var openPGP: [UInt8] = []
        for file in files {
            do throws(PinFetchError) {
                if MinisignPublicKey.looksLike(file.bytes) {
                    minisign.append(try MinisignPublicKey(parsing: file.bytes))
                } else {
                    openPGP += try OpenPGPArmor.publicKeyPackets(file.bytes)
                }
            } catch {
                throw PinFetchError(.usage, "--trusted-key \(file.name): \(error.message)")
            }
        }
        self.minisign = minisign
        self.openPGP = openPGP
    }
}
