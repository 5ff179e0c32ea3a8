import Foundation
import Postgres
import StoreModel

/// Setting up what the mirror maps to — connections, plans and prices, product mappings, customers — without
/// SQL. Used by the CLI and by tests; the rows it writes are the ones SubscriptionFlow's own settings pages
/// would write.
public enum Catalog {
    /// A new store connection. `requireIssuedTokens` defaults by the spec's cut-over date: on for
    /// connections created from 2026-10-28.
    public struct NewConnection: Sendable {
        public var accountID: Int64
        public var store: Store
        public var appIdentifier: String
        public var appAppleID: Int64?
        public var environment: StoreEnvironment
        public var requireIssuedTokens: Bool?
        public var answerConsumptionRequests = false
        public var consumptionRefundPreference: String?
        public var apiKeyID: String?
        public var apiIssuerID: String?
        public var apiPrivateKeyPEM: String?
        public var apiBaseURL: String?
        /// Apple only: where a Production connection looks up a purchase Production does not know (nil: Apple's
        /// sandbox host).
        public var sandboxAPIBaseURL: String?
        public var trustedRootsPEM: String?
        public var apiClientEmail: String?
        public var apiTokenURI: String?
        public var pushAudience: String?
        public var pushServiceAccount: String?
        public var pushJWKSURL: String?

        public init(accountID: Int64, store: Store, appIdentifier: String, environment: StoreEnvironment) {
            self.accountID = accountID
            self.store = store
            self.appIdentifier = appIdentifier
            self.environment = environment
        }
    }

    /// The day from which new connections require SubscriptionFlow-issued account tokens by default.
    public static let issuedTokensRequiredFrom = Date(timeIntervalSince1970: 1_793_145_600)  // 2026-10-28T00:00:00Z

    /// A new account (tenant) for `host`, lowercase and without a port; its id.
    public static func addAccount(host: String, name: String = "", on db: isolated PostgresConnection) throws -> Int64 {
        try db.query("INSERT INTO accounts (host, name) VALUES ($1, $2) RETURNING id", [host, name])[0].decode(0)
    }

    public static func addConnection(_ new: NewConnection, now: Date = Date(),
                                     on db: isolated PostgresConnection) throws -> StoreConnection {
        let requireIssued = new.requireIssuedTokens ?? (now >= issuedTokensRequiredFrom)
        return try StoreConnection(row: db.query("""
            INSERT INTO store_connections (account_id, store, app_identifier, app_apple_id, environment,
                require_issued_tokens, answer_consumption_requests, consumption_refund_preference, api_key_id,
                api_issuer_id, api_private_key, api_base_url, trusted_roots_pem, created_at, api_client_email,
                api_token_uri, push_audience, push_service_account, push_jwks_url, sandbox_api_base_url)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)
            RETURNING \(StoreConnection.columns)
            """, [new.accountID, new.store.rawValue, new.appIdentifier, new.appAppleID, new.environment.rawValue,
                  requireIssued, new.answerConsumptionRequests, new.consumptionRefundPreference, new.apiKeyID,
                  new.apiIssuerID, new.apiPrivateKeyPEM, new.apiBaseURL, new.trustedRootsPEM, now, new.apiClientEmail,
                  new.apiTokenURI, new.pushAudience, new.pushServiceAccount, new.pushJWKSURL, new.sandboxAPIBaseURL])[0])
    }

    /// A plan (by code, created when missing) and one of its prices; returns the price's id.
    public static func addPlanPrice(accountID: Int64, planCode: String, priceCode: String, amount: Money,
                                    period: String = "P1M", entitlements: [String] = [],
                                    on db: isolated PostgresConnection) throws -> Int64 {
        let planID: Int64 = try db.query("""
            INSERT INTO plans (account_id, code, name) VALUES ($1, $2, $2)
            ON CONFLICT (account_id, code) DO UPDATE SET code = EXCLUDED.code RETURNING id
            """, [accountID, planCode])[0].decode(0)
        for key in entitlements {
            _ = try db.query("""
                WITH e AS (INSERT INTO entitlements (account_id, key) VALUES ($1, $2)
                           ON CONFLICT (account_id, key) DO UPDATE SET key = EXCLUDED.key RETURNING id)
                INSERT INTO plan_entitlements (plan_id, entitlement_id) SELECT $3, id FROM e ON CONFLICT DO NOTHING
                """, [accountID, key, planID])
        }
        return try db.query("""
            INSERT INTO plan_prices (plan_id, code, amount_minor, currency, period) VALUES ($1, $2, $3, $4, $5)
            ON CONFLICT (plan_id, code) DO UPDATE SET amount_minor = EXCLUDED.amount_minor,
                currency = EXCLUDED.currency, period = EXCLUDED.period
            RETURNING id
            """, [planID, priceCode, amount.minorUnits, amount.currency, period])[0].decode(0)
    }

    /// Maps a store product (and Google base plan) to a plan price of the connection's account; mapping
    /// again replaces the target.
    public static func mapProduct(connectionID: Int64, productID: String, basePlanID: String? = nil, planPriceID: Int64,
                                  on db: isolated PostgresConnection) throws {
        let rows = try db.query("""
            INSERT INTO product_mappings (connection_id, store_product_id, base_plan_id, plan_price_id)
            SELECT c.id, $2, $3, pp.id FROM store_connections c
            JOIN plan_prices pp ON pp.id = $4 JOIN plans p ON p.id = pp.plan_id AND p.account_id = c.account_id
            WHERE c.id = $1
            ON CONFLICT (connection_id, store_product_id, base_plan_id) DO UPDATE SET plan_price_id = EXCLUDED.plan_price_id
            RETURNING 1
            """, [connectionID, productID, basePlanID ?? "", planPriceID])
        guard !rows.isEmpty else {
            throw AccountsError(.unknownConnection, "no connection \(connectionID) with a plan price \(planPriceID) in its account")
        }
    }

    public static func addCustomer(accountID: Int64, email: String? = nil, name: String = "",
                                   on db: isolated PostgresConnection) throws -> String {
        try db.query("INSERT INTO customers (account_id, email, name) VALUES ($1, $2, $3) RETURNING id::text",
                     [accountID, email, name])[0].decode(0)
    }
}
