import Crypto
import Foundation

/// RFC 7515 Appendix A known-answer vectors: the same payload signed with RS256 (A.2) and ES256 (A.3).
enum RFC7515 {
    /// `{"iss":"joe",\r\n "exp":1300819380,\r\n "http://example.com/is_root":true}`, base64url.
    static let payload = "eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFt"
        + "cGxlLmNvbS9pc19yb290Ijp0cnVlfQ"

    /// A.2: RSASSA-PKCS1-v1_5 SHA-256.
    static let rs256Token = "eyJhbGciOiJSUzI1NiJ9." + payload + "."
        + "cC4hiUPoj9Eetdgtv3hF80EGrhuB__dzERat0XF9g2VtQgr9PJbu3XOiZj5RZmh7"
        + "AAuHIm4Bh-0Qc_lF5YKt_O8W2Fp5jujGbds9uJdbF9CUAr7t1dnZcAcQjbKBYNX4"
        + "BAynRFdiuB--f_nZLgrnbyTyWzO75vRK5h6xBArLIARNPvkSjtQBMHlb1L07Qe7K"
        + "0GarZRmB_eSN9383LcOLn6_dO--xi12jzDwusC-eOkHWEsqtFZESc6BfI7noOPqv"
        + "hJ1phCnvWh6IeYI2w9QOYEUipUTI8np6LbgGY9Fs98rqVt5AXLIhWkWywlVmtVrB"
        + "p0igcN_IoypGlUPQGe77Rw"
    static let rsaN = "ofgWCuLjybRlzo0tZWJjNiuSfb4p4fAkd_wWJcyQoTbji9k0l8W26mPddx"
        + "HmfHQp-Vaw-4qPCJrcS2mJPMEzP1Pt0Bm4d4QlL-yRT-SFd2lZS-pCgNMs"
        + "D1W_YpRPEwOWvG6b32690r2jZ47soMZo9wGzjb_7OMg0LOL-bSf63kpaSH"
        + "SXndS5z5rexMdbBYUsLA9e-KXBdQOS-UTo7WTBEMa2R2CapHg665xsmtdV"
        + "MTBQY4uDZlxvb3qCo5ZwKh9kG4LT6_I5IhlJH7aGhyxXFvUK-DWNmoudF8"
        + "NAco9_h9iaGNj8q2ethFkMLs91kzk2PAcDTW9gb54h4FRWyuXpoQ"
    static let rsaE = "AQAB"

    /// A.3: ECDSA P-256 SHA-256 (signature is raw r‖s).
    static let es256Token = "eyJhbGciOiJFUzI1NiJ9." + payload + "."
        + "DtEhU3ljbEg8L38VWAfUAqOyKAM6-Xx-F4GawxaepmXFCgfTjDxw5djxLa8ISlSA"
        + "pmWQxfKTUJqPP3-Kg6NU1Q"
    static let ecX = "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU"
    static let ecY = "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"

    static func rsaKey() throws -> PublicKey {
        try PublicKey.rsa(modulus: Base64URL.decode(rsaN), exponent: Base64URL.decode(rsaE))
    }

    /// The A.3 key as a PEM SubjectPublicKeyInfo: the fixed DER prefix for an uncompressed P-256 point, then
    /// `04 ‖ x ‖ y` (the adapter has no constructor from JWK x/y).
    static func ecKey() throws -> PublicKey {
        let prefix: [UInt8] = hex("3059301306072a8648ce3d020106082a8648ce3d030107034200")
        let spki = Data(prefix + [0x04]) + (try Base64URL.decode(ecX)) + (try Base64URL.decode(ecY))
        return try PublicKey(pem: pem(spki, label: "PUBLIC KEY"))
    }
}

/// Bytes from a hex string (test literals only).
func hex(_ text: String) -> [UInt8] {
    var bytes: [UInt8] = []
    var index = text.startIndex
    while index < text.endIndex {
        let next = text.index(index, offsetBy: 2)
        bytes.append(UInt8(text[index..<next], radix: 16)!)
        index = next
    }
    return bytes
}

/// A PEM block around `der`, 64 base64 characters a line.
func pem(_ der: Data, label: String) -> String {
    let body = der.base64EncodedString()
    var lines: [Substring] = []
    var index = body.startIndex
    while index < body.endIndex {
        let end = body.index(index, offsetBy: 64, limitedBy: body.endIndex) ?? body.endIndex
        lines.append(body[index..<end])
        index = end
    }
    return "-----BEGIN \(label)-----\n" + lines.joined(separator: "\n") + "\n-----END \(label)-----\n"
}

/// A token with one signature bit flipped, still well-formed base64url.
func flippingSignatureByte(of token: String, at index: Int = 0) throws -> String {
    let parts = token.split(separator: ".", omittingEmptySubsequences: false)
    var signature = try Base64URL.decode(parts[2])
    signature[signature.startIndex + index] ^= 0x01
    return "\(parts[0]).\(parts[1]).\(Base64URL.encode(signature))"
}

/// The DER `ECDSA-Sig-Value` (SEQUENCE of two INTEGERs) for a raw 64-byte r‖s, built by hand.
func derSignature(fromRaw raw: Data) -> Data {
    func integer(_ bytes: Data) -> [UInt8] {
        var value = Array(bytes.drop { $0 == 0 })
        if value.isEmpty || value[0] & 0x80 != 0 { value.insert(0, at: 0) }
        return [0x02, UInt8(value.count)] + value
    }
    let body = integer(raw.prefix(32)) + integer(raw.suffix(32))
    return Data([0x30, UInt8(body.count)] + body)
}

/// SplitMix64: a seeded generator, so "random" test data is the same on every run.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A UTC date from calendar fields, for certificate validity literals.
func utc(_ year: Int, _ month: Int = 1, _ day: Int = 1) -> Date {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = TimeZone(identifier: "UTC")!
    return calendar.date(from: DateComponents(year: year, month: month, day: day))!
}

/// Keys generated once per test process: generation, RSA above all, is slow-ish.
enum TestKeys {
    static let p256 = try! PrivateKey.generate(.ecP256)
    static let p384 = try! PrivateKey.generate(.ecP384)
    static let rsa2048 = try! PrivateKey.generate(.rsa(bits: 2048))
    static let rsa2048b = try! PrivateKey.generate(.rsa(bits: 2048))
}
