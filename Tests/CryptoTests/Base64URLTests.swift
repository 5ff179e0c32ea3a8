import Crypto
import Foundation
import Testing

/// Guards `Base64URL`, the encoding of every JWS part: the RFC 4648 url alphabet without padding, decoded
/// strictly so each byte string has exactly one accepted text.
@Suite("Base64URL")
struct Base64URLTests {
    @Test("RFC 4648 §10 vectors and url-alphabet bytes encode and decode", arguments: [
        ("", ""), ("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"), ("foob", "Zm9vYg"), ("fooba", "Zm9vYmE"),
        ("foobar", "Zm9vYmFy"),
    ] as [(String, String)])
    func rfc4648Vectors(plain: String, encoded: String) throws {
        #expect(Base64URL.encode(Data(plain.utf8)) == encoded)
        #expect(try Base64URL.decode(encoded) == Data(plain.utf8))
    }

    @Test("bytes that use the url-safe characters encode with - and _, never + and /", arguments: [
        ([0xfb, 0xff], "-_8"), ([0xff, 0xff, 0xff], "____"), ([0xfb, 0xef, 0xbe], "----"),
        ([0x03, 0xe0], "A-A"), ([0x00], "AA"), ([0xff], "_w"),
    ] as [([UInt8], String)])
    func urlAlphabet(bytes: [UInt8], encoded: String) throws {
        #expect(Base64URL.encode(bytes) == encoded)
        #expect(try Base64URL.decode(encoded) == Data(bytes))
    }

    @Test("random data of every length 0…64 round-trips and matches Foundation's base64 translated to the url alphabet")
    func roundTrip() throws {
        var generator = SeededGenerator(seed: 7515)
        for length in 0...64 {
            let bytes = (0..<length).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
            let encoded = Base64URL.encode(bytes)
            let expected = Data(bytes).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
            #expect(encoded == expected, "length \(length)")
            #expect(try Base64URL.decode(encoded) == Data(bytes), "length \(length)")
            #expect(try Base64URL.decode(utf8: Array(encoded.utf8)) == Data(bytes), "length \(length)")
        }
    }

    @Test("non-canonical or foreign text is rejected", arguments: [
        ("Zg==", "padded"), ("Zm8=", "padded"), ("Zm9v\n", "impossible"), ("Zm 9", "invalid"),
        ("Zm9v\tYg", "invalid"), (" Zm9", "invalid"), ("+/8", "invalid"), ("-_+/", "invalid"),
        ("ab/c", "invalid"), ("A", "impossible"), ("Zm9vY", "impossible"), ("AAAAAAAAA", "impossible"),
        ("QR", "trailing bits"), ("Zh", "trailing bits"), ("QUF", "trailing bits"), ("Zm9", "trailing bits"),
        ("Zm9vYé", "invalid"), ("Zm9v.g", "invalid"),
    ] as [(String, String)])
    func rejections(text: String, fragment: String) {
        let error = #expect(throws: CryptoError.self) { try Base64URL.decode(text) }
        #expect(error?.code == .invalidEncoding)
        #expect(error?.reason.contains(fragment) == true, "\(error?.reason ?? "")")
    }

    @Test("the canonical neighbours of rejected texts decode", arguments: [
        ("QQ", [0x41]), ("Zg", [0x66]), ("QUE", [0x41, 0x41]), ("Zm8", [0x66, 0x6f]),
    ] as [(String, [UInt8])])
    func canonicalNeighbours(text: String, bytes: [UInt8]) throws {
        #expect(try Base64URL.decode(text) == Data(bytes))
    }
}
