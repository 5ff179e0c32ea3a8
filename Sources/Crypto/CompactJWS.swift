import Foundation

/// The JOSE header fields StoreSync reads; anything else in the header is ignored.
public struct JWSHeader: Decodable, Sendable, Equatable {
    public let alg: String?
    public let kid: String?
    public let typ: String?
    /// Standard base64 DER certificates, leaf first (RFC 7515 §4.1.6).
    public let x5c: [String]?
}

/// A compact-serialised JWS (`header.payload.signature`), split and decoded but not yet verified.
///
/// Size is checked before any decoding, so an oversized token costs nothing but its length check.
public struct CompactJWS: Sendable {
    /// Tokens longer than this are refused outright (a notification with nested JWS is ~15 KB).
    public static let defaultMaxLength = 64 * 1024

    public let header: JWSHeader
    /// The decoded payload bytes (JSON for every token StoreSync handles).
    public let payload: Data
    public let signature: Data
    /// `base64url(header) "." base64url(payload)`: the bytes the signature covers.
    public let signingInput: Data

    public init(_ token: String, maxLength: Int = defaultMaxLength) throws {
        guard token.utf8.count <= maxLength else {
            throw CryptoError(.invalidEncoding, "JWS is \(token.utf8.count) bytes, more than the \(maxLength) allowed")
        }
        var text = token
        let parsed = try text.withUTF8 { bytes in try Self.split(bytes) }
        (header, payload, signature, signingInput) = parsed
    }

    /// Splits and decodes the three parts straight from the token's UTF-8 buffer (the dots found with
    /// memchr): a notification's JWS is 10–15 KB and is parsed once per verification.
    private static func split(_ bytes: UnsafeBufferPointer<UInt8>) throws
        -> (JWSHeader, payload: Data, signature: Data, signingInput: Data)
    {
        let dot = Int32(UInt8(ascii: "."))
        func findDot(from start: Int) -> Int? {
            guard start < bytes.count, let base = bytes.baseAddress,
                  let found = memchr(base + start, dot, bytes.count - start) else { return nil }
            return base.distance(to: found.assumingMemoryBound(to: UInt8.self))
        }
        guard let first = findDot(from: 0), let second = findDot(from: first + 1), findDot(from: second + 1) == nil else {
            throw CryptoError(.invalidEncoding, "JWS must have 3 dot-separated parts, found \(bytes.count { $0 == UInt8(dot) } + 1)")
        }
        let parts = [bytes[..<first], bytes[(first + 1)..<second], bytes[(second + 1)...]]
        guard !parts[0].isEmpty, !parts[1].isEmpty, !parts[2].isEmpty else {
            throw CryptoError(.invalidEncoding, "JWS has an empty part")
        }
        let headerBytes: Data, payload: Data, signature: Data
        do {
            headerBytes = try Base64URL.decode(utf8: parts[0])
            payload = try Base64URL.decode(utf8: parts[1])
            signature = try Base64URL.decode(utf8: parts[2])
        } catch let error as CryptoError {
            throw CryptoError(.invalidEncoding, "JWS part is not base64url: \(error.reason)")
        }
        let header: JWSHeader
        do {
            header = try JSONDecoder().decode(JWSHeader.self, from: headerBytes)
        } catch {
            throw CryptoError(.invalidEncoding, "JWS header is not a JSON object of the expected shape")
        }
        return (header, payload, signature, Data(bytes[..<second]))
    }

    /// Checks the signature with `key`, refusing any `alg` other than `algorithm`.
    public func verify(_ algorithm: SignatureAlgorithm, with key: PublicKey) throws {
        guard header.alg == algorithm.rawValue else {
            throw CryptoError(.badSignature, "JWS alg must be \(algorithm.rawValue), got \(header.alg ?? "none")")
        }
        try algorithm.verify(signature, for: signingInput, with: key)
    }

    /// Signs `payload` (JSON bytes) into a compact JWS whose header carries `alg` and the given fields.
    public static func sign(payload: Data, algorithm: SignatureAlgorithm, key: PrivateKey, kid: String? = nil,
                            typ: String? = nil, x5c: [Certificate]? = nil) throws -> String {
        var header: [String: Any] = ["alg": algorithm.rawValue]
        if let kid { header["kid"] = kid }
        if let typ { header["typ"] = typ }
        if let x5c { header["x5c"] = x5c.map { $0.der.base64EncodedString() } }
        let headerJSON = try JSONSerialization.data(withJSONObject: header, options: [.sortedKeys, .withoutEscapingSlashes])
        let input = Base64URL.encode(headerJSON) + "." + Base64URL.encode(payload)
        let signature = try algorithm.sign(Data(input.utf8), with: key)
        return input + "." + Base64URL.encode(signature)
    }
}

/// RSA signing keys from a JSON Web Key Set (RFC 7517), by `kid` — how Google publishes the keys that sign
/// Pub/Sub push tokens. Keys of other types or uses are skipped; a set with no usable key is an error.
public struct JSONWebKeySet: Sendable {
    public static let maxLength = 256 * 1024
    public let keys: [String: PublicKey]

    public init(json: Data) throws {
        guard json.count <= Self.maxLength else {
            throw CryptoError(.invalidEncoding, "JWKS is larger than \(Self.maxLength) bytes")
        }
        struct Document: Decodable {
            struct Key: Decodable {
                let kty: String?
                let kid: String?
                let use: String?
                let alg: String?
                let n: String?
                let e: String?
            }
            let keys: [Key]
        }
        let document: Document
        do {
            document = try JSONDecoder().decode(Document.self, from: json)
        } catch {
            throw CryptoError(.invalidEncoding, "JWKS is not a JSON object with a keys array")
        }
        var keys: [String: PublicKey] = [:]
        for key in document.keys where key.kty == "RSA" && (key.use ?? "sig") == "sig" && (key.alg ?? "RS256") == "RS256" {
            // One unusable entry must not take the whole set (and every push) down with it.
            guard let kid = key.kid, let n = try? Base64URL.decode(key.n ?? ""), let e = try? Base64URL.decode(key.e ?? ""),
                  let publicKey = try? PublicKey.rsa(modulus: n, exponent: e)
            else { continue }
            keys[kid] = publicKey
        }
        guard !keys.isEmpty else { throw CryptoError(.invalidKey, "JWKS holds no RSA signing key with a kid") }
        self.keys = keys
    }
}
