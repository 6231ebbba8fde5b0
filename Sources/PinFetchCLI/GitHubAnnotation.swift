import FoundationEssentials
@preconcurrency import Glibc

/// GitHub Actions workflow commands (`::error title=…::message`), so a failed file shows as an
/// annotation on the run's summary page, not only deep in its log.
enum GitHubAnnotation {
    /// `::error title=pinfetch: PATH::MESSAGE`, escaped as the runner expects: `%`, CR and LF in
    /// the message; also `:` and `,` in the title.
    static func error(path: String, message: String) -> String {
        "::error title=\(Self.property("pinfetch: \(path)"))::\(Self.data(message))"
    }

    private static func data(_ text: String) -> String {
        text.replacing("%", with: "%25").replacing("\r", with: "%0D")
            .replacing("\n", with: "%0A")
    }

    private static func property(_ text: String) -> String {
        Self.data(text).replacing(":", with: "%3A").replacing(",", with: "%2C")
    }
}
