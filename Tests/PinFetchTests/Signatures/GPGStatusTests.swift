import Testing

@testable import PinFetch

/// The verdict read from `gpgv --status-fd` lines: only a `VALIDSIG` naming a
/// trusted primary key counts, never the absence of an error.
struct GPGStatusTests {
    static let primary = "0656D78A8A2CB0C855F5F1FB985A44DB5A6E14C0"
    static let subkey = "1111111111111111111111111111111122223333"

    static func validsig(signing: String, primary: String) -> String {
        "[GNUPG:] VALIDSIG \(signing) 2026-12-01 1764590000 0 4 0 22 10 01 \(primary)"
    }

    @Test func `a VALIDSIG by a trusted key, directly or by its subkey, is valid`() {
        let trusted: Set = [Self.primary]
        #expect(
            GPGVerifier.verdict(Self.validsig(signing: Self.primary, primary: Self.primary), trusted: trusted)
                == .valid(Self.primary)
        )
        #expect(
            GPGVerifier.verdict(Self.validsig(signing: Self.subkey, primary: Self.primary), trusted: trusted)
                == .valid(Self.primary)
        )
    }

    @Test func `nothing, a GOODSIG alone, or a VALIDSIG by another key is not valid`() {
        let trusted: Set = [Self.primary]
        let other = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
        for status in [
            "", "[GNUPG:] NEWSIG\n[GNUPG:] GOODSIG 985A44DB5A6E14C0 release",
            Self.validsig(signing: other, primary: other),
            "gpgv: Good signature\n" + "VALIDSIG \(Self.primary)",  // not a status line
        ] {
            guard case .invalid = GPGVerifier.verdict(status, trusted: trusted) else {
                Issue.record("valid: \(status)")
                continue
            }
        }
    }

    @Test func `a bad signature, an unknown key and an expired or revoked key say so`() {
        let trusted: Set = [Self.primary]
        #expect(
            GPGVerifier.verdict("[GNUPG:] BADSIG 985A44DB5A6E14C0 release", trusted: trusted)
                == .invalid(
                    "the OpenPGP signature by key 985A44DB5A6E14C0 does not verify: the checksum file is not the one signed"
                )
        )
        #expect(
            GPGVerifier.verdict(
                "[GNUPG:] ERRSIG 1234567890ABCDEF 22 10 01 1764590000 9\n[GNUPG:] NO_PUBKEY 1234567890ABCDEF",
                trusted: trusted
            )
                == .invalid("the checksum file is signed by OpenPGP key 1234567890ABCDEF, which is not trusted")
        )
        let expired =
            "[GNUPG:] EXPKEYSIG 985A44DB5A6E14C0 release\n"
            + Self.validsig(signing: Self.primary, primary: Self.primary)
        #expect(
            GPGVerifier.verdict(expired, trusted: trusted)
                == .invalid("the checksum file is signed by OpenPGP key 985A44DB5A6E14C0, which has expired")
        )
        let revoked =
            "[GNUPG:] REVKEYSIG 985A44DB5A6E14C0 release\n"
            + Self.validsig(signing: Self.primary, primary: Self.primary)
        #expect(
            GPGVerifier.verdict(revoked, trusted: trusted)
                == .invalid("the checksum file is signed by OpenPGP key 985A44DB5A6E14C0, which was revoked")
        )
    }

    @Test func `two signatures, one by a key not trusted: the trusted one counts`() {
        let status =
            "[GNUPG:] ERRSIG 1234567890ABCDEF 22 10 01 1764590000 9\n[GNUPG:] NO_PUBKEY 1234567890ABCDEF\n"
            + Self.validsig(signing: Self.primary, primary: Self.primary)
        #expect(GPGVerifier.verdict(status, trusted: [Self.primary]) == .valid(Self.primary))
    }
}
