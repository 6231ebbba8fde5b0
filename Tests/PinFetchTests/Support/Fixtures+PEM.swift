import Foundation

/// A self-signed certificate and its unencrypted P-256 key (PEM, made once with
/// `openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 36500`), for
/// tests that need files OpenSSL reads as a certificate and a key but no handshake. Each ends
/// with a newline, so the two join into one file.
extension Fixtures {
    static let certificatePEM = """
        -----BEGIN CERTIFICATE-----
        MIIBljCCATugAwIBAgIUFw5hW3ZvL2OLYOX67aCcRzOtKuEwCgYIKoZIzj0EAwIw
        HzEdMBsGA1UEAwwUcGluZmV0Y2ggdGVzdCBjbGllbnQwIBcNMjYxMjAyMjAxMjEz
        WhgPMjEyNjExMDgyMDEyMTNaMB8xHTAbBgNVBAMMFHBpbmZldGNoIHRlc3QgY2xp
        ZW50MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAETOuyPH+AdxXlyDtjTMvTwXlk
        E1UZ3g+2vDHJl3E2/Qg8JP6ApSTDIjRZ+Fl9uHw8VFIoYdoLHlIZCyoYdAMi0KNT
        MFEwHQYDVR0OBBYEFAwOmus0QOV/ibZZSNDCR0B6m2EMMB8GA1UdIwQYMBaAFAwO
        mus0QOV/ibZZSNDCR0B6m2EMMA8GA1UdEwEB/wQFMAMBAf8wCgYIKoZIzj0EAwID
        SQAwRgIhAKc2x+723TysDTc8U5COFhdsCM59uI9e+mVGkkE/CKoqAiEA1tK/QTNv
        CpcRj40BwXGYZsJn/MXZnAS54ZF2IbSWoNk=
        -----END CERTIFICATE-----

        """

    static let privateKeyPEM = """
        -----BEGIN PRIVATE KEY-----
        MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgGcEFYmJFqNd9wGvB
        ET11jmjaiixomZoihE3PL/LVMm+hRANCAARM67I8f4B3FeXIO2NMy9PBeWQTVRne
        D7a8McmXcTb9CDwk/oClJMMiNFn4WX24fDxUUihh2gseUhkLKhh0AyLQ
        -----END PRIVATE KEY-----

        """

    /// Another P-256 key (`openssl genpkey -algorithm EC`), not the certificate's.
    static let otherPrivateKeyPEM = """
        -----BEGIN PRIVATE KEY-----
        MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgnddfxqt5FJUEe8OP
        m60mstbD3jo+yGc4Fk+HXp7aH6OhRANCAATBLXobR/oSIlm+TDdJH7vWzWAK6cL9
        GtPv4x5fYM/C4/KMMJ2Om/BiS9JRP7zoRFBTlvzb3XxNK3A1tFdT8xQd
        -----END PRIVATE KEY-----

        """
}
