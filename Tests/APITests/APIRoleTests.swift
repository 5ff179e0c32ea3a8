import Accounts
import Foundation
import Postgres
import TestSupport
import Testing

/// The grants of `storesync_api`, the role `serve` runs the API as: it reads what its endpoints answer and
/// writes the mirror as the worker does, but it never deletes from the mirror or the billing records, never
/// reads an account token's secret hash or a customer's personal data, and cannot touch the queue's payloads.
/// A breach of the API process therefore cannot erase revenue or harvest e-mail addresses.
///
/// (The role must read store credentials to call the stores, so `store_connections` is not among the refusals.)
@Suite struct APIRoleTests {
    /// Runs `body` on a connection logged in as a new member of `storesync_api`, in a database holding one
    /// account with a customer, an issued account token and a web subscription; the role is dropped after.
    static func asTheAPIRole(_ body: (PostgresConnection, _ customer: String, _ token: String) async throws -> Void)
        async throws
    {
        try await TestDatabase.with { database in
            let fixture = try await AccountFixture.make(database)
            let (customer, token) = try await fixture.customerWithToken()
            let accountID = fixture.accountID
            let price = fixture.planPriceID
            try await database.pool.transaction { db in
                _ = try db.query("""
                    INSERT INTO customer_subscriptions (account_id, customer_id, plan_price_id, source, status)
                    VALUES ($1, $2::uuid, $3, 'web', 'active')
                    """, [accountID, customer, price])
            }
            let role = try await TestRole.create(memberOf: "storesync_api", for: database)
            do {
                let connection = try await PostgresConnection.connect(url: role.url, applicationName: "storesync-api-role-tests")
                do {
                    try await body(connection, customer, token)
                } catch {
                    await connection.close()
                    throw error
                }
                await connection.close()
            } catch {
                await role.drop()
                throw error
            }
            await role.drop()
        }
    }

    /// Each statement the role must be refused, with why.
    @Test func theRoleIsRefusedWhatTheAPINeverDoes() async throws {
        let refused = [
            // Never deletes from the mirror or the books: registration re-syncs, it does not remove.
            "DELETE FROM store_purchases",
            "DELETE FROM invoices",
            "DELETE FROM customer_subscriptions",
            "DELETE FROM payments",
            "DELETE FROM refunds",
            "DELETE FROM consumption_usage",
            // An account token's secret hash is written once at issue and only read to authenticate an app; tokens
            // are revoked, not removed.
            "UPDATE account_tokens SET secret_sha256 = secret_sha256",
            "UPDATE account_tokens SET customer_id = customer_id",
            "DELETE FROM account_tokens",
            // A customer is an id of an account to the API: no e-mail, no name, no writes.
            "SELECT email FROM customers",
            "SELECT name FROM customers",
            "SELECT * FROM customers",
            "UPDATE customers SET account_id = account_id",
            "INSERT INTO customers (account_id) SELECT id FROM accounts",
            "DELETE FROM customers",
            // The configuration is read, never changed.
            "UPDATE accounts SET api_rate_limit = 1000000",
            "UPDATE plan_prices SET amount_minor = 0",
            "DELETE FROM product_mappings",
            // The queue: jobs are queued with the mirror's writes, never read or changed.
            "SELECT payload FROM jobs",
            "UPDATE jobs SET run_at = now()",
            "DELETE FROM jobs",
            // API clients are managed by the CLI.
            "SELECT name FROM api_clients",
            "UPDATE api_clients SET revoked_at = now()",
        ]
        try await Self.asTheAPIRole { connection, _, _ in
            for statement in refused {
                let error = await #expect(throws: PostgresError.self, "\(statement) was allowed") {
                    try await connection.query(statement)
                }
                #expect(error?.sqlState == "42501", "\(statement): \(error.map(String.init(describing:)) ?? "allowed")")
            }
        }
    }

    /// What the endpoints do need still works: a customer's id and account, a token's state, revoking it, and
    /// reading the mirror and the configuration entitlements come from.
    @Test func theRoleReadsWhatItsEndpointsAnswer() async throws {
        try await Self.asTheAPIRole { connection, customer, token in
            let customers = try await connection.query("SELECT id::text, account_id FROM customers")
            #expect(customers.count == 1)
            #expect(try customers.first?.decode(0, as: String.self) == customer)
            let tokens = try await connection.query("""
                SELECT token::text, account_id, customer_id::text, status, created_at, revoked_at FROM account_tokens
                """)
            #expect(try tokens.first?.decode(0, as: String.self) == token)
            #expect(try tokens.first?.decode(3, as: String.self) == "active")
            let hashes = try await connection.query("SELECT length(secret_sha256) FROM account_tokens WHERE token = $1::uuid",
                                                    [token])
            #expect(try hashes.first?.decode(0, as: Int.self) == 32, "the app endpoints compare the secret's hash")
            let revoked = try await connection.query("""
                UPDATE account_tokens SET status = 'revoked', revoked_at = now() WHERE token = $1::uuid RETURNING status
                """, [token])
            #expect(try revoked.first?.decode(0, as: String.self) == "revoked")
            let entitled = try await connection.query("""
                SELECT e.key FROM customer_subscriptions s JOIN plan_prices pp ON pp.id = s.plan_price_id
                JOIN plan_entitlements pe ON pe.plan_id = pp.plan_id JOIN entitlements e ON e.id = pe.entitlement_id
                WHERE s.customer_id = $1::uuid
                """, [customer])
            #expect(entitled.count == 0, "the fixture's plan grants no key; the read itself is what is allowed")
            _ = try await connection.query("SELECT count(*) FROM store_purchases, invoices, consumption_usage")
        }
    }
}
