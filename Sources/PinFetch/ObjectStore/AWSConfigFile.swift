import FoundationEssentials

/// One of the AWS CLI's shared files, `~/.aws/config` or `~/.aws/credentials`: sections of
/// `name = value` lines (AWS SDKs and Tools Reference Guide, "Shared config and credentials
/// files"). A line that begins with blanks after `name =` with no value belongs to that
/// sub-section (`s3 =` then `  addressing_style = virtual`), kept as `name.sub`.
struct AWSConfigFile {
    /// The settings of each section, by the section's name as written (`default`, `profile ci`).
    private(set) var sections: [String: [String: String]] = [:]

    /// Reads `path`; a file that is missing or cannot be read is empty (the CLI's reading too).
    init(path: String) {
        let data = FileManager.default.contents(atPath: path).flatMap { $0.count <= 1 << 20 ? $0 : nil }
        self.init(text: data.map { String(decoding: $0, as: UTF8.self) } ?? "")
    }

    init(text: String) {
        // A byte order mark (an editor's) before the first section.
        let text = text.hasPrefix("\u{FEFF}") ? String(text.dropFirst()) : text
        var section: String?
        var parent: String?
        for raw in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            let line = raw.trimmingWhitespace()
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("["), line.hasSuffix("]") {
                section = String(String(line.dropFirst().dropLast()).trimmingWhitespace())
                parent = nil
                continue
            }
            guard let section, let equals = line.firstIndex(of: "=") else { continue }
            let name = String(line[..<equals].trimmingWhitespace()).lowercased()
            var value = String(line[line.index(after: equals)...].trimmingWhitespace())
            // An inline comment needs a blank before it (`region = x  # note`).
            if let comment = value.firstRange(of: " #") ?? value.firstRange(of: "\t#") {
                value = String(value[..<comment.lowerBound].trimmingWhitespace())
            }
            let indented = raw.first == " " || raw.first == "\t"
            if indented, let parent {
                self.sections[section, default: [:]][parent + "." + name] = value
            } else if value.isEmpty {
                parent = name
            } else {
                parent = nil
                self.sections[section, default: [:]][name] = value
            }
        }
    }

    /// The settings of `profile` in the config file: `[default]` or `[profile NAME]` (a bare
    /// `[NAME]` is taken too, as the CLI does for `default`).
    func profile(_ profile: String) -> [String: String] {
        if profile == "default" { return self.sections["default"] ?? self.sections["profile default"] ?? [:] }
        return self.sections["profile \(profile)"] ?? [:]
    }

    /// The settings of `profile` in the credentials file: `[NAME]`.
    func credentials(_ profile: String) -> [String: String] { self.sections[profile] ?? [:] }
}
