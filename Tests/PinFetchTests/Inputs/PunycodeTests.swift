import Testing

@testable import PinFetch

/// Punycode decoding (RFC 3492): the samples of its §7.1, labels as hosts carry them, and what is
/// not Punycode.
struct PunycodeTests {
    @Test(arguments: [
        ("bcher-kva", "bücher"),
        ("mnchen-3ya", "münchen"),
        ("fiqs8s", "中国"),
        ("p1ai", "рф"),
        ("n3h", "☃"),
        // RFC 3492 §7.1 (A) Arabic (Egyptian), (B) Chinese (simplified), (L) 3<nen>B<gumi><kinpachi><sensei>.
        (
            "egbpdaj6bu4bxfgehfvwxn",
            "\u{0644}\u{064A}\u{0647}\u{0645}\u{0627}\u{0628}\u{062A}\u{0643}\u{0644}\u{0645}\u{0648}\u{0634}\u{0639}\u{0631}\u{0628}\u{064A}\u{061F}"
        ),
        ("ihqwcrb4cv8a8dqg056pqjye", "\u{4ED6}\u{4EEC}\u{4E3A}\u{4EC0}\u{4E48}\u{4E0D}\u{8BF4}\u{4E2D}\u{6587}"),
        ("3B-ww4c5e180e575a65lsy2b", "3\u{5E74}B\u{7D44}\u{91D1}\u{516B}\u{5148}\u{751F}"),
        ("MNCHEN-3YA", "MüNCHEN"),  // digits in either case; basic letters keep theirs (§5)
    ])
    func `a Punycode label decodes to its Unicode text`(encoded: String, decoded: String) {
        #expect(Punycode.decode(Substring(encoded)) == decoded)
    }

    @Test(arguments: ["bcher-kv!", "bcher-", "99999999999999999999", "ü"])
    func `what is not Punycode does not decode to text it does not hold`(encoded: String) {
        let decoded = Punycode.decode(Substring(encoded))
        // "bcher-" holds only basic code points: it is "bcher" (RFC 3492 allows it).
        #expect(decoded == nil || decoded == "bcher")
    }

    @Test func `each xn-- label of a name is decoded, others kept`() {
        #expect(Punycode.unicodeName("www.xn--bcher-kva.example") == "www.bücher.example")
        #expect(Punycode.unicodeName("XN--BCHER-KVA.example") == "BüCHER.example")
        #expect(Punycode.unicodeName("xn--.example") == "xn--.example")
        #expect(Punycode.unicodeName("xn--bcher-kv!.example") == "xn--bcher-kv!.example")
    }
}
