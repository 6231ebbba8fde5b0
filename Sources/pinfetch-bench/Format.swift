import Foundation

/// Number formatting for the tables.
enum Format {
    static func fixed(_ value: Double, _ digits: Int = 2) -> String {
        value.isFinite ? String(format: "%.\(digits)f", value) : "-"
    }

    static func seconds(_ samples: Samples) -> [String] {
        [self.fixed(samples.median, 3), self.fixed(samples.minimum, 3), self.fixed(samples.maximum, 3)]
    }

    static func ratio(_ value: Double) -> String {
        value.isFinite ? String(format: "%.2fx", value) : "-"
    }

    static func mebibytes(_ bytes: Double) -> String {
        self.fixed(bytes / 1_048_576, 1)
    }
}
