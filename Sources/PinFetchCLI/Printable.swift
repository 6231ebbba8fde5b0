import PinFetch

/// Text made safe to print on one terminal line: whatever a file name, a
/// URL or a server put in a message cannot start a line of its own, move the cursor, clear the
/// screen, or show itself other than it is.
enum Printable {
    /// `text` with C0 controls (newline included), DEL, C1 controls and bidirectional controls
    /// escaped as `\u{XX}`.
    static func text(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: Self.isUnsafe) else { return text }
        return String(
            text.unicodeScalars.map { scalar in
                Self.isUnsafe(scalar) ? "\\u{\(String(scalar.value, radix: 16, uppercase: true))}" : String(scalar)
            }
            .joined()
        )
    }

    private static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || SafeFileName.isBidirectionalControl(scalar)
    }
}
