import COpenSSL
import Foundation

extension PublicKey {
    /// The RSA modulus and exponent, big-endian without leading zeros: what a JWKS publishes as `n` and
    /// `e` (the simulator's key endpoint, and tests).
    public func rsaComponents() throws -> (modulus: Data, exponent: Data) {
        guard case .rsa = kind else { throw CryptoError(.invalidKey, "\(kind) key has no RSA components") }
        func component(_ name: String) throws -> Data {
            var number: OpaquePointer?
            guard EVP_PKEY_get_bn_param(handle.pointer, name, &number) == 1, let number else {
                throw CryptoError.openSSL(.invalidKey, "cannot read RSA \(name)")
            }
            defer { BN_free(number) }
            var bytes = [UInt8](repeating: 0, count: Int((BN_num_bits(number) + 7) / 8))
            BN_bn2bin(number, &bytes)
            return Data(bytes)
        }
        return (try component("n"), try component("e"))
    }

    /// This key as a JWK for a JWKS document (`kty`, `kid`, `use`, `alg`, `n`, `e`).
    public func jwk(kid: String) throws -> [String: String] {
        let (n, e) = try rsaComponents()
        return ["kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256", "n": Base64URL.encode(n), "e": Base64URL.encode(e)]
    }
}
