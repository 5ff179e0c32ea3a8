import Crypto
import Foundation
import Testing

/// Guards `SignatureAlgorithm` and the key types: ES256 speaks raw fixed-width r‖s in both directions, RS256
/// needs RSA-2048 or larger, a key never works with the other algorithm, and private keys survive PEM.
@Suite("Signatures and keys")
struct SignatureTests {
    static let message = Data("header.payload".utf8)

    @Test("ES256 sign → verify round trip with P-256")
    func es256RoundTrip() throws {
        let signature = try SignatureAlgorithm.es256.sign(Self.message, with: TestKeys.p256)
        #expect(signature.count == 64)
        try SignatureAlgorithm.es256.verify(signature, for: Self.message, with: TestKeys.p256.publicKey)
        let other = #expect(throws: CryptoError.self) {
            try SignatureAlgorithm.es256.verify(signature, for: Data("header.payloaD".utf8), with: TestKeys.p256.publicKey)
        }
        #expect(other?.code == .badSignature)
    }

    @Test("RS256 sign → verify round trip with RSA-2048")
    func rs256RoundTrip() throws {
        let signature = try SignatureAlgorithm.rs256.sign(Self.message, with: TestKeys.rsa2048)
        #expect(signature.count == 256)
        try SignatureAlgorithm.rs256.verify(signature, for: Self.message, with: TestKeys.rsa2048.publicKey)
        let wrongKey = #expect(throws: CryptoError.self) {
            try SignatureAlgorithm.rs256.verify(signature, for: Self.message, with: TestKeys.rsa2048b.publicKey)
        }
        #expect(wrongKey?.code == .badSignature)
    }

    @Test("ES256 signatures are always exactly 64 bytes and verify (200 signatures)")
    func es256FixedWidth() throws {
        for index in 0..<200 {
            let message = Data("message \(index)".utf8)
            let signature = try SignatureAlgorithm.es256.sign(message, with: TestKeys.p256)
            #expect(signature.count == 64, "signature \(index)")
            try SignatureAlgorithm.es256.verify(signature, for: message, with: TestKeys.p256.publicKey)
        }
    }

    /// About 1 signature in 128 has an r or s below 2^248; unpadded, it would be 63 bytes and misread as r‖s.
    /// Signing continues until three such signatures have been seen (expected after ~384 signatures; fewer than
    /// three in 4 000 has odds below 10^-10).
    @Test("ES256 left-pads short r and s to 32 bytes, and such signatures verify")
    func es256ShortComponents() throws {
        var seen = 0
        for index in 0..<4_000 where seen < 3 {
            let message = Data("short \(index)".utf8)
            let signature = try SignatureAlgorithm.es256.sign(message, with: TestKeys.p256)
            #expect(signature.count == 64)
            guard signature[signature.startIndex] == 0 || signature[signature.startIndex + 32] == 0 else { continue }
            seen += 1
            try SignatureAlgorithm.es256.verify(signature, for: message, with: TestKeys.p256.publicKey)
        }
        #expect(seen == 3)
    }

    @Test("an ES256 signature in DER (what OpenSSL emits natively) is rejected")
    func derRejected() throws {
        let raw = try SignatureAlgorithm.es256.sign(Self.message, with: TestKeys.p256)
        let der = derSignature(fromRaw: raw)
        #expect(der.first == 0x30 && der.count != 64)
        let error = #expect(throws: CryptoError.self) {
            try SignatureAlgorithm.es256.verify(der, for: Self.message, with: TestKeys.p256.publicKey)
        }
        #expect(error?.code == .badSignature)
        #expect(error?.reason.contains("64 bytes") == true, "\(error?.reason ?? "")")
    }

    @Test("ES256 signatures of the wrong length are rejected", arguments: [0, 1, 32, 63, 65, 96])
    func es256WrongLength(length: Int) {
        let error = #expect(throws: CryptoError.self) {
            try SignatureAlgorithm.es256.verify(Data(count: length), for: Self.message, with: TestKeys.p256.publicKey)
        }
        #expect(error?.code == .badSignature)
    }

    @Test("an all-zero 64-byte ES256 signature (r = s = 0) is rejected, not accepted")
    func es256Zero() {
        let error = #expect(throws: CryptoError.self) {
            try SignatureAlgorithm.es256.verify(Data(count: 64), for: Self.message, with: TestKeys.p256.publicKey)
        }
        #expect(error?.code == .badSignature)
    }

    @Test("verifying with a key of the wrong type is invalidKey")
    func verifyKeyMismatch() throws {
        let es = try SignatureAlgorithm.es256.sign(Self.message, with: TestKeys.p256)
        let rs = try SignatureAlgorithm.rs256.sign(Self.message, with: TestKeys.rsa2048)
        let cases: [(SignatureAlgorithm, Data, PublicKey)] = [
            (.es256, es, TestKeys.rsa2048.publicKey), (.es256, es, TestKeys.p384.publicKey),
            (.rs256, rs, TestKeys.p256.publicKey), (.rs256, rs, TestKeys.p384.publicKey),
        ]
        for (algorithm, signature, key) in cases {
            let error = #expect(throws: CryptoError.self) { try algorithm.verify(signature, for: Self.message, with: key) }
            #expect(error?.code == .invalidKey, "\(algorithm) with \(key.kind)")
        }
    }

    @Test("signing with a key of the wrong type is invalidKey")
    func signKeyMismatch() {
        let cases: [(SignatureAlgorithm, PrivateKey)] = [
            (.es256, TestKeys.rsa2048), (.es256, TestKeys.p384), (.rs256, TestKeys.p256), (.rs256, TestKeys.p384),
        ]
        for (algorithm, key) in cases {
            let error = #expect(throws: CryptoError.self) { try algorithm.sign(Self.message, with: key) }
            #expect(error?.code == .invalidKey, "\(algorithm) with \(key.kind)")
        }
    }

    @Test("an RSA-1024 key is refused for RS256 signing and verification")
    func rsa1024Refused() throws {
        let weak = try PrivateKey.generate(.rsa(bits: 1024))
        #expect(weak.kind == .rsa(bits: 1024))
        let signing = #expect(throws: CryptoError.self) { try SignatureAlgorithm.rs256.sign(Self.message, with: weak) }
        #expect(signing?.code == .invalidKey)
        let error = #expect(throws: CryptoError.self) {
            try SignatureAlgorithm.rs256.verify(Data(count: 128), for: Self.message, with: weak.publicKey)
        }
        #expect(error?.code == .invalidKey)
        #expect(error?.reason.contains("2048") == true, "\(error?.reason ?? "")")

        // Nor can one be built from a JWK's n and e.
        let (n, e) = try weak.publicKey.rsaComponents()
        #expect(n.count == 128)
        let fromJWK = #expect(throws: CryptoError.self) { try PublicKey.rsa(modulus: n, exponent: e) }
        #expect(fromJWK?.code == .invalidKey)
    }

    @Test("a key from a JWK's n and e equals the generated key it came from")
    func rsaFromComponents() throws {
        let (n, e) = try TestKeys.rsa2048.publicKey.rsaComponents()
        let rebuilt = try PublicKey.rsa(modulus: n, exponent: e)
        #expect(try rebuilt.pem() == TestKeys.rsa2048.publicKey.pem())
        let signature = try SignatureAlgorithm.rs256.sign(Self.message, with: TestKeys.rsa2048)
        try SignatureAlgorithm.rs256.verify(signature, for: Self.message, with: rebuilt)
    }

    @Test("private keys survive PEM: generate → pem() → init(pem:) → sign → verify with the original public key",
          arguments: [KeyKind.ecP256, .rsa(bits: 2048)])
    func privateKeyPEMRoundTrip(kind: KeyKind) throws {
        let original = kind == .ecP256 ? TestKeys.p256 : TestKeys.rsa2048
        let text = try original.pem()
        #expect(text.hasPrefix("-----BEGIN PRIVATE KEY-----\n"))
        let reloaded = try PrivateKey(pem: text)
        #expect(reloaded.kind == kind)
        let algorithm: SignatureAlgorithm = kind == .ecP256 ? .es256 : .rs256
        let signature = try algorithm.sign(Self.message, with: reloaded)
        try algorithm.verify(signature, for: Self.message, with: original.publicKey)
        #expect(try reloaded.publicKey.pem() == original.publicKey.pem())
    }

    @Test("a P-384 private key survives PEM and keeps its kind")
    func p384PEM() throws {
        #expect(try PrivateKey(pem: TestKeys.p384.pem()).kind == .ecP384)
    }

    @Test("a public key survives PEM")
    func publicKeyPEMRoundTrip() throws {
        let text = try TestKeys.p256.publicKey.pem()
        #expect(text.hasPrefix("-----BEGIN PUBLIC KEY-----\n"))
        let reloaded = try PublicKey(pem: text)
        #expect(reloaded.kind == .ecP256)
        let signature = try SignatureAlgorithm.es256.sign(Self.message, with: TestKeys.p256)
        try SignatureAlgorithm.es256.verify(signature, for: Self.message, with: reloaded)
    }

    static let encryptedPKCS8 = """
        -----BEGIN ENCRYPTED PRIVATE KEY-----
        MIHsMFcGCSqGSIb3DQEFDTBKMCkGCSqGSIb3DQEFDDAcBAhReYBJREsb9QICCAAw
        DAYIKoZIhvcNAgkFADAdBglghkgBZQMEASoEEPBF3v0EyH3UtnCPU2IaUqMEgZCH
        MyLsjjTE4YXn7JT0Awf4i+kY1jdJMaUu4h6P/EC1NxVdvCDu1ZKbuqnl9eXoG8jI
        lRxY9N/eJqwcHOXq+cNiQmB49vmebN3N6QBVXux0BeFRF3a0C3QBDIpb8xuGO8HW
        MbtR06kuZ3/+Syf60yNyz8nAy/PQpbr2oCG0Qsk2e2ALMOf3uiBOthELkAudKQM=
        -----END ENCRYPTED PRIVATE KEY-----
        """
    static let encryptedTraditional = """
        -----BEGIN EC PRIVATE KEY-----
        Proc-Type: 4,ENCRYPTED
        DEK-Info: AES-128-CBC,D7B6F293982D54A28DC9EA47A8C40E63

        GuOuNkMCXSxVAEvOvpZUbHK1lgUmNZiRR6CHnD3Yhve4y2bZU2tPjDah9wFmMuhq
        DICLkzJadJ3NH9C6G3DLnl63B+Svkvvq/ocM/Stlx6sfaFFww6B/NmI2j7NRmEJZ
        qlPysLSa6naJgqePl9mtX7lgoKhrNrH5qkcQQK9+Jjs=
        -----END EC PRIVATE KEY-----
        """

    static let badPrivateKeyPEMs: KeyValuePairs<String, String> = [
        "encrypted PKCS#8": encryptedPKCS8,
        "encrypted traditional EC": encryptedTraditional,
        "empty": "",
        "not PEM": "hello, world",
        "garbage body": "-----BEGIN PRIVATE KEY-----\nZm9vYmFy\n-----END PRIVATE KEY-----\n",
        "truncated": "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg\n",
        "public key": "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----\n",
        "over 64 KiB": "-----BEGIN PRIVATE KEY-----\n" + String(repeating: "A", count: 70_000) + "\n-----END PRIVATE KEY-----\n",
    ]

    @Test("encrypted, garbage or oversized private-key PEM is refused without prompting",
          arguments: badPrivateKeyPEMs.map(\.key))
    func badPrivateKeyPEM(name: String) throws {
        let text = try #require(Self.badPrivateKeyPEMs.first { $0.key == name }?.value)
        let error = #expect(throws: CryptoError.self, "\(name)") { try PrivateKey(pem: text) }
        #expect(error?.code == .invalidKey, "\(name)")
    }

    @Test("garbage public-key PEM is refused", arguments: ["", "nope", "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n"])
    func badPublicKeyPEM(text: String) {
        let error = #expect(throws: CryptoError.self) { try PublicKey(pem: text) }
        #expect(error?.code == .invalidKey)
    }

    @Test("RSA components outside 2048…8192 bits or with an oversized exponent are refused", arguments: [
        (255, 3), (1025, 3), (256, 0), (256, 9),
    ] as [(Int, Int)])
    func rsaComponentBounds(modulusBytes: Int, exponentBytes: Int) {
        let n = Data([0xc1] + [UInt8](repeating: 0x5b, count: modulusBytes - 2) + [0x01])
        let e = Data(repeating: 0x01, count: exponentBytes)
        let error = #expect(throws: CryptoError.self) { try PublicKey.rsa(modulus: n, exponent: e) }
        #expect(error?.code == .invalidKey)
    }

    @Test("generating an unsupported key kind is invalidKey")
    func generateOther() {
        let error = #expect(throws: CryptoError.self) { try PrivateKey.generate(.other("Ed25519")) }
        #expect(error?.code == .invalidKey)
    }

    @Test("SHA-256 matches FIPS 180-2 vectors")
    func sha256Vectors() {
        #expect(Digest.sha256(Data()) == Data(hex("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")))
        #expect(Digest.sha256(Data("abc".utf8)) == Data(hex("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")))
    }
}
