import COpenSSL
import Foundation

/// HMAC-SHA-256: a tag only the holder of `key` can make, for tokens a server hands out and later checks
/// without storing them (the console's CSRF tokens).
public enum HMACSHA256 {
    public static func tag(_ message: some DataProtocol, key: some DataProtocol) -> Data {
        var tag = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let keyBytes = Array(key), messageBytes = Array(message)
        _ = HMAC(Digest.sha256, keyBytes, Int32(keyBytes.count), messageBytes, messageBytes.count, &tag, &length)
        return Data(tag)
    }
}

/// PBKDF2-HMAC-SHA-256 (RFC 8018), for operators' passwords kept only as a slow salted hash.
public enum PasswordHash {
    /// OWASP's 2023 figure for PBKDF2-HMAC-SHA-256.
    public static let defaultIterations = 600_000
    /// Fewer is too cheap to slow a guess down; more would make one login take minutes.
    public static let minIterations = 1_000
    public static let maxIterations = 10_000_000

    /// The 32-byte key `password` and `salt` derive; `iterations` from `minIterations` to `maxIterations`.
    public static func pbkdf2(_ password: some DataProtocol, salt: some DataProtocol, iterations: Int) throws -> Data {
        guard (minIterations...maxIterations).contains(iterations) else {
            throw CryptoError(.invalidKey, "PBKDF2 needs 1,000 to 10,000,000 iterations, not \(iterations)")
        }
        var derived = [UInt8](repeating: 0, count: 32)
        let passwordBytes = Array(password), saltBytes = Array(salt)
        let done = passwordBytes.withUnsafeBufferPointer { pass in
            pass.withMemoryRebound(to: CChar.self) { pass in
                PKCS5_PBKDF2_HMAC(pass.baseAddress, Int32(pass.count), saltBytes, Int32(saltBytes.count), Int32(iterations),
                                  Digest.sha256, Int32(derived.count), &derived)
            }
        }
        guard done == 1 else { throw CryptoError.openSSL(.internalError, "PKCS5_PBKDF2_HMAC") }
        return Data(derived)
    }
}
