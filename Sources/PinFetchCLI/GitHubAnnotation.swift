import Foundation

/// GitHub Actions workflow commands (`::error title=…::message`), so a failed file shows as an
/// annotation on the run's summary page, not only deep in its log (issue 11, point 8).
enum GitHubAnnotation {
    /// `::error title=pinfetch: PATH::MESSAGE`, escaped as the runner expects: `%`, CR and LF in
    /// the message; also `:` and `,` in the title.
    static func error(path: String, message: String) -> String {
        "::error title=\(Self.property("pinfetch: \(path)"))::\(Self.data(message))"
    }

    private static func data(_ text: String) -> String {
        text.replacingOccurrences(of: "%", with: "%25").replacingOccurrences(of: "\r", with: "%0D")
            .replacingOccurrences(of: "\n", with: "%0A")
    }

    private static func property(_ text: String) -> String {
        Self.data(text).replacingOccurrences(of: ":", with: "%3A").replacingOccurrences(of: ",", with: "%2C")
    }
}
