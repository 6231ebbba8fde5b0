// libFuzzer target for WWW-Authenticate challenges, oci:// URLs and artifact manifests (built by .ci/fuzz, not by SwiftPM).
import Foundation

@testable import PinFetchFuzzParsers

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzChallenge(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    for challenge in AuthenticationChallenge.parse(text) {
        precondition(!challenge.scheme.isEmpty && challenge.scheme == challenge.scheme.lowercased())
    }
    if let location = try? OCILocation("oci://" + text) {
        precondition(location.digestHex.map { $0.utf8.count == 64 } ?? location.isManifest)
        precondition(!location.repository.isEmpty && (try? OCILocation(location.text)) == location)
    }
    if let manifest = try? ArtifactManifest(parsing: Array(UnsafeBufferPointer(start: data, count: size)), shown: "x") {
        precondition(!manifest.files.isEmpty && manifest.untitled >= 0)
        precondition(manifest.files.allSatisfy { $0.digestHex.utf8.count == 64 && $0.size >= 0 })
    }
    return 0
}
