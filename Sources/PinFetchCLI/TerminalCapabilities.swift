@preconcurrency import Glibc

/// What standard error can show: bars redrawn in place only on a terminal
/// that moves its cursor (not `TERM=dumb`, not an unset `TERM`), colour only there and without
/// `NO_COLOR` (no-color.org), and every bar cut to the current width.
public struct TerminalCapabilities: Sendable {
    /// Bars redrawn with cursor moves; otherwise progress is sparse lines, as in a CI log.
    public var redraws: Bool
    /// SGR colour codes (an error line in red).
    public var colour: Bool
    /// The width in columns now (it changes with `SIGWINCH`).
    public var columns: @Sendable () -> Int

    public init(redraws: Bool, colour: Bool, columns: @escaping @Sendable () -> Int) {
        self.redraws = redraws
        self.colour = colour
        self.columns = columns
    }

    /// Standard error's capabilities (`isTerminal` overrides `isatty(2)`): `nil` when it is not a terminal, or one that cannot move
    /// its cursor (`TERM` unset, empty or `dumb`); the width from `TIOCGWINSZ` (80 when unknown).
    public static func standardError(
        environment: [String: String],
        isTerminal: Bool? = nil
    ) -> TerminalCapabilities? {
        let term = environment["TERM"] ?? ""
        guard isTerminal ?? (isatty(2) == 1), !term.isEmpty, term != "dumb" else { return nil }
        return TerminalCapabilities(
            redraws: true,
            colour: (environment["NO_COLOR"] ?? "").isEmpty,
            columns: { Self.width(of: 2) ?? 80 }
        )
    }

    /// The width of the terminal on `descriptor` in columns (`TIOCGWINSZ`), or `nil`.
    static func width(of descriptor: Int32) -> Int? {
        var size = winsize()
        guard ioctl(descriptor, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return nil }
        return Int(size.ws_col)
    }

    /// The columns `text` takes on a terminal: East Asian wide characters and most emoji take
    /// two, combining marks none, everything else one (`text` has no control characters:
    /// ``Printable``).
    static func displayWidth(_ text: some StringProtocol) -> Int {
        text.unicodeScalars.reduce(0) { $0 + Self.width(of: $1) }
    }

    /// The longest prefix of `text` that fits in `columns`, or `text` when it fits.
    static func cut(_ text: String, to columns: Int) -> String {
        var used = 0
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            let width = Self.width(of: scalar)
            guard used + width <= columns else { break }
            used += width
            out.append(scalar)
        }
        return String(out)
    }

    private static func width(of scalar: Unicode.Scalar) -> Int {
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format: return 0
        default: break
        }
        let wide: [ClosedRange<UInt32>] = [
            0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF,
            0xA000...0xA4CF, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60,
            0xFFE0...0xFFE6, 0x1F300...0x1F64F, 0x1F680...0x1F6FF, 0x1F900...0x1F9FF, 0x1FA70...0x1FAFF,
            0x20000...0x3FFFD,
        ]
        return wide.contains { $0.contains(scalar.value) } ? 2 : 1
    }
}
