import COpenSSL
import CStoreSyncShims
import Foundation

/// The JWS signature algorithms StoreSync uses. Verification pins the algorithm to the key's type, so a
/// token cannot choose how it is checked.
public enum SignatureAlgorithm: String, Sendable {
    /// ECDSA P-256 with SHA-256; signatures are raw 64-byte r‖s (RFC 7518 §3.4), not DER.
    case es256 = "ES256"
    /// RSASSA-PKCS1-v1_5 with SHA-256.
    case rs256 = "RS256"

    /// Checks `signature` over `message`. Throws `.badSignature` when it does not match, `.invalidKey` when
    /// the key does not fit the algorithm.
    public func verify(_ signature: Data, for message: Data, with key: PublicKey) throws {
        let der: Data
        switch self {
        case .es256:
            guard key.kind == .ecP256 else { throw CryptoError(.invalidKey, "ES256 needs an EC P-256 key, got \(key.kind)") }
            guard signature.count == 64 else {
                throw CryptoError(.badSignature, "ES256 signature must be 64 bytes (r‖s), got \(signature.count)")
            }
            der = ECDSASignature.der(fromRaw: signature)
        case .rs256:
            guard case .rsa(let bits) = key.kind, bits >= 2048 else {
                throw CryptoError(.invalidKey, "RS256 needs an RSA key of at least 2048 bits, got \(key.kind)")
            }
            der = signature
        }
        guard let context = EVP_MD_CTX_new() else { throw CryptoError.openSSL(.internalError, "EVP_MD_CTX_new") }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, Digest.sha256, nil, key.handle.pointer) == 1 else {
            throw CryptoError.openSSL(.invalidKey, "cannot verify with this key")
        }
        let result = der.withUnsafeBytes { sig in
            message.withUnsafeBytes { bytes in
                EVP_DigestVerify(context, sig.bindMemory(to: UInt8.self).baseAddress, sig.count,
                                 bytes.bindMemory(to: UInt8.self).baseAddress, bytes.count)
            }
        }
        guard result == 1 else {
            _ = drainErrorQueue()
            throw CryptoError(.badSignature, "\(rawValue) signature does not match")
        }
    }

    /// Signs `message`; ES256 signatures come back as raw r‖s.
    public func sign(_ message: some DataProtocol, with key: PrivateKey) throws -> Data {
        switch (self, key.kind) {
        case (.es256, .ecP256): break
        case (.rs256, .rsa(let bits)) where bits >= 2048: break
        default: throw CryptoError(.invalidKey, "\(rawValue) cannot sign with a \(key.kind) key")
        }
        guard let context = EVP_MD_CTX_new() else { throw CryptoError.openSSL(.internalError, "EVP_MD_CTX_new") }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestSignInit(context, nil, Digest.sha256, nil, key.handle.pointer) == 1 else {
            throw CryptoError.openSSL(.invalidKey, "cannot sign with this key")
        }
        let bytes = Array(message)
        var length = 0
        guard EVP_DigestSign(context, nil, &length, bytes, bytes.count) == 1 else {
            throw CryptoError.openSSL(.internalError, "EVP_DigestSign (size)")
        }
        var signature = [UInt8](repeating: 0, count: length)
        guard EVP_DigestSign(context, &signature, &length, bytes, bytes.count) == 1 else {
            throw CryptoError.openSSL(.internalError, "EVP_DigestSign")
        }
        let der = Data(signature.prefix(length))
        return self == .es256 ? try ECDSASignature.raw(fromDER: der, width: 32) : der
    }
}

/// Conversions between JWS's raw r‖s and the DER `ECDSA-Sig-Value` OpenSSL speaks.
enum ECDSASignature {
    /// `SEQUENCE { INTEGER r, INTEGER s }`, written out directly: this runs on every verification, and a round
    /// trip through OpenSSL's BIGNUMs cost more than the encoding itself. Each half is big-endian unsigned, so
    /// DER wants its leading zeros dropped and a zero byte added when the top bit is set (zero itself is `00`).
    /// Halves of up to 60 bytes (P-256's are 32) keep every length below 128, DER's one-byte form.
    static func der(fromRaw raw: Data) -> Data {
        precondition(raw.count <= 120, "raw ECDSA signatures of more than 120 bytes need long-form DER lengths")
        var der: [UInt8] = [0x30, 0]
        der.reserveCapacity(raw.count + 8)
        raw.withUnsafeBytes { raw in
            for magnitude in [raw.prefix(raw.count / 2), raw.dropFirst(raw.count / 2)] {
                let significant = magnitude.drop { $0 == 0 }
                let pad = significant.first.map { $0 & 0x80 != 0 } ?? true
                der += [0x02, UInt8(significant.count + (pad ? 1 : 0))]
                if pad { der.append(0) }
                der += significant
            }
        }
        der[1] = UInt8(der.count - 2)
        return Data(der)
    }

    static func raw(fromDER der: Data, width: Int) throws -> Data {
        let parsed = der.withUnsafeBytes { buffer -> OpaquePointer? in
            var pointer: UnsafePointer<UInt8>? = buffer.bindMemory(to: UInt8.self).baseAddress
            return d2i_ECDSA_SIG(nil, &pointer, buffer.count)
        }
        guard let parsed else { throw CryptoError.openSSL(.invalidEncoding, "not a DER ECDSA signature") }
        defer { ECDSA_SIG_free(parsed) }
        var out = [UInt8](repeating: 0, count: width * 2)
        // Left-padded to the curve width: about 1 signature in 128 has a short r or s.
        guard BN_bn2binpad(ECDSA_SIG_get0_r(parsed), &out, Int32(width)) == Int32(width),
              out.withUnsafeMutableBufferPointer({ BN_bn2binpad(ECDSA_SIG_get0_s(parsed), $0.baseAddress! + width, Int32(width)) })
                == Int32(width)
        else { throw CryptoError.openSSL(.internalError, "BN_bn2binpad") }
        return Data(out)
    }
}

/// SHA-256, fetched once: an implicit fetch by name on every operation costs more than the hash itself.
public enum Digest {
    // An EVP_MD is immutable once fetched; OpenSSL documents fetched algorithms as thread-safe to share.
    nonisolated(unsafe) static let sha256: OpaquePointer = EVP_MD_fetch(nil, "SHA256", nil)!

    public static func sha256(_ data: some DataProtocol) -> Data {
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let bytes = Array(data)
        _ = EVP_Digest(bytes, bytes.count, &digest, &length, sha256, nil)
        return Data(digest)
    }
}
