import Accounts
import Crypto
import Foundation
import Postgres
import StoreModel

/// What every database test of the tenancy records and the mirror starts from, in the test's own database: one
/// account with one store connection and one store product mapped to a plan price. Helpers go through `Catalog` and `AccountTokens`,
/// as the CLI does, never through hand-written rows.
public struct AccountFixture: Sendable {
    public static let product = "com.example.pro.monthly"
    public static let appIdentifier = "com.example.app"

    public let database: TestDatabase
    public let accountID: Int64
    public let connection: StoreConnection
    public let planPriceID: Int64

    public static func make(_ database: TestDatabase, store: Store = .apple, environment: StoreEnvironment = .production,
                            requireIssuedTokens: Bool = true, host: String = "billing.example.com") async throws -> AccountFixture {
        let (accountID, connection, planPriceID) = try await database.pool.transaction { db in
            let accountID: Int64 = try db.query("INSERT INTO accounts (host) VALUES ($1) RETURNING id", [host])[0].decode(0)
            var new = Catalog.NewConnection(accountID: accountID, store: store, appIdentifier: appIdentifier,
                                            environment: environment)
            new.requireIssuedTokens = requireIssuedTokens
            let connection = try Catalog.addConnection(new, on: db)
            let price = try Catalog.addPlanPrice(accountID: accountID, planCode: "pro", priceCode: "pro-monthly",
                                                 amount: Money(minorUnits: 999, currency: "USD"), on: db)
            try Catalog.mapProduct(connectionID: connection.id, productID: product, planPriceID: price, on: db)
            return (accountID, connection, price)
        }
        return AccountFixture(database: database, accountID: accountID, connection: connection, planPriceID: planPriceID)
    }

    public func addCustomer() async throws -> String {
        let accountID = accountID
        return try await database.pool.transaction { db in try Catalog.addCustomer(accountID: accountID, on: db) }
    }

    /// An issued account token of a new customer of this account.
    public func customerWithToken() async throws -> (customer: String, token: String) {
        let customer = try await addCustomer()
        return (customer, try await issueToken(for: customer).token)
    }

    public func issueToken(for customer: String, rotate: Bool = false) async throws -> AccountTokens.Issued {
        try await database.pool.transaction { db in
            try AccountTokens.issue(customerID: customer, rotate: rotate, sha256: { Digest.sha256($0) }, on: db)
        }
    }

    public func revoke(_ token: String) async throws -> Bool {
        try await database.pool.transaction { db in try AccountTokens.revoke(token: token, on: db) }
    }

    public func addPlanPrice(planCode: String, priceCode: String, minorUnits: Int64) async throws -> Int64 {
        let accountID = accountID
        return try await database.pool.transaction { db in
            try Catalog.addPlanPrice(accountID: accountID, planCode: planCode, priceCode: priceCode,
                                     amount: Money(minorUnits: minorUnits, currency: "USD"), on: db)
        }
    }

    public func map(_ productID: String, basePlanID: String? = nil, to planPriceID: Int64) async throws {
        let connectionID = connection.id
        try await database.pool.transaction { db in
            try Catalog.mapProduct(connectionID: connectionID, productID: productID, basePlanID: basePlanID,
                                   planPriceID: planPriceID, on: db)
        }
    }

    public func rows(_ sql: String, _ parameters: [any PostgresEncodable] = []) async throws -> PostgresRows {
        try await database.pool.query(sql, parameters)
    }

    public func count(_ sql: String, _ parameters: [any PostgresEncodable] = []) async throws -> Int {
        try await rows(sql, parameters)[0].decode(0)
    }
}
