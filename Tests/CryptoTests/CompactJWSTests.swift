import Crypto
import Foundation
import StrictJSON
import Testing

/// Guards `CompactJWS`: RFC 7515's own examples verify, a changed signature or a token naming another `alg`
/// does not, and malformed or oversized tokens are refused before any signature work.
@Suite("Compact JWS")
struct CompactJWSTests {
    @Test("RFC 7515 A.3 (ES256) verifies with the key built from the JWK's x and y")
    func rfc7515ES256() throws {
        let key = try RFC7515.ecKey()
        #expect(key.kind == .ecP256)
        let token = try CompactJWS(RFC7515.es256Token)
        #expect(token.header.alg == "ES256")
        #expect(token.signature.count == 64)
        #expect(String(decoding: token.payload, as: UTF8.self).hasPrefix("{\"iss\":\"joe\",\r\n \"exp\":1300819380"))
        #expect(token.signingInput == Data(RFC7515.es256Token.split(separator: ".").prefix(2).joined(separator: ".").utf8))
        try token.verify(.es256, with: key)
    }

    @Test("RFC 7515 A.2 (RS256) verifies with the key built from the JWK's n and e")
    func rfc7515RS256() throws {
        let key = try RFC7515.rsaKey()
        #expect(key.kind == .rsa(bits: 2048))
        let token = try CompactJWS(RFC7515.rs256Token)
        #expect(token.header == JWSHeader(alg: "RS256"))
        try token.verify(.rs256, with: key)
    }

    @Test("flipping any signature byte of a known-answer token fails with badSignature", arguments: [0, 17, 31, 32, 63])
    func flippedES256(index: Int) throws {
        let token = try CompactJWS(try flippingSignatureByte(of: RFC7515.es256Token, at: index))
        let error = #expect(throws: CryptoError.self) { try token.verify(.es256, with: try RFC7515.ecKey()) }
        #expect(error?.code == .badSignature)
    }

    @Test("flipping an RS256 signature byte fails with badSignature", arguments: [0, 128, 255])
    func flippedRS256(index: Int) throws {
        let token = try CompactJWS(try flippingSignatureByte(of: RFC7515.rs256Token, at: index))
        let error = #expect(throws: CryptoError.self) { try token.verify(.rs256, with: try RFC7515.rsaKey()) }
        #expect(error?.code == .badSignature)
    }

    @Test("a changed payload with the original signature fails")
    func changedPayload() throws {
        let parts = RFC7515.es256Token.split(separator: ".")
        let payload = Base64URL.encode(Data(#"{"iss":"eve","exp":1300819380,"http://example.com/is_root":true}"#.utf8))
        let token = try CompactJWS("\(parts[0]).\(payload).\(parts[2])")
        let error = #expect(throws: CryptoError.self) { try token.verify(.es256, with: try RFC7515.ecKey()) }
        #expect(error?.code == .badSignature)
    }

    @Test("alg is pinned: a token is checked only with the algorithm the caller names")
    func algPinning() throws {
        let rs256 = try CompactJWS(RFC7515.rs256Token)
        let asES256 = #expect(throws: CryptoError.self) { try rs256.verify(.es256, with: try RFC7515.ecKey()) }
        #expect(asES256?.code == .badSignature)
        #expect(asES256?.reason.contains("alg") == true, "\(asES256?.reason ?? "")")
        #expect(asES256?.reason.contains("RS256") == true, "\(asES256?.reason ?? "")")

        let es256 = try CompactJWS(RFC7515.es256Token)
        let asRS256 = #expect(throws: CryptoError.self) { try es256.verify(.rs256, with: try RFC7515.rsaKey()) }
        #expect(asRS256?.code == .badSignature)
        #expect(asRS256?.reason.contains("alg") == true, "\(asRS256?.reason ?? "")")
    }

    @Test("a header without alg, or with alg none, never verifies", arguments: [#"{"typ":"JWT"}"#, #"{"alg":"none"}"#])
    func missingOrNoneAlg(header: String) throws {
        let parts = RFC7515.es256Token.split(separator: ".")
        let token = try CompactJWS("\(Base64URL.encode(Data(header.utf8))).\(parts[1]).\(parts[2])")
        let error = #expect(throws: CryptoError.self) { try token.verify(.es256, with: try RFC7515.ecKey()) }
        #expect(error?.code == .badSignature)
        #expect(error?.reason.contains("alg") == true, "\(error?.reason ?? "")")
    }

    @Test("malformed tokens are refused while parsing", arguments: [
        ("eyJhbGciOiJFUzI1NiJ9.\(RFC7515.payload)", "3 dot-separated parts, found 2"),
        ("\(RFC7515.es256Token).AAAA", "3 dot-separated parts, found 4"),
        ("", "found 1"),
        ("..", "empty part"),
        (".\(RFC7515.payload).AAAA", "empty part"),
        ("eyJhbGciOiJFUzI1NiJ9..AAAA", "empty part"),
        ("eyJhbGciOiJFUzI1NiJ9.\(RFC7515.payload).", "empty part"),
        ("eyJhbGciOiJFUzI1NiJ9=.\(RFC7515.payload).AAAA", "base64url"),
        ("eyJhbGciOiJFUzI1NiJ9.\(RFC7515.payload).AA+A", "base64url"),
        ("\(Base64URL.encode(Data("not json".utf8))).\(RFC7515.payload).AAAA", "header"),
        ("\(Base64URL.encode(Data("[\"ES256\"]".utf8))).\(RFC7515.payload).AAAA", "header"),
        ("\(Base64URL.encode(Data(#"{"alg":256}"#.utf8))).\(RFC7515.payload).AAAA", "header"),
        ("\(Base64URL.encode(Data(#"{"alg":"ES256","x5c":"MIIB"}"#.utf8))).\(RFC7515.payload).AAAA", "header"),
    ] as [(String, String)])
    func parseRejections(token: String, fragment: String) {
        let error = #expect(throws: CryptoError.self) { try CompactJWS(token) }
        #expect(error?.code == .invalidEncoding)
        #expect(error?.reason.contains(fragment) == true, "\(error?.reason ?? "")")
    }

    @Test("an oversized token is refused by its length alone, before it is split or decoded")
    func oversized() throws {
        let junk = String(repeating: "a", count: 70_000)
        let error = #expect(throws: CryptoError.self) { try CompactJWS(junk) }
        #expect(error?.code == .invalidEncoding)
        #expect(error?.reason.contains("70000 bytes") == true, "\(error?.reason ?? "")")

        // A well-formed token is refused the same way when it exceeds the caller's limit, and accepted at it.
        let length = RFC7515.es256Token.utf8.count
        let tight = #expect(throws: CryptoError.self) { try CompactJWS(RFC7515.es256Token, maxLength: length - 1) }
        #expect(tight?.reason.contains("more than the \(length - 1) allowed") == true, "\(tight?.reason ?? "")")
        try CompactJWS(RFC7515.es256Token, maxLength: length).verify(.es256, with: try RFC7515.ecKey())
        #expect(CompactJWS.defaultMaxLength == 65_536)
    }

    /// Headers as JSON text, and whether a reader that implements no JWS extension must refuse them.
    static let headerCases: [(json: String, refused: Bool)] = [
        (#"{"alg":"ES256"}"#, false),
        (#"{"alg":"ES256","b64":true}"#, false),
        (#"{"alg":"ES256","critical":["x"],"b64x":false}"#, false),
        (#"{"alg":"ES256","typ":"crit","kid":"b64"}"#, false),
        (#"{"alg":"ES256","crit":["exp"],"exp":1}"#, true),
        (#"{"alg":"ES256","crit":[]}"#, true),
        (#"{"alg":"ES256","crit":null}"#, true),
        (#"{"alg":"ES256","b64":false}"#, true),
        (#"{"alg":"ES256","b64":false,"crit":["b64"]}"#, true),
        (#"{"alg":"ES256","\u0063rit":["x"]}"#, true),
        (#"{"alg":"ES256","b\u0036\u0034":false}"#, true),
    ]

    @Test("crit (any: none is understood) and b64 false are refused by every header read; other fields are ignored",
          arguments: headerCases)
    func headerRules(json: String, refused: Bool) throws {
        let token = Base64URL.encode(Data(json.utf8)) + ".e30.c2ln"
        let parts = try JWSParts(token)
        if refused {
            for read in [{ _ = try parts.decodeHeader() }, { try parts.requireUnderstoodHeader() },
                         { _ = try CompactJWS(token) }] as [() throws -> Void] {
                let error = #expect(throws: CryptoError.self) { try read() }
                #expect(error?.code == .unsupportedHeader, "\(error.map(String.init(describing:)) ?? "")")
            }
        } else {
            #expect(try parts.decodeHeader().alg == "ES256")
            try parts.requireUnderstoodHeader()
        }
    }

    @Test("sign → parse → verify round trip carries alg, kid, typ and the payload")
    func signRoundTrip() throws {
        let payload = Data(#"{"hello":"world"}"#.utf8)
        let es = try CompactJWS(try CompactJWS.sign(payload: payload, algorithm: .es256, key: TestKeys.p256, kid: "k1",
                                                    typ: "JWT"))
        #expect(es.header == JWSHeader(alg: "ES256", kid: "k1", typ: "JWT"))
        #expect(es.payload == payload)
        try es.verify(.es256, with: TestKeys.p256.publicKey)

        let rs = try CompactJWS(try CompactJWS.sign(payload: payload, algorithm: .rs256, key: TestKeys.rsa2048))
        #expect(rs.header == JWSHeader(alg: "RS256"))
        try rs.verify(.rs256, with: TestKeys.rsa2048.publicKey)
        let wrongKey = #expect(throws: CryptoError.self) { try rs.verify(.rs256, with: TestKeys.rsa2048b.publicKey) }
        #expect(wrongKey?.code == .badSignature)
    }
}

extension JWSHeader {
    /// A header literal for comparisons (the type has only a decoding initialiser).
    init(alg: String?, kid: String? = nil, typ: String? = nil, x5c: [String]? = nil) {
        var fields: [String: Any] = [:]
        if let alg { fields["alg"] = alg }
        if let kid { fields["kid"] = kid }
        if let typ { fields["typ"] = typ }
        if let x5c { fields["x5c"] = x5c }
        self = try! JSONReader.read(JSONSerialization.data(withJSONObject: fields)) { try JWSHeader(json: &$0) }
    }
}
