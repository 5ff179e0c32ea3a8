import Foundation
import StrictJSON

/// The JOSE header fields StoreSync reads. Other fields are ignored, except the two that change how a token
/// must be read: a decoded header never carries `crit` or `"b64": false` (see `decodeHeader`).
public struct JWSHeader: JSONReadable, Sendable, Equatable {
    public let alg: String?
    public let kid: String?
    public let typ: String?
    /// Standard base64 DER certificates, leaf first (RFC 7515 §4.1.6).
    public let x5c: [String]?
    /// Extensions the signer says a reader must understand (RFC 7515 §4.1.11); StoreSync understands none.
    /// Present as a key at all (even `null`) counts.
    let crit: [String]?
    let hasCrit: Bool
    /// RFC 7797: `false` means the payload is signed unencoded, which the compact form StoreSync reads
    /// cannot carry.
    let b64: Bool?

    public init(json reader: inout JSONReader) throws {
        var alg: String?, kid: String?, typ: String?, x5c: [String]?, crit: [String]?, hasCrit = false, b64: Bool?
        try reader.readObject { reader, key in
            switch key {
            case "alg": alg = try reader.readString()
            case "kid": kid = try reader.readString()
            case "typ": typ = try reader.readString()
            case "x5c": x5c = try reader.readStrings()
            case "crit":
                hasCrit = true
                crit = try reader.readStrings()
            case "b64": b64 = try reader.readBool()
            default: try reader.skipValue()
            }
        }
        (self.alg, self.kid, self.typ, self.x5c, self.crit, self.hasCrit, self.b64) = (alg, kid, typ, x5c, crit, hasCrit, b64)
    }

    /// Refuses what RFC 7515 §4.1.11 and RFC 7797 say a reader that does not implement them must refuse, as
    /// Apple's libraries do (`VERIFICATION_FAILURE`): a `crit` — any, since StoreSync implements no extension,
    /// and an empty one is itself invalid — and an unencoded payload. Accepting either would let a signer mean
    /// something other than what StoreSync verified.
    func requireUnderstood() throws {
        if hasCrit {
            let crit = crit ?? []
            let names = crit.isEmpty ? "an empty list" : crit.prefix(4).map { Self.printable($0) }.joined(separator: ", ")
            throw CryptoError(.unsupportedHeader, "JWS header crit names \(names), which StoreSync does not understand")
        }
        if b64 == false {
            throw CryptoError(.unsupportedHeader, "JWS header has b64 false (RFC 7797 unencoded payload), which is not supported")
        }
    }

    /// A header value for an error message: it comes from an unverified token, so only short plain names are
    /// echoed.
    private static func printable(_ name: String) -> String {
        let plain = !name.isEmpty && name.utf8.count <= 32 && name.utf8.allSatisfy { (0x21...0x7e).contains($0) && $0 != 0x22 }
        return plain ? "\"\(name)\"" : "(unprintable)"
    }
}

/// The three parts of a compact JWS (`header.payload.signature`): payload and signature decoded, the header
/// kept as its encoded bytes. Size is checked before any decoding, so an oversized token costs nothing but
/// its length check.
///
/// Keeping the header encoded lets a verifier recognise a header it has already judged (every payload
/// Apple signs with one leaf carries the same header, certificates included) without decoding it again.
public struct JWSParts: Sendable {
    /// Tokens longer than this are refused outright (a notification with nested JWS is ~15 KB).
    public static let defaultMaxLength = 64 * 1024

    /// The decoded payload bytes (JSON for every token StoreSync handles).
    public let payload: Data
    public let signature: Data
    /// `base64url(header) "." base64url(payload)`: the bytes the signature covers.
    public let signingInput: Data
    private let headerLength: Int

    /// The header exactly as it appears in the token (base64url text).
    public var encodedHeader: Data { signingInput.prefix(headerLength) }

    public init(_ token: String, maxLength: Int = defaultMaxLength) throws {
        guard token.utf8.count <= maxLength else {
            throw CryptoError(.invalidEncoding, "JWS is \(token.utf8.count) bytes, more than the \(maxLength) allowed")
        }
        var text = token
        (payload, signature, signingInput, headerLength) = try text.withUTF8 { bytes in try Self.split(bytes) }
    }

    /// Splits the token's UTF-8 buffer at its two dots (found with memchr) and decodes payload and signature.
    private static func split(_ bytes: UnsafeBufferPointer<UInt8>) throws
        -> (payload: Data, signature: Data, signingInput: Data, headerLength: Int)
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
        guard first > 0, second > first + 1, second + 1 < bytes.count else {
            throw CryptoError(.invalidEncoding, "JWS has an empty part")
        }
        do {
            return (try Base64URL.decode(utf8: bytes[(first + 1)..<second]), try Base64URL.decode(utf8: bytes[(second + 1)...]),
                    Data(bytes[..<second]), first)
        } catch let error as CryptoError {
            throw CryptoError(.invalidEncoding, "JWS part is not base64url: \(error.reason)")
        }
    }

    /// Decodes the header: base64url, then JSON of the expected shape, without a `crit` or an unencoded
    /// payload (`CryptoError.Code.unsupportedHeader`).
    public func decodeHeader() throws -> JWSHeader {
        try Self.header(from: try headerBytes())
    }

    /// The header's rules alone (see `JWSHeader.requireUnderstood`), for a token whose signature something
    /// else already covers: the JSON is decoded only when its bytes could name `crit` or `b64` (spelled out,
    /// or behind an escape), so the usual header costs one base64url decoding and a scan.
    public func requireUnderstoodHeader() throws {
        let bytes = try headerBytes()
        if Self.mayNameCritOrB64(bytes) { _ = try Self.header(from: bytes) }
    }

    /// Whether header bytes could name `crit` or `b64`: a quoted `"crit"` or `"b64"`, or any escape. One pass (two
    /// `Data.range(of:)` searches cost more than the base64 decoding before them, on 3 KB of `x5c`).
    static func mayNameCritOrB64(_ bytes: Data) -> Bool {
        bytes.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            func follows(_ name: StaticString, at start: Int) -> Bool {
                let count = name.utf8CodeUnitCount
                guard start + count <= bytes.count else { return false }
                return memcmp(bytes.baseAddress! + start, name.utf8Start, count) == 0
            }
            for index in bytes.indices {
                switch bytes[index] {
                case UInt8(ascii: "\\"): return true
                case UInt8(ascii: "\"") where follows(#"crit""#, at: index + 1) || follows(#"b64""#, at: index + 1):
                    return true
                default: continue
                }
            }
            return false
        }
    }

    private func headerBytes() throws -> Data {
        do {
            return try Base64URL.decode(utf8: encodedHeader)
        } catch let error as CryptoError {
            throw CryptoError(.invalidEncoding, "JWS part is not base64url: \(error.reason)")
        }
    }

    private static func header(from bytes: Data) throws -> JWSHeader {
        let header: JWSHeader
        do {
            header = try JSONReader.read(bytes) { try JWSHeader(json: &$0) }
        } catch {
            throw CryptoError(.invalidEncoding, "JWS header is not a JSON object of the expected shape")
        }
        try header.requireUnderstood()
        return header
    }
}

/// A compact-serialised JWS with its header decoded, not yet verified.
public struct CompactJWS: Sendable {
    public static let defaultMaxLength = JWSParts.defaultMaxLength

    public let header: JWSHeader
    public let parts: JWSParts

    /// The decoded payload bytes (JSON for every token StoreSync handles).
    public var payload: Data { parts.payload }
    public var signature: Data { parts.signature }
    /// `base64url(header) "." base64url(payload)`: the bytes the signature covers.
    public var signingInput: Data { parts.signingInput }

    public init(_ token: String, maxLength: Int = defaultMaxLength) throws {
        parts = try JWSParts(token, maxLength: maxLength)
        header = try parts.decodeHeader()
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
        try sign(payload: payload, header: JWSSigningHeader(algorithm: algorithm, kid: kid, typ: typ, x5c: x5c), key: key)
    }

    /// Signs `payload` under a header encoded beforehand.
    public static func sign(payload: Data, header: JWSSigningHeader, key: PrivateKey) throws -> String {
        let input = header.encoded + "." + Base64URL.encode(payload)
        let signature = try header.algorithm.sign(Data(input.utf8), with: key)
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
