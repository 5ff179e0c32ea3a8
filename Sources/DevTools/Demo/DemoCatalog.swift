import Accounts
import Crypto
import Foundation
import Postgres
import StoreModel

/// The demo's configuration in the database: one account, its App Store connection to the demo simulator,
/// a plan with a monthly and a yearly price mapped to two products, and two customers with account tokens —
/// the rows `accounts add`, `connections add`, `plans add`, `products map`, `customers add` and `tokens issue`
/// would write. It is written only into a database without accounts, so real configuration is never touched.
enum DemoCatalog {
    static let bundleID = "com.example.storesync.demo"
    static let appAppleID: Int64 = 1_000_000_001
    static let keyID = "DEMOKEY001"
    static let planCode = "pro"

    /// A product the demo app sells, with the price the App Store charges (milliunits, as Apple writes them).
    struct Product: Sendable {
        let id: String
        let priceCode: String
        let milliunits: Int64
        let currency: String
        let period: String

        var amount: Money {
            get throws { try Money.fromMilliunits(milliunits, currency: currency) }
        }
    }

    static let monthly = Product(id: "demo.pro.monthly", priceCode: "monthly", milliunits: 9_990, currency: "USD", period: "P1M")
    static let yearly = Product(id: "demo.pro.yearly", priceCode: "yearly", milliunits: 99_990, currency: "USD", period: "P1Y")

    /// What the connection needs to reach the simulator of this run: its URL, the root its payloads chain to
    /// and the API key it accepts. All three change whenever the simulator starts.
    struct SimulatorAccess: Sendable {
        let baseURL: String
        let rootPEM: String
        let issuerID: String
        let privateKeyPEM: String
    }

    struct Customer: Sendable {
        let id: String
        let name: String
        /// The account token the app sets as `appAccountToken` on purchases.
        let token: UUID
        /// The token's client secret, which the app sends with it: known only on the run that issued it.
        var secret: String? = nil
    }

    struct Seeded: Sendable {
        let accountID: Int64
        let connectionID: Int64
        /// Customer A, then customer B.
        let customers: [Customer]
        /// The account's Mobile Stores API client, its secret shown this once.
        let apiClient: APIClients.Created
    }

    /// What the database holds as far as the demo is concerned.
    enum State: Sendable, Equatable {
        case empty
        case demo(accountID: Int64)
        /// Accounts exist and none is the demo's: the demo stays out.
        case configured(accounts: Int)
    }

    static func state(host: String, on db: isolated PostgresConnection) throws -> State {
        let row = try db.query("SELECT count(*), min(id) FILTER (WHERE host = $1) FROM accounts", [host])[0]
        let count: Int = try row.decode(0)
        if let id: Int64 = try row.decodeOptional(1) { return .demo(accountID: id) }
        return count == 0 ? .empty : .configured(accounts: count)
    }

    /// The highest numeric Apple transaction id the database holds (lineages and charges), if any. A demo
    /// simulator numbers its transactions above it: it starts afresh each time, and ids it handed out in an
    /// earlier run are mirrored already — reusing one would make a new purchase look like an old one.
    static func highestTransactionNumber(on db: isolated PostgresConnection) throws -> Int64? {
        try db.query("""
            SELECT max(CASE WHEN n ~ '^[0-9]{1,18}$' THEN n::bigint END) FROM (
                SELECT p.lineage FROM store_purchases p JOIN store_connections c ON c.id = p.connection_id
                WHERE c.store = 'apple'
                UNION ALL SELECT store_transaction_id FROM invoices WHERE store = 'apple'
            ) ids (n)
            """)[0].decodeOptional(0)
    }

    /// Seeds the demo when the database has no accounts; `nil` (and nothing written) otherwise. The advisory
    /// lock makes the check and the writes one step even when two demos start at once.
    static func seed(host: String, access: SimulatorAccess, on db: isolated PostgresConnection) throws -> Seeded? {
        try lock(on: db)
        guard try state(host: host, on: db) == .empty else { return nil }
        let accountID: Int64 = try db.query("INSERT INTO accounts (host, name) VALUES ($1, 'StoreSync demo') RETURNING id",
                                            [host])[0].decode(0)
        var new = Catalog.NewConnection(accountID: accountID, store: .apple, appIdentifier: bundleID, environment: .production)
        new.appAppleID = appAppleID
        new.requireIssuedTokens = true
        new.apiKeyID = keyID
        new.apiIssuerID = access.issuerID
        new.apiPrivateKeyPEM = access.privateKeyPEM
        new.apiBaseURL = access.baseURL
        new.trustedRootsPEM = access.rootPEM
        let connection = try Catalog.addConnection(new, on: db)
        for product in [monthly, yearly] {
            let price = try Catalog.addPlanPrice(accountID: accountID, planCode: planCode, priceCode: product.priceCode,
                                                 amount: try product.amount, period: product.period, entitlements: [planCode],
                                                 on: db)
            try Catalog.mapProduct(connectionID: connection.id, productID: product.id, planPriceID: price, on: db)
        }
        var secrets: [String: String] = [:]
        for (name, email) in [("Customer A", "customer-a@example.com"), ("Customer B", "customer-b@example.com")] {
            let id = try Catalog.addCustomer(accountID: accountID, email: email, name: name, on: db)
            secrets[id] = try AccountTokens.issue(customerID: id, sha256: { Digest.sha256($0) }, on: db).secret
        }
        let client = try APIClients.add(accountID: accountID, name: "demo backend", sha256: { Digest.sha256($0) }, on: db)
        let seeded = try customers(accountID: accountID, on: db).map { customer in
            var customer = customer
            customer.secret = secrets[customer.id]
            return customer
        }
        return Seeded(accountID: accountID, connectionID: connection.id, customers: seeded, apiClient: client)
    }

    /// Points the demo account's connection at the simulator of this run. Only the demo account's own
    /// connection is changed; returns its id.
    static func refresh(accountID: Int64, access: SimulatorAccess, on db: isolated PostgresConnection) throws -> Int64 {
        try lock(on: db)
        let rows = try db.query("""
            UPDATE store_connections SET api_base_url = $3, trusted_roots_pem = $4, api_key_id = $5, api_issuer_id = $6,
                api_private_key = $7
            WHERE account_id = $1 AND store = 'apple' AND app_identifier = $2 RETURNING id
            """, [accountID, bundleID, access.baseURL, access.rootPEM, keyID, access.issuerID, access.privateKeyPEM])
        guard let id: Int64 = try rows.first?.decode(0) else {
            throw DemoError(.incompleteAccount, "the demo account \(accountID) has no App Store connection for \(bundleID); "
                + "the demo only configures a database without accounts")
        }
        return id
    }

    /// Customers of the account with their active account tokens, in the order the demo created them.
    static func customers(accountID: Int64, on db: isolated PostgresConnection) throws -> [Customer] {
        try db.query("""
            SELECT c.name, t.token::text, c.id::text FROM customers c
            JOIN account_tokens t ON t.customer_id = c.id AND t.status = 'active'
            WHERE c.account_id = $1 ORDER BY c.created_at, c.name
            """, [accountID]).compactMap { row in
            guard let token = UUID(uuidString: try row.decode(1)) else { return nil }
            return Customer(id: try row.decode(2), name: try row.decode(0), token: token)
        }
    }

    private static func lock(on db: isolated PostgresConnection) throws {
        _ = try db.query("SELECT pg_advisory_xact_lock($1)", [Int64(0x5354_4F52_4544_454D)])  // "STOREDEM"
    }
}
