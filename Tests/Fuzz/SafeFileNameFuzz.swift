// libFuzzer target for the output-name sanitizer (built by .ci/fuzz, not by SwiftPM): whatever
// a manifest, a checksum file or a server sends, a name that passes stays inside its directory
// and shows as it is.
@testable import PinFetchFuzzParsers

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSafeFileName(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    func isHidden(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.generalCategory == .control || SafeFileName.isBidirectionalControl(scalar)
    }

    if let path = try? SafeFileName.resolve(text, in: "dir") {
        // Bytes, not Characters: "/" and a combining mark that follows are one Character.
        precondition(path.utf8.starts(with: "dir/".utf8), "left the directory: \(path)")
        let relative = path.utf8.dropFirst(4)
        precondition(!relative.isEmpty && relative.first != UInt8(ascii: "/") && relative.last != UInt8(ascii: "/"))
        for segment in relative.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false) {
            precondition(!segment.isEmpty, "an empty segment in \(path)")
            precondition(!segment.elementsEqual("..".utf8) && !segment.elementsEqual(".".utf8), "a dot segment")
            precondition(segment.count <= SafeFileName.maximumSegmentBytes, "a segment past NAME_MAX")
        }
        precondition(!path.unicodeScalars.contains(where: isHidden), "a control or bidi character passed")
        precondition(!path.utf8.contains(UInt8(ascii: "\\")), "a backslash passed")
    }

    for value in [text, "attachment; filename=\"\(text)\"", "attachment; filename*=UTF-8''\(text)"] {
        guard let name = SafeFileName.fromContentDisposition(value) else { continue }
        precondition(!name.isEmpty && name.utf8.count <= SafeFileName.maximumSegmentBytes)
        precondition(!name.unicodeScalars.contains { $0 == "/" || $0 == "\\" }, "a separator in \(name)")
        precondition(!name.unicodeScalars.contains(where: isHidden), "a control or bidi character passed")
        precondition(!name.hasPrefix(".") && name != "..", "a hidden or dot name: \(name)")
        precondition((try? SafeFileName.resolve(name, in: "dir")) == "dir/" + name, "a base name the resolver refuses")
    }

    let quoted = SafeFileName.quoted(text)
    precondition(!quoted.unicodeScalars.contains(where: isHidden), "an error message echoes a hidden character")
    return 0
}
