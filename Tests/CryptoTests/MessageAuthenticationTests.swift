import Crypto
import Foundation
import Testing

/// HMAC-SHA-256 and PBKDF2-HMAC-SHA-256 against their RFCs' published vectors.
@Suite struct MessageAuthenticationTests {
    @Test("HMAC-SHA-256 matches RFC 4231's test cases", arguments: [
        ("4a656665", "7768617420646f2079612077616e7420666f72206e6f7468696e673f",
         "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
        (String(repeating: "0b", count: 20), "4869205468657265",
         "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
    ])
    func hmac(key: String, message: String, tag: String) throws {
        #expect(Hex.encode(HMACSHA256.tag(Self.bytes(message), key: Self.bytes(key))) == tag)
    }

    @Test("PBKDF2-HMAC-SHA-256 matches the published vectors for RFC 8018's construction", arguments: [
        ("password", "salt", 4096, "c5e478d59288c841aa530db6845c4c8d962893a001ce4e11a4963873aa98134a"),
        ("passwordPASSWORDpassword", "saltSALTsaltSALTsaltSALTsaltSALTsalt", 4096,
         "348c89dbcbd32b2f32d814b8116e84cf2b17347ebc1800181c4e2a1fb8dd53e1"),
    ])
    func pbkdf2(password: String, salt: String, iterations: Int, key: String) throws {
        #expect(Hex.encode(try PasswordHash.pbkdf2(Data(password.utf8), salt: Data(salt.utf8), iterations: iterations)) == key)
    }

    static func bytes(_ hex: String) -> [UInt8] {
        let digits = Array(hex.utf8)
        return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(decoding: digits[$0...$0 + 1], as: UTF8.self), radix: 16)! }
    }

    @Test("too few or too many PBKDF2 iterations are refused", arguments: [999, 10_000_001])
    func iterationBounds(iterations: Int) {
        #expect(throws: CryptoError.self) { try PasswordHash.pbkdf2(Data("p".utf8), salt: Data("s".utf8), iterations: iterations) }
    }
}
