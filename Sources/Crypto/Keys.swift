import COpenSSL
import CStoreSyncShims
import Foundation

/// The key types StoreSync signs and verifies with.
public enum KeyKind: Sendable, Equatable, CustomStringConvertible {
    case ecP256
    case ecP384
    case rsa(bits: Int)
    case other(String)

    public var description: String {
        switch self {
        case .ecP256: "EC P-256"
        case .ecP384: "EC P-384"
        case .rsa(let bits): "RSA-\(bits)"
        case .other(let name): name
        }
    }
}

/// Owns one `EVP_PKEY`. Immutable after construction, so safe to share across threads (OpenSSL
/// objects are thread-safe as long as nothing modifies them). `package` so that the test PKI adapter (`TestPKI`)
/// can sign the certificates it issues.
package final class KeyHandle: @unchecked Sendable {
    package let pointer: OpaquePointer
    /// Read once: OpenSSL answers it with name lookups, and every signature check asks.
    let kind: KeyKind

    init(_ pointer: OpaquePointer) {
        self.pointer = pointer
        kind = Self.kind(of: pointer)
    }

    deinit { EVP_PKEY_free(pointer) }

    private static func kind(of pointer: OpaquePointer) -> KeyKind {
        if EVP_PKEY_is_a(pointer, "RSA") == 1 { return .rsa(bits: Int(EVP_PKEY_get_bits(pointer))) }
        if EVP_PKEY_is_a(pointer, "EC") == 1 {
            var name = [CChar](repeating: 0, count: 64)
            var length = 0
            if EVP_PKEY_get_utf8_string_param(pointer, OSSL_PKEY_PARAM_GROUP_NAME, &name, name.count, &length) == 1 {
                let group = String(decoding: name.prefix(length).map(UInt8.init(bitPattern:)), as: UTF8.self)
                if group == "prime256v1" || group == "P-256" { return .ecP256 }
                if group == "secp384r1" || group == "P-384" { return .ecP384 }
                return .other("EC \(group)")
            }
        }
        return .other(String(cString: EVP_PKEY_get0_type_name(pointer)))
    }
}

/// A public key for verifying signatures.
public struct PublicKey: Sendable {
    package let handle: KeyHandle

    init(_ handle: KeyHandle) { self.handle = handle }

    public var kind: KeyKind { handle.kind }

    /// An RSA public key from a JWK's base64url `n` and `e` (what Google's JWKS publishes).
    public static func rsa(modulus n: Data, exponent e: Data) throws -> PublicKey {
        guard n.count >= 256, n.count <= 1024, !e.isEmpty, e.count <= 8 else {
            throw CryptoError(.invalidKey, "RSA modulus must be 2048 to 8192 bits and the exponent at most 8 bytes")
        }
        let modulus = n.withUnsafeBytes { BN_bin2bn($0.bindMemory(to: UInt8.self).baseAddress, Int32(n.count), nil) }
        let exponent = e.withUnsafeBytes { BN_bin2bn($0.bindMemory(to: UInt8.self).baseAddress, Int32(e.count), nil) }
        defer {
            BN_free(modulus)
            BN_free(exponent)
        }
        guard let builder = OSSL_PARAM_BLD_new() else { throw CryptoError.openSSL(.internalError, "OSSL_PARAM_BLD_new") }
        defer { OSSL_PARAM_BLD_free(builder) }
        // The builder, and the parameter array it produces, keep the key-name pointers: they must outlive
        // EVP_PKEY_fromdata, which a Swift string's temporary C string would not.
        let nameN = strdup("n"), nameE = strdup("e")
        defer {
            free(nameN)
            free(nameE)
        }
        guard OSSL_PARAM_BLD_push_BN(builder, nameN, modulus) == 1, OSSL_PARAM_BLD_push_BN(builder, nameE, exponent) == 1,
              let parameters = OSSL_PARAM_BLD_to_param(builder)
        else { throw CryptoError.openSSL(.invalidKey, "cannot build RSA parameters") }
        defer { OSSL_PARAM_free(parameters) }
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "RSA", nil) else {
            throw CryptoError.openSSL(.internalError, "EVP_PKEY_CTX_new_from_name")
        }
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        guard EVP_PKEY_fromdata_init(context) == 1,
              EVP_PKEY_fromdata(context, &key, STORESYNC_EVP_PKEY_PUBLIC_KEY, parameters) == 1, let key
        else { throw CryptoError.openSSL(.invalidKey, "RSA public key from n and e rejected") }
        return PublicKey(KeyHandle(key))
    }

    /// A public key from a PEM `PUBLIC KEY` block (SubjectPublicKeyInfo).
    public init(pem: String) throws {
        let key: OpaquePointer? = try withMemoryBIO(Data(pem.utf8)) { PEM_read_bio_PUBKEY($0, nil, nil, nil) }
        guard let key else { throw CryptoError.openSSL(.invalidKey, "not a PEM public key") }
        handle = KeyHandle(key)
    }

    /// The key as a PEM `PUBLIC KEY` block.
    public func pem() throws -> String {
        try withOutputBIO { PEM_write_bio_PUBKEY($0, handle.pointer) }
    }
}

/// A private key for signing: the App Store Connect `.p8` key (P-256), a Google service-account key
/// (RSA), or a key generated for a test or simulator PKI.
public struct PrivateKey: Sendable {
    package let handle: KeyHandle

    public var kind: KeyKind { handle.kind }

    /// The matching public key.
    public var publicKey: PublicKey { PublicKey(handle) }

    /// Reads a PEM private key (PKCS#8 `PRIVATE KEY`, as Apple's `.p8` files and Google's JSON keys hold it,
    /// or the traditional `EC PRIVATE KEY` / `RSA PRIVATE KEY`). Encrypted keys are refused.
    public init(pem: String) throws {
        guard pem.utf8.count <= 64 * 1024 else { throw CryptoError(.invalidKey, "PEM private key larger than 64 KiB") }
        let key: OpaquePointer? = try withMemoryBIO(Data(pem.utf8)) { bio in
            PEM_read_bio_PrivateKey(bio, nil, { _, _, _, _ in -1 }, nil)  // no passphrase prompt, ever
        }
        guard let key else { throw CryptoError.openSSL(.invalidKey, "not an unencrypted PEM private key") }
        handle = KeyHandle(key)
    }

    private init(handle: KeyHandle) { self.handle = handle }

    /// A fresh key; for test and simulator PKI, never for anything a store must trust.
    public static func generate(_ kind: KeyKind) throws -> PrivateKey {
        let key: OpaquePointer?
        switch kind {
        case .ecP256: key = storesync_ec_generate("P-256")
        case .ecP384: key = storesync_ec_generate("P-384")
        case .rsa(let bits): key = storesync_rsa_generate(UInt32(bits))
        case .other(let name): throw CryptoError(.invalidKey, "cannot generate \(name) keys")
        }
        guard let key else { throw CryptoError.openSSL(.internalError, "key generation failed") }
        return PrivateKey(handle: KeyHandle(key))
    }

    /// The key as unencrypted PKCS#8 PEM, the format `init(pem:)` and the stores use.
    public func pem() throws -> String {
        try withOutputBIO { PEM_write_bio_PKCS8PrivateKey($0, handle.pointer, nil, nil, 0, nil, nil) }
    }
}

/// Runs `body` with a read-only memory BIO over `data`.
func withMemoryBIO<T>(_ data: Data, _ body: (OpaquePointer) throws -> T) throws -> T {
    try data.withUnsafeBytes { buffer in
        guard let bio = BIO_new_mem_buf(buffer.baseAddress, Int32(buffer.count)) else {
            throw CryptoError.openSSL(.internalError, "BIO_new_mem_buf")
        }
        defer { BIO_free(bio) }
        return try body(bio)
    }
}

/// Runs a PEM writer into a memory BIO and returns what it wrote.
func withOutputBIO(_ write: (OpaquePointer) -> Int32) throws -> String {
    guard let bio = BIO_new(BIO_s_mem()) else { throw CryptoError.openSSL(.internalError, "BIO_new") }
    defer { BIO_free(bio) }
    guard write(bio) == 1 else { throw CryptoError.openSSL(.internalError, "PEM write failed") }
    var pointer: UnsafeMutablePointer<CChar>?
    let length = BIO_ctrl(bio, BIO_CTRL_INFO, 0, &pointer)
    guard let pointer, length > 0 else { return "" }
    return String(decoding: UnsafeRawBufferPointer(start: pointer, count: length), as: UTF8.self)
}
