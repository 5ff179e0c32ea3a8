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
            der = try ECDSASignature.der(fromRaw: signature)
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
    static func der(fromRaw raw: Data) throws -> Data {
        let half = raw.count / 2
        guard let signature = ECDSA_SIG_new() else { throw CryptoError.openSSL(.internalError, "ECDSA_SIG_new") }
        defer { ECDSA_SIG_free(signature) }
        let (r, s) = raw.withUnsafeBytes { buffer -> (OpaquePointer?, OpaquePointer?) in
            let base = buffer.bindMemory(to: UInt8.self).baseAddress!
            return (BN_bin2bn(base, Int32(half), nil), BN_bin2bn(base + half, Int32(half), nil))
        }
        guard let r, let s, ECDSA_SIG_set0(signature, r, s) == 1 else {  // set0 takes ownership of r and s
            BN_free(r)
            BN_free(s)
            throw CryptoError.openSSL(.badSignature, "cannot build ECDSA signature")
        }
        var output: UnsafeMutablePointer<UInt8>?
        let length = i2d_ECDSA_SIG(signature, &output)
        guard length > 0, let output else { throw CryptoError.openSSL(.internalError, "i2d_ECDSA_SIG") }
        defer { storesync_openssl_free(output) }
        return Data(bytes: output, count: Int(length))
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
