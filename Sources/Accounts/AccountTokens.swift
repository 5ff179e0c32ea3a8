import Foundation
import Postgres

/// Issuing, reusing, rotating and revoking account tokens, as the spec's Account Tokens section describes.
/// The secret is shown once; only its SHA-256 is stored.
public enum AccountTokens {
    public struct Issued: Sendable, Equatable {
        public let token: String
        /// `nil` when an active token was reused: its secret cannot be shown again.
        public let secret: String?
        public let reused: Bool
    }

    /// `sha256` hashes the secret (the Crypto adapter's digest, injected so this module stays free of C).
    public static func issue(customerID: String, rotate: Bool = false, sha256: @Sendable (Data) -> Data,
                             on db: isolated PostgresConnection) throws -> Issued {
        guard UUID(uuidString: customerID) != nil else { throw AccountsError(.unknownCustomer, "customer id \(customerID.prefix(64)) is not a UUID") }
        let customer = try db.query("SELECT account_id FROM customers WHERE id = $1::uuid FOR UPDATE", [customerID])
        guard let accountID: Int64 = try customer.first?.decode(0) else {
            throw AccountsError(.unknownCustomer, "no customer \(customerID)")
        }
        if rotate {
            _ = try db.query("""
                UPDATE account_tokens SET status = 'revoked', revoked_at = now() WHERE customer_id = $1::uuid AND status = 'active'
                """, [customerID])
        } else if let active: String = try db.query("""
            SELECT token::text FROM account_tokens WHERE customer_id = $1::uuid AND status = 'active' ORDER BY created_at LIMIT 1
            """, [customerID]).first?.decode(0) {
            return Issued(token: active, secret: nil, reused: true)
        }
        let token = UUID().uuidString.lowercased()
        let secret = Secrets.random()
        _ = try db.query("""
            INSERT INTO account_tokens (token, account_id, customer_id, secret_sha256) VALUES ($1::uuid, $2, $3::uuid, $4::bytea)
            """, [token, accountID, customerID, sha256(Data(secret.utf8))])
        return Issued(token: token, secret: secret, reused: false)
    }

    /// Revokes a token; revoking twice is fine. The token keeps identifying its customer for linking.
    public static func revoke(token: String, on db: isolated PostgresConnection) throws -> Bool {
        guard UUID(uuidString: token) != nil else { return false }
        return try !db.query("""
            UPDATE account_tokens SET status = 'revoked', revoked_at = COALESCE(revoked_at, now())
            WHERE token = $1::uuid RETURNING 1
            """, [token]).isEmpty
    }
}
