import Foundation
import Testing

@testable import PinFetch

/// Validators (RFC 9110 §8.8): strong and weak ETags, strong Last-Modified, `If-Range`.
struct ValidatorTests {
    static let modified = "Sun, 06 Nov 1994 08:49:37 GMT"
    static let oneSecondLater = "Sun, 06 Nov 1994 08:49:38 GMT"

    @Test(arguments: [#""abc""#, #""""#, "\"a!#~\\\u{80}\"", #""d41d8cd98f00b204e9800998ecf8427e""#])
    func `a strong ETag goes into If-Range`(tag: String) {
        let validator = Validator(entityTag: tag, lastModified: nil)
        #expect(validator.entityTag == tag)
        #expect(validator.hasStrongEntityTag)
        #expect(validator.ifRangeValue == tag)
    }

    @Test(arguments: [#"W/"abc""#, #"W/"""#])
    func `a weak ETag never goes into If-Range, even with a strong Last-Modified`(tag: String) {
        let validator = Validator(entityTag: tag, lastModified: Self.modified, date: Self.oneSecondLater)
        #expect(validator.entityTag == tag)
        #expect(!validator.hasStrongEntityTag)
        #expect(validator.lastModifiedIsStrong)
        #expect(validator.ifRangeValue == nil)
    }

    @Test(arguments: [
        "abc", #""abc"#, #"abc""#, "\"", "", #""a b""#, #""a"b""#, #"w/"abc""#, "W/abc", #"W/"abc"#, "W/",
        #" "abc""#, "\"a\u{7F}\"",
    ])
    func `a malformed ETag counts as absent`(tag: String) {
        let alone = Validator(entityTag: tag, lastModified: nil)
        #expect(alone.entityTag == nil)
        #expect(!alone.hasStrongEntityTag)
        #expect(alone.ifRangeValue == nil)
        // Absent, so a strong Last-Modified is the validator.
        let dated = Validator(entityTag: tag, lastModified: Self.modified, date: Self.oneSecondLater)
        #expect(dated.entityTag == nil)
        #expect(dated.ifRangeValue == Self.modified)
    }

    @Test(arguments: [
        ("Sun, 06 Nov 1994 08:49:38 GMT", true),
        ("Sunday, 06-Nov-94 08:49:38 GMT", true),
        ("Mon, 07 Nov 1994 00:00:00 GMT", true),
        ("Thu, 01 Jan 2026 00:00:00 GMT", true),
        ("Sun, 06 Nov 1994 08:49:37 GMT", false),
        ("Sun, 06 Nov 1994 08:49:36 GMT", false),
        ("not a date", false),
        ("", false),
    ])
    func `Last-Modified is strong only when Date is at least one second later`(date: String, strong: Bool) {
        let validator = Validator(entityTag: nil, lastModified: Self.modified, date: date)
        #expect(validator.lastModified == Self.modified)
        #expect(validator.lastModifiedIsStrong == strong)
        #expect(validator.ifRangeValue == (strong ? Self.modified : nil))
    }

    @Test func `Last-Modified without a Date is not strong`() {
        let validator = Validator(entityTag: nil, lastModified: Self.modified)
        #expect(validator.lastModified == Self.modified)
        #expect(!validator.lastModifiedIsStrong)
        #expect(validator.ifRangeValue == nil)
    }

    @Test func `a Last-Modified in year 9999 is not strong against a 2026 Date`() {
        let validator = Validator(
            entityTag: nil,
            lastModified: "Fri, 31 Dec 9999 23:59:59 GMT",
            date: "Thu, 01 Jan 2026 00:00:00 GMT"
        )
        #expect(validator.lastModified != nil)
        #expect(!validator.lastModifiedIsStrong)
        #expect(validator.ifRangeValue == nil)
    }

    @Test(arguments: ["yesterday", "", "2/29/24 11:29 AM"])
    func `a Last-Modified that is not an HTTP-date counts as absent`(value: String) {
        let validator = Validator(entityTag: nil, lastModified: value, date: Self.oneSecondLater)
        #expect(validator.lastModified == nil)
        #expect(!validator.lastModifiedIsStrong)
        #expect(validator.ifRangeValue == nil)
    }

    @Test func `a strong ETag wins over a strong Last-Modified`() {
        let validator = Validator(entityTag: #""v1""#, lastModified: Self.modified, date: Self.oneSecondLater)
        #expect(validator.ifRangeValue == #""v1""#)
    }

    struct Comparison: Sendable, CustomTestStringConvertible {
        var label: String
        var mine: Validator
        var theirs: Validator
        var expected: Bool?
        var testDescription: String { self.label }
    }

    static func tag(_ value: String?, _ modified: String? = nil, date: String? = nil) -> Validator {
        Validator(entityTag: value, lastModified: modified, date: date)
    }

    /// A strong `Last-Modified`: `Date` is an hour later.
    static func strongDate(_ modified: String, tag value: String? = nil) -> Validator {
        Validator(entityTag: value, lastModified: modified, date: "Sun, 06 Nov 1994 09:49:37 GMT")
    }

    static let later = "Sun, 06 Nov 1994 09:00:00 GMT"
    static let md5 = #""d41d8cd98f00b204e9800998ecf8427e""#
    static let comparisons: [Comparison] = [
        Comparison(label: "same strong ETag", mine: Self.tag(#""a""#), theirs: Self.tag(#""a""#), expected: true),
        Comparison(label: "other strong ETag", mine: Self.tag(#""a""#), theirs: Self.tag(#""b""#), expected: false),
        Comparison(label: "now weak", mine: Self.tag(#""a""#), theirs: Self.tag(#"W/"a""#), expected: false),
        Comparison(label: "their ETag absent", mine: Self.tag(#""a""#), theirs: Self.tag(nil), expected: nil),
        Comparison(label: "their ETag malformed", mine: Self.tag(#""a""#), theirs: Self.tag("a"), expected: nil),
        Comparison(
            label: "strong ETag decides over Last-Modified",
            mine: Self.strongDate(Self.modified, tag: #""a""#),
            theirs: Self.strongDate(Self.later, tag: #""a""#),
            expected: true
        ),
        Comparison(
            label: "MD5-looking ETags are opaque: case matters",
            mine: Self.tag(Self.md5),
            theirs: Self.tag(Self.md5.uppercased()),
            expected: false
        ),
        Comparison(
            label: "MD5-looking ETag equal as a tag",
            mine: Self.tag(Self.md5),
            theirs: Self.tag(Self.md5),
            expected: true
        ),
        Comparison(label: "weak never ties", mine: Self.tag(#"W/"a""#), theirs: Self.tag(#"W/"a""#), expected: false),
        Comparison(label: "weak vs strong", mine: Self.tag(#"W/"a""#), theirs: Self.tag(#""a""#), expected: false),
        Comparison(label: "no validator", mine: Self.tag(nil), theirs: Self.tag(nil), expected: false),
        Comparison(
            label: "weak ETag with a strong Last-Modified never ties",
            mine: Self.strongDate(Self.modified, tag: #"W/"a""#),
            theirs: Self.strongDate(Self.modified, tag: #"W/"a""#),
            expected: false
        ),
        Comparison(
            label: "weak Last-Modified never ties",
            mine: Self.tag(nil, Self.modified),
            theirs: Self.tag(nil, Self.modified),
            expected: false
        ),
        Comparison(
            label: "same strong Last-Modified",
            mine: Self.strongDate(Self.modified),
            theirs: Self.tag(nil, Self.modified),
            expected: true
        ),
        Comparison(
            label: "same instant, RFC 850 form",
            mine: Self.strongDate(Self.modified),
            theirs: Self.tag(nil, "Sunday, 06-Nov-94 08:49:37 GMT"),
            expected: true
        ),
        Comparison(
            label: "changed Last-Modified",
            mine: Self.strongDate(Self.modified),
            theirs: Self.tag(nil, Self.later),
            expected: false
        ),
        Comparison(
            label: "Last-Modified absent now",
            mine: Self.strongDate(Self.modified),
            theirs: Self.tag(nil),
            expected: nil
        ),
        Comparison(
            label: "server switched to a strong ETag",
            mine: Self.strongDate(Self.modified),
            theirs: Self.tag(#""a""#, Self.modified),
            expected: false
        ),
    ]

    @Test(arguments: Self.comparisons)
    func `matches compares the If-Range validator strongly`(comparison: Comparison) {
        #expect(comparison.mine.matches(comparison.theirs) == comparison.expected)
    }
}
