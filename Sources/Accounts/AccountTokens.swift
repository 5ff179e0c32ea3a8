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

    /// `sha256` hashes the secret (the Crypto adapter's digest, injected so this module stays free of C). With
    /// `accountID` a customer of another account is as unknown as one that does not exist.
    public static func issue(customerID: String, accountID: Int64? = nil, rotate: Bool = false,
                             sha256: @Sendable (Data) -> Data, on db: isolated PostgresConnection) throws -> Issued {
        guard UUID(uuidString: customerID) != nil else { throw AccountsError(.unknownCustomer, "customer id \(customerID.prefix(64)) is not a UUID") }
        // Two issues for one customer wait on each other, so they never both find no active token (the unique
        // index would fail the second). An advisory lock, not `FOR UPDATE`: the API's role may not update customers.
        let customer = try db.query("""
            SELECT account_id, pg_advisory_xact_lock(hashtextextended('storesync.account-tokens:' || id::text, 0))::text
            FROM customers WHERE id = $1::uuid AND ($2::bigint IS NULL OR account_id = $2)
            """, [customerID, accountID])
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

    /// Revokes a token (of `accountID`'s customers only, when given); revoking twice is fine. The token keeps
    /// identifying its customer for linking. False when there is no such token.
    public static func revoke(token: String, accountID: Int64? = nil, on db: isolated PostgresConnection) throws -> Bool {
        guard UUID(uuidString: token) != nil else { return false }
        return try !db.query("""
            UPDATE account_tokens SET status = 'revoked', revoked_at = COALESCE(revoked_at, now())
            WHERE token = $1::uuid AND ($2::bigint IS NULL OR account_id = $2) RETURNING 1
            """, [token, accountID]).isEmpty
    }
}
