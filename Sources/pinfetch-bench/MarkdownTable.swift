/// A Markdown table, columns right-aligned except the first.
struct MarkdownTable {
    var header: [String]
    var rows: [[String]] = []

    init(_ header: [String]) {
        self.header = header
    }

    mutating func add(_ row: [String]) {
        self.rows.append(row)
    }

    func rendered() -> String {
        let all = [self.header] + self.rows
        let widths = self.header.indices.map { column in all.map { $0[column].count }.max() ?? 3 }
        func line(_ cells: [String]) -> String {
            let padded = cells.enumerated().map { column, cell in
                let padding = String(repeating: " ", count: widths[column] - cell.count)
                return column == 0 ? cell + padding : padding + cell
            }
            return "| " + padded.joined(separator: " | ") + " |"
        }
        let rule = widths.enumerated().map { column, width in
            column == 0
                ? ":" + String(repeating: "-", count: max(width - 1, 2))
                : String(repeating: "-", count: max(width - 1, 2)) + ":"
        }
        return ([line(self.header), "|" + rule.map { " \($0) " }.joined(separator: "|") + "|"] + self.rows.map(line))
            .joined(separator: "\n")
    }
}
