import AppStore
import Crypto
import Foundation
import TestPKI
import Testing

/// Apple's real signing chain — Apple Root CA - G3 → Apple Worldwide Developer Relations CA G6 → "Prod ECC Mac
/// App Store and iTunes Store Receipt Signing" — must pass every chain check the verifier makes (OpenSSL's
/// strict mode, the path leaf → x5c[1] → root, both marker extensions, a P-256 leaf). Every other test signs
/// with the generated `LocalApplePKI`; this one guards against checks that only the local PKI satisfies, which
/// would refuse every real notification. Apple keeps no private key here, so the signature cannot match: a
/// refusal for the signature alone shows that the chain passed.
///
/// The intermediate and the leaf are public certificates, as every real notification's `x5c` header carries
/// them (and as Apple's App Store Server Library tests use them); the intermediate is the one published at
/// apple.com/certificateauthority (SHA-256 BDD4ED6E…CA30).
@Suite struct RealAppleChainTests {
    static let intermediate = "MIIDFjCCApygAwIBAgIUIsGhRwp0c2nvU4YSycafPTjzbNcwCgYIKoZIzj0EAwMwZzEbMBkGA1UEAwwSQXBwbGUgUm9vdCBDQSAt"
        + "IEczMSYwJAYDVQQLDB1BcHBsZSBDZXJ0aWZpY2F0aW9uIEF1dGhvcml0eTETMBEGA1UECgwKQXBwbGUgSW5jLjELMAkGA1UEBhMC"
        + "VVMwHhcNMjEwMzE3MjAzNzEwWhcNMzYwMzE5MDAwMDAwWjB1MUQwQgYDVQQDDDtBcHBsZSBXb3JsZHdpZGUgRGV2ZWxvcGVyIFJl"
        + "bGF0aW9ucyBDZXJ0aWZpY2F0aW9uIEF1dGhvcml0eTELMAkGA1UECwwCRzYxEzARBgNVBAoMCkFwcGxlIEluYy4xCzAJBgNVBAYT"
        + "AlVTMHYwEAYHKoZIzj0CAQYFK4EEACIDYgAEbsQKC94PrlWmZXnXgtxzdVJL8T0SGYngDRGpngn3N6PT8JMEb7FDi4bBmPhCnZ3/"
        + "sq6PF/cGcKXWsL5vOteRhyJ45x3ASP7cOB+aao90fcpxSv/EZFbniAbNgZGhIhpIo4H6MIH3MBIGA1UdEwEB/wQIMAYBAf8CAQAw"
        + "HwYDVR0jBBgwFoAUu7DeoVgziJqkipnevr3rr9rLJKswRgYIKwYBBQUHAQEEOjA4MDYGCCsGAQUFBzABhipodHRwOi8vb2NzcC5h"
        + "cHBsZS5jb20vb2NzcDAzLWFwcGxlcm9vdGNhZzMwNwYDVR0fBDAwLjAsoCqgKIYmaHR0cDovL2NybC5hcHBsZS5jb20vYXBwbGVy"
        + "b290Y2FnMy5jcmwwHQYDVR0OBBYEFD8vlCNR01DJmig97bB85c+lkGKZMA4GA1UdDwEB/wQEAwIBBjAQBgoqhkiG92NkBgIBBAIF"
        + "ADAKBggqhkjOPQQDAwNoADBlAjBAXhSq5IyKogMCPtw490BaB677CaEGJXufQB/EqZGd6CSjiCtOnuMTbXVXmxxcxfkCMQDTSPxa"
        + "rZXvNrkxU3TkUMI33yzvFVVRT4wxWJC994OsdcZ4+RGNsYDyR5gmdr0nDGg="
    static let leaf = "MIIEMTCCA7agAwIBAgIQR8KHzdn554Z/UoradNx9tzAKBggqhkjOPQQDAzB1MUQwQgYDVQQDDDtBcHBsZSBXb3JsZHdpZGUgRGV2"
        + "ZWxvcGVyIFJlbGF0aW9ucyBDZXJ0aWZpY2F0aW9uIEF1dGhvcml0eTELMAkGA1UECwwCRzYxEzARBgNVBAoMCkFwcGxlIEluYy4x"
        + "CzAJBgNVBAYTAlVTMB4XDTI1MDkxOTE5NDQ1MVoXDTI3MTAxMzE3NDcyM1owgZIxQDA+BgNVBAMMN1Byb2QgRUNDIE1hYyBBcHAg"
        + "U3RvcmUgYW5kIGlUdW5lcyBTdG9yZSBSZWNlaXB0IFNpZ25pbmcxLDAqBgNVBAsMI0FwcGxlIFdvcmxkd2lkZSBEZXZlbG9wZXIg"
        + "UmVsYXRpb25zMRMwEQYDVQQKDApBcHBsZSBJbmMuMQswCQYDVQQGEwJVUzBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABNnVvhcv"
        + "7iT+7Ex5tBMBgrQspHzIsXRi0Yxfek7lv8wEmj/bHiWtNwJqc2BoHzsQiEjP7KFIIKg4Y8y0/nynuAmjggIIMIICBDAMBgNVHRMB"
        + "Af8EAjAAMB8GA1UdIwQYMBaAFD8vlCNR01DJmig97bB85c+lkGKZMHAGCCsGAQUFBwEBBGQwYjAtBggrBgEFBQcwAoYhaHR0cDov"
        + "L2NlcnRzLmFwcGxlLmNvbS93d2RyZzYuZGVyMDEGCCsGAQUFBzABhiVodHRwOi8vb2NzcC5hcHBsZS5jb20vb2NzcDAzLXd3ZHJn"
        + "NjAyMIIBHgYDVR0gBIIBFTCCAREwggENBgoqhkiG92NkBQYBMIH+MIHDBggrBgEFBQcCAjCBtgyBs1JlbGlhbmNlIG9uIHRoaXMg"
        + "Y2VydGlmaWNhdGUgYnkgYW55IHBhcnR5IGFzc3VtZXMgYWNjZXB0YW5jZSBvZiB0aGUgdGhlbiBhcHBsaWNhYmxlIHN0YW5kYXJk"
        + "IHRlcm1zIGFuZCBjb25kaXRpb25zIG9mIHVzZSwgY2VydGlmaWNhdGUgcG9saWN5IGFuZCBjZXJ0aWZpY2F0aW9uIHByYWN0aWNl"
        + "IHN0YXRlbWVudHMuMDYGCCsGAQUFBwIBFipodHRwOi8vd3d3LmFwcGxlLmNvbS9jZXJ0aWZpY2F0ZWF1dGhvcml0eS8wHQYDVR0O"
        + "BBYEFIFioG4wMMVA1ku9zJmGNPAVn3eqMA4GA1UdDwEB/wQEAwIHgDAQBgoqhkiG92NkBgsBBAIFADAKBggqhkjOPQQDAwNpADBm"
        + "AjEA+qXnREC7hXIWVLsLxznjRpIzPf7VHz9V/CTm8+LJlrQepnmcPvGLNcX6XPnlcgLAAjEA5IjNZKgg5pQ79knF4IbTXdKv8vut"
        + "IDMXDmjPVT3dGvFtsGRwXOywR2kZCdSrfeot"
    /// 2025-11-01, inside the leaf's validity (2025-09-19 … 2027-10-13).
    static let signedDate = Date(timeIntervalSince1970: 1_761_962_975)

    static func notification(signedDate: Date, roots: [String]? = nil) -> String {
        let x5c = roots ?? [leaf, intermediate, AppleRoots.rootCAG3.der.base64EncodedString()]
        let header = #"{"alg":"ES256","x5c":["# + x5c.map { "\"\($0)\"" }.joined(separator: ",") + "]}"
        let payload = #"{"notificationType":"TEST","notificationUUID":"u-real","signedDate":\#(Int64(signedDate.timeIntervalSince1970 * 1000)),"#
            + #""data":{"bundleId":"com.example","appAppleId":1234,"environment":"Production"}}"#
        return [Data(header.utf8), Data(payload.utf8), Data(repeating: 1, count: 64)].map(Base64URL.encode).joined(separator: ".")
    }

    static func refusal(_ jws: String, roots: [Certificate] = [AppleRoots.rootCAG3]) throws -> AppStoreVerificationError? {
        let verifier = try SignedDataVerifier(roots: roots, bundleID: "com.example", appAppleID: 1234, environment: .production)
        return #expect(throws: AppStoreVerificationError.self) { try verifier.verifyNotification(jws, now: signedDate) }
    }

    @Test func theRealChainPassesEveryChainCheckSoOnlyTheSignatureIsRefused() throws {
        let error = try Self.refusal(Self.notification(signedDate: Self.signedDate))
        #expect(error?.code == .verificationFailure)
        #expect(error?.reason == "ES256 signature does not match", "the chain itself was refused: \(String(describing: error))")
    }

    @Test func theRealCertificatesCarryApplesMarkerExtensions() throws {
        let intermediate = try Certificate(der: try #require(Data(base64Encoded: Self.intermediate)))
        let leaf = try Certificate(der: try #require(Data(base64Encoded: Self.leaf)))
        #expect(intermediate.isCertificateAuthority)
        #expect(intermediate.hasExtension(oid: SignedDataVerifier.intermediateMarkerOID))
        #expect(leaf.hasExtension(oid: SignedDataVerifier.leafMarkerOID))
        #expect(try leaf.publicKey().kind == .ecP256)
        #expect(Hex.encode(Digest.sha256(intermediate.der)).hasPrefix("bdd4ed6e74691f0c"))
    }

    @Test(arguments: [
        Date(timeIntervalSince1970: 1_830_000_000),  // 2027-12-28: the leaf has expired
        Date(timeIntervalSince1970: 1_750_000_000),  // 2025-06-15: the leaf is not valid yet
    ])
    func outsideTheLeafsValidityTheChainIsRefused(at signedDate: Date) throws {
        let error = try Self.refusal(Self.notification(signedDate: signedDate))
        #expect(error?.code == .verificationFailure)
        #expect(error?.reason.hasPrefix("certificate chain:") == true, "\(String(describing: error))")
    }

    @Test func theRealChainDoesNotReachAnotherRoot() throws {
        let foreign = try LocalApplePKI.generate().root
        let error = try Self.refusal(Self.notification(signedDate: Self.signedDate), roots: [foreign])
        #expect(error?.code == .verificationFailure)
        #expect(error?.reason.hasPrefix("certificate chain:") == true, "\(String(describing: error))")
    }
}
