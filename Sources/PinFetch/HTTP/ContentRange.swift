/// A parsed `Content-Range` header of a `206` or `416` answer (RFC 9110 §14.4).
///
/// `bytes 397312-1048575/1048576` has `first` 397312, `last` 1048575 and `completeLength`
/// 1048576; `bytes */1048576` (an unsatisfied range, sent with `416`) has no `first`/`last`.
/// All values are byte offsets or lengths, 64-bit. Pure Swift, fuzzable on its own.
struct ContentRange: Hashable, Sendable {
    /// First byte offset of the range, inclusive; `nil` for `bytes */N`.
    var first: Int64?
    /// Last byte offset of the range, inclusive; `nil` for `bytes */N`.
    var last: Int64?
    /// The representation's length in bytes, or `nil` when the server sent `*`.
    var completeLength: Int64?

    /// Parses a header value; `nil` for anything malformed, a unit other than `bytes`, a range
    /// with `last < first`, or one that ends at or past its complete length.
    init?(_ value: some StringProtocol) {
        var text = Substring(value).drop(while: { $0 == " " || $0 == "\t" })
        guard text.lowercased().hasPrefix("bytes ") else { return nil }
        text = text.dropFirst(6).drop(while: { $0 == " " })
        while let end = text.last, end == " " || end == "\t" { text = text.dropLast() }
        guard let slash = text.firstIndex(of: "/") else { return nil }
        let range = text[..<slash]
        let complete = text[text.index(after: slash)...]
        if complete == "*" {
            self.completeLength = nil
        } else {
            guard let length = Self.number(complete) else { return nil }
            self.completeLength = length
        }
        if range == "*" {
            guard self.completeLength != nil else { return nil }  // "bytes */*" says nothing
            self.first = nil
            self.last = nil
            return
        }
        guard let dash = range.firstIndex(of: "-"),
            let first = Self.number(range[..<dash]),
            let last = Self.number(range[range.index(after: dash)...]),
            first <= last
        else { return nil }
        if let length = self.completeLength, last >= length { return nil }
        self.first = first
        self.last = last
    }

    /// The number of bytes the range covers, or `nil` for `bytes */N`.
    var count: Int64? {
        guard let first = self.first, let last = self.last else { return nil }
        return last - first + 1
    }

    /// 1 to 18 decimal digits (so it fits an `Int64` with no overflow check).
    private static func number(_ text: Substring) -> Int64? {
        guard !text.isEmpty, text.count <= 18, text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
        return Int64(text)
    }
}
