import Crypto
import Foundation
import Testing

/// Guards `JSONWebKeySet`, the parser for Google's published signing keys: RSA signature keys are kept by
/// `kid`, keys of other types or uses are skipped, and a set that yields nothing usable is an error.
@Suite("JSON Web Key Set")
struct JSONWebKeySetTests {
    static func document(_ keys: [[String: String]]) -> Data {
        try! JSONSerialization.data(withJSONObject: ["keys": keys], options: [.sortedKeys])
    }

    static let rfcKey = ["kty": "RSA", "kid": "2010-12-29", "use": "sig", "alg": "RS256", "n": RFC7515.rsaN,
                         "e": RFC7515.rsaE]
    static let generatedKey: [String: String] = {
        let (n, e) = try! TestKeys.rsa2048.publicKey.rsaComponents()
        return ["kty": "RSA", "kid": "generated", "n": Base64URL.encode(n), "e": Base64URL.encode(e)]
    }()
    static let ecKey = ["kty": "EC", "kid": "ec", "crv": "P-256", "x": RFC7515.ecX, "y": RFC7515.ecY]
    static let encryptionKey = ["kty": "RSA", "kid": "enc", "use": "enc", "n": RFC7515.rsaN, "e": RFC7515.rsaE]
    static let otherAlgKey = ["kty": "RSA", "kid": "ps256", "alg": "PS256", "n": RFC7515.rsaN, "e": RFC7515.rsaE]
    static let keylessKid = ["kty": "RSA", "n": RFC7515.rsaN, "e": RFC7515.rsaE]

    @Test("two RSA keys are kept by kid, and each verifies only its own signatures")
    func twoRSAKeys() throws {
        let set = try JSONWebKeySet(json: Self.document([Self.rfcKey, Self.generatedKey]))
        #expect(Set(set.keys.keys) == ["2010-12-29", "generated"])

        let rfcToken = try CompactJWS(RFC7515.rs256Token)
        try rfcToken.verify(.rs256, with: #require(set.keys["2010-12-29"]))
        let crossed = #expect(throws: CryptoError.self) { try rfcToken.verify(.rs256, with: #require(set.keys["generated"])) }
        #expect(crossed?.code == .badSignature)

        let ownToken = try CompactJWS(try CompactJWS.sign(payload: Data("{}".utf8), algorithm: .rs256, key: TestKeys.rsa2048))
        try ownToken.verify(.rs256, with: #require(set.keys["generated"]))
    }

    @Test("EC keys, encryption keys, other algorithms and keys without kid are skipped")
    func skipsUnusable() throws {
        let set = try JSONWebKeySet(json: Self.document([Self.ecKey, Self.encryptionKey, Self.rfcKey, Self.otherAlgKey,
                                                         Self.keylessKid]))
        #expect(Array(set.keys.keys) == ["2010-12-29"])
    }

    @Test("unknown members are ignored")
    func unknownMembers() throws {
        var key = Self.rfcKey
        key["x5t"] = "ignored"
        let json = try JSONSerialization.data(withJSONObject: ["keys": [key], "extra": true])
        #expect(try JSONWebKeySet(json: json).keys.count == 1)
    }

    @Test("a set with no usable RSA signing key is invalidKey", arguments: [
        [], [ecKey], [encryptionKey], [ecKey, encryptionKey, otherAlgKey, keylessKid],
    ] as [[[String: String]]])
    func noUsableKey(keys: [[String: String]]) {
        let error = #expect(throws: CryptoError.self) { try JSONWebKeySet(json: Self.document(keys)) }
        #expect(error?.code == .invalidKey)
    }

    @Test("malformed JSON or the wrong shape is invalidEncoding", arguments: [
        "", "not json", "{", "[]", "{}", #"{"keys":{}}"#, #"{"keys":[1]}"#, #"{"keys":[{"kty":1}]}"#, "null",
    ])
    func malformed(json: String) {
        let error = #expect(throws: CryptoError.self) { try JSONWebKeySet(json: Data(json.utf8)) }
        #expect(error?.code == .invalidEncoding)
    }

    @Test("input over the size limit is refused before parsing")
    func oversized() throws {
        #expect(JSONWebKeySet.maxLength == 256 * 1024)
        let valid = Self.document([Self.rfcKey])
        let padded = valid.dropLast() + Data(repeating: 0x20, count: JSONWebKeySet.maxLength - valid.count + 1) + Data("}".utf8)
        #expect(padded.count == JSONWebKeySet.maxLength + 1)
        let error = #expect(throws: CryptoError.self) { try JSONWebKeySet(json: padded) }
        #expect(error?.code == .invalidEncoding)
        #expect(error?.reason.contains("larger") == true, "\(error?.reason ?? "")")
        // The same document exactly at the limit parses.
        let atLimit = valid.dropLast() + Data(repeating: 0x20, count: JSONWebKeySet.maxLength - valid.count) + Data("}".utf8)
        #expect(try JSONWebKeySet(json: atLimit).keys.count == 1)
    }
}
