// libFuzzer target for the minisign / signify key and signature parsers and the OpenPGP
// armour and packet reader (built by .ci/fuzz, not by SwiftPM).
@testable import PinFetchFuzzParsers

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMinisign(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let key = try? MinisignPublicKey(parsing: bytes) {
        precondition(key.keyID.count == 8 && key.key.count == 32)
        precondition(key.keyIDText.count == 16)
    }
    if let signature = try? MinisignSignature(parsing: bytes) {
        precondition(signature.keyID.count == 8 && signature.signature.count == 64)
        if let trusted = signature.trusted { precondition(trusted.signature.count == 64) }
        if signature.algorithm == .prehashed { precondition(signature.trusted != nil) }
    }
    _ = MinisignPublicKey.looksLike(bytes)
    if let packets = try? OpenPGPArmor.publicKeyPackets(bytes) {
        precondition(!packets.isEmpty)
        let parsed = try? OpenPGPArmor.packets(packets)
        precondition(parsed?.first?.tag == 6)
    }
    _ = try? OpenPGPArmor.packets(bytes)
    return 0
}
