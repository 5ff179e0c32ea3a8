import Foundation
import Accounts
import Postgres
import StoreModel
import TestSupport
import Testing

/// Setting up connections, plans, prices, product mappings and customers through `Catalog`.
@Suite struct CatalogTests {
    struct DefaultCase: Sendable, CustomTestStringConvertible {
        let createdAt: Date
        let explicit: Bool?
        let expected: Bool
        var testDescription: String { "created \(createdAt), setting \(explicit.map(String.init) ?? "default") → \(expected)" }
    }

    /// On by default for connections created from 2026-10-28T00:00:00Z; an explicit choice always wins.
    @Test(arguments: [
        DefaultCase(createdAt: Date(timeIntervalSince1970: 1_793_145_599), explicit: nil, expected: false),
        DefaultCase(createdAt: Date(timeIntervalSince1970: 1_793_145_600), explicit: nil, expected: true),
        DefaultCase(createdAt: Date(timeIntervalSince1970: 1_800_000_000), explicit: nil, expected: true),
        DefaultCase(createdAt: Date(timeIntervalSince1970: 1_800_000_000), explicit: false, expected: false),
        DefaultCase(createdAt: Date(timeIntervalSince1970: 1_700_000_000), explicit: true, expected: true),
    ])
    func requiringIssuedTokensDefaultsByTheCutOverDate(_ rule: DefaultCase) async throws {
        try await TestDatabase.with { database in
            let connection = try await database.pool.transaction { db in
                let accountID: Int64 = try db.query("INSERT INTO accounts (host) VALUES ('a.example.com') RETURNING id")[0]
                    .decode(0)
                var new = Catalog.NewConnection(accountID: accountID, store: .apple, appIdentifier: "com.example.app",
                                                environment: .production)
                new.requireIssuedTokens = rule.explicit
                return try Catalog.addConnection(new, now: rule.createdAt, on: db)
            }
            #expect(connection.requireIssuedTokens == rule.expected)
            let stored: Bool = try await database.pool.query(
                "SELECT require_issued_tokens FROM store_connections WHERE id = $1", [connection.id])[0].decode(0)
            #expect(stored == rule.expected)
        }
    }

    @Test func aConnectionReadsBackAsItWasAdded() async throws {
        try await TestDatabase.with { database in
            let fixture = try await AccountFixture.make(database, store: .google, environment: .sandbox)
            let accountID = fixture.accountID
            let apple = try await database.pool.transaction { db in
                var new = Catalog.NewConnection(accountID: accountID, store: .apple, appIdentifier: "com.example.app",
                                                environment: .production)
                new.appAppleID = 1_234_567_890
                new.requireIssuedTokens = false
                new.answerConsumptionRequests = true
                new.consumptionRefundPreference = "GRANT_PRORATED"
                new.apiKeyID = "KEY123"
                new.apiIssuerID = "57246542-96fe-1a63-e053-0824d011072a"
                new.apiBaseURL = "http://127.0.0.1:1/simulator"
                return try Catalog.addConnection(new, on: db)
            }
            #expect(apple.store == .apple && apple.environment == .production && apple.appAppleID == 1_234_567_890)
            #expect(!apple.requireIssuedTokens && apple.answerConsumptionRequests)
            #expect(apple.consumptionRefundPreference == "GRANT_PRORATED")
            let credentials = try await database.pool.query(StoreCredentials.apple(of: apple))
            #expect(credentials?.keyID == "KEY123")
            #expect(credentials?.baseURL == "http://127.0.0.1:1/simulator" && credentials?.privateKeyPEM == nil)
            let settings = try await database.pool.transaction { db in try ConnectionSettings.get(id: apple.id, on: db) }
            #expect(settings?.connection == apple && settings?.apiKeyID == "KEY123" && settings?.hasPrivateKey == false)

            let found = try await database.pool.transaction { db in
                (try StoreConnections.get(id: apple.id, on: db),
                 try StoreConnections.find(accountID: accountID, store: .apple, appIdentifier: "com.example.app", on: db),
                 try StoreConnections.list(on: db))
            }
            #expect(found.0 == apple)
            #expect(found.1 == [apple])
            #expect(found.2 == [fixture.connection, apple])
            let missing = try await database.pool.transaction { db in try StoreConnections.get(id: 999_999, on: db) }
            #expect(missing == nil)
        }
    }

    @Test func plansAndPricesAreFoundByCodeAndUpdatedInPlace() async throws {
        try await TestDatabase.with { database in
            let fixture = try await AccountFixture.make(database)
            let accountID = fixture.accountID
            let (monthly, annual, monthlyAgain) = try await database.pool.transaction { db in
                (try Catalog.addPlanPrice(accountID: accountID, planCode: "gold", priceCode: "gold-m",
                                          amount: Money(minorUnits: 499, currency: "EUR"), entitlements: ["pro", "sync"], on: db),
                 try Catalog.addPlanPrice(accountID: accountID, planCode: "gold", priceCode: "gold-y",
                                          amount: Money(minorUnits: 4_999, currency: "EUR"), period: "P1Y",
                                          entitlements: ["pro"], on: db),
                 try Catalog.addPlanPrice(accountID: accountID, planCode: "gold", priceCode: "gold-m",
                                          amount: Money(minorUnits: 599, currency: "EUR"), on: db))
            }
            #expect(monthly == monthlyAgain && monthly != annual)
            let prices = try await fixture.rows("""
                SELECT pp.code, pp.amount_minor, pp.currency, pp.period FROM plan_prices pp JOIN plans p ON p.id = pp.plan_id
                WHERE p.code = 'gold' ORDER BY pp.code
                """).map { try [$0.decode(0, as: String.self), $0.decode(1, as: String.self), $0.decode(2, as: String.self),
                                $0.decode(3, as: String.self)] }
            #expect(prices == [["gold-m", "599", "EUR", "P1M"], ["gold-y", "4999", "EUR", "P1Y"]])
            let entitlements = try await fixture.rows("""
                SELECT e.key FROM plan_entitlements pe JOIN entitlements e ON e.id = pe.entitlement_id
                JOIN plans p ON p.id = pe.plan_id WHERE p.code = 'gold' ORDER BY e.key
                """).map { try $0.decode(0, as: String.self) }
            #expect(entitlements == ["pro", "sync"])
        }
    }

    @Test func mappingAgainReplacesTheTarget() async throws {
        try await TestDatabase.with { database in
            let fixture = try await AccountFixture.make(database)
            let other = try await fixture.addPlanPrice(planCode: "premium", priceCode: "premium-m", minorUnits: 1_999)
            try await fixture.map(AccountFixture.product, to: other)
            let mappings = try await fixture.rows("SELECT plan_price_id, base_plan_id FROM product_mappings")
            #expect(mappings.count == 1)
            #expect(try mappings[0].decode(0, as: Int64.self) == other)
            #expect(try mappings[0].decode(1, as: String.self) == "")
        }
    }

    @Test func aPlanPriceOfAnotherAccountCannotBeMapped() async throws {
        try await TestDatabase.with { database in
            let fixture = try await AccountFixture.make(database)
            let other = try await AccountFixture.make(database, host: "other.example.com")
            let error = await #expect(throws: AccountsError.self) {
                try await fixture.map("com.example.stolen", to: other.planPriceID)
            }
            #expect(error?.code == .unknownConnection)
            let missing = await #expect(throws: AccountsError.self) {
                try await database.pool.transaction { db in
                    try Catalog.mapProduct(connectionID: 999_999, productID: "com.example.x", planPriceID: other.planPriceID,
                                           on: db)
                }
            }
            #expect(missing?.code == .unknownConnection)
            #expect(try await fixture.count("SELECT count(*) FROM product_mappings") == 2)
        }
    }

    @Test func customersGetUUIDsThatCanServeAsAccountTokens() async throws {
        try await TestDatabase.with { database in
            let fixture = try await AccountFixture.make(database)
            let accountID = fixture.accountID
            let id = try await database.pool.transaction { db in
                try Catalog.addCustomer(accountID: accountID, email: "ada@example.com", name: "Ada", on: db)
            }
            #expect(UUID(uuidString: id) != nil)
            let row = try await fixture.rows("SELECT account_id, email, name FROM customers WHERE id = $1::uuid", [id])[0]
            #expect(try row.decode(0, as: Int64.self) == accountID)
            #expect(try row.decode(1, as: String.self) == "ada@example.com" && row.decode(2, as: String.self) == "Ada")
        }
    }

    /// A store client knows its credentials are stale by the connection's revision alone: every change of the
    /// row moves it, credentials are read only at the revision the connection was read at, and a connection's
    /// credentials are only those of its own store.
    @Test func credentialsAreReadApartAndTheirRevisionMovesWithEveryChange() async throws {
        try await TestDatabase.with { database in
            let fixture = try await AccountFixture.make(database)
            let id = fixture.connection.id
            #expect(fixture.connection.settingsRevision == 1)
            #expect(try await database.pool.query(StoreCredentials.google(of: fixture.connection)) == nil)
            _ = try await database.pool.query("UPDATE store_connections SET api_private_key = 'PEM' WHERE id = $1", [id])
            let changed = try await database.pool.transaction { db in try StoreConnections.get(id: id, on: db) }
            #expect(try await database.pool.query(StoreCredentials.apple(of: fixture.connection)) == nil)
            let current = try #require(changed)
            #expect(current.settingsRevision == 2)
            #expect(try await database.pool.query(StoreCredentials.apple(of: current))?.privateKeyPEM == "PEM")
            _ = try await database.pool.query("UPDATE store_connections SET api_private_key = 'PEM' WHERE id = $1", [id])
            let unchanged = try await database.pool.transaction { db in try StoreConnections.get(id: id, on: db) }
            #expect(unchanged?.settingsRevision == 2, "an update that changes nothing keeps the revision")
            #expect(changed != fixture.connection)
        }
    }
}
