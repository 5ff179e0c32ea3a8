import Foundation
import Postgres
import Testing
import TestSupport

/// Ingest and the worker logged in as members of `storesync_ingest` and `storesync_worker` only: every read and
/// write a notification needs is granted to those roles, and no more is needed than production grants.
@Suite struct LeastPrivilegeTests {
    @Test func anAppleLifecycleNeedsNoMoreThanTheWorkerAndIngestRoles() async throws {
        var options = Pipeline.Options()
        options.leastPrivilege = true
        options.mappedProducts = ["pro.monthly"]
        try await Pipeline.with(options) { pipeline in
            let customer = try await pipeline.customer()
            let lineage = try await pipeline.simulator.subscribe(productId: "pro.monthly", price: 9_990, currency: "USD",
                                                                 appAccountToken: customer.token).originalTransactionId
            try await pipeline.simulator.renew(lineage)
            try await pipeline.simulator.refund(lineage)
            try await pipeline.settle()
            try await pipeline.simulator.reverseRefund(lineage)
            _ = try await pipeline.simulator.subscribe(productId: "pro.yearly", price: 99_990, currency: "USD")
            try await pipeline.settle()
            #expect(try await pipeline.subscription(lineage)?.state == "active")
            #expect(try await pipeline.invoices(lineage).count == 2)
            #expect(try await pipeline.refunds(lineage).map(\.reversed) == [true])
            let reasons = try await pipeline.deadLetterReasons()
            #expect(reasons.count == 1 && reasons.first?.contains("is not mapped") == true, "\(reasons)")
        }
    }

    @Test func aGooglePurchaseAndItsRefundNeedNoMoreThanTheWorkerAndIngestRoles() async throws {
        var options = Pipeline.Options.googleProduction
        options.leastPrivilege = true
        try await Pipeline.with(options) { pipeline in
            let play = try #require(pipeline.play)
            let customer = try await pipeline.customer()
            let token = try #require(try await pipeline.buyOnPlay(token: customer.token).purchaseToken)
            try await play.renew(token)
            try await play.refund(token, revoke: false)
            try await pipeline.settle()
            let lineage = try await pipeline.lineage(ofPlayToken: token)
            #expect(try await pipeline.invoices(lineage).count == 2)
            #expect(try await pipeline.refunds(lineage).count == 1)
            #expect(try await pipeline.deadLetterReasons().isEmpty)
            #expect(try await pipeline.count("SELECT count(*) FROM purchase_tokens WHERE acknowledged_at IS NOT NULL") == 1)
        }
    }

    /// Ingest verifies at receipt with what a connection trusts; it can read none of what a connection signs
    /// with, so the process facing the internet never holds a store API key.
    @Test("the ingest role reads a connection's roots and audiences, never its API credentials",
          arguments: ["api_key_id", "api_issuer_id", "api_private_key", "api_client_email", "api_token_uri", "api_base_url",
                      "consumption_refund_preference"])
    func ingestReadsNoStoreCredential(column: String) async throws {
        try await TestDatabase.with { database in
            let role = try await TestRole.create(memberOf: "storesync_ingest", for: database)
            let connection = try await PostgresConnection.connect(url: role.url)
            _ = try await connection.query("""
                SELECT id, account_id, store, app_identifier, app_apple_id, environment, trusted_roots_pem, push_audience,
                       push_service_account, push_jwks_url FROM store_connections
                """)
            let refused = await #expect(throws: PostgresError.self) {
                try await connection.query("SELECT \(column) FROM store_connections")
            }
            #expect(refused?.sqlState == "42501", "\(refused.map(String.init(describing:)) ?? "")")
            await connection.close()
            await role.drop()
        }
    }
}
