import Foundation
@testable import Ingest
import IngestJobs
import Postgres
@testable import Sync
import Testing
import TestSupport

/// A notification ingest answered 503 while its database was out of reach is mirrored minutes later, not at
/// Apple's next retry hours later: once the database is back, ingest hands the outage to the workers, which
/// sweep the App Store's notification history for what failed to arrive.
@Suite struct DatabaseOutageTests {
    @Test("a purchase refused during a database outage is mirrored from the notification history once the database is back")
    func refusedPurchaseIsSweptIn() async throws {
        try await Pipeline.with { pipeline in
            let customer = try await pipeline.customer()
            let lineage = try await pipeline.simulator.subscribe(productId: "pro.monthly", price: 9_990, currency: "USD",
                                                                 appAccountToken: customer.token).originalTransactionId
            try await pipeline.settle()
            #expect(try await pipeline.invoices(lineage).count == 1)

            let database = pipeline.database.name
            let admin = try await PostgresConnection.connect(url: TestDatabase.adminURL)
            try await admin.query("ALTER DATABASE \(database) ALLOW_CONNECTIONS false")
            try await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", [database])
            let bought = try await pipeline.simulator.subscribe(productId: "pro.monthly", price: 9_990, currency: "USD",
                                                                appAccountToken: customer.token)
            try await admin.query("ALTER DATABASE \(database) ALLOW_CONNECTIONS true")
            await admin.close()
            let refused = try #require(bought.notification)
            #expect(refused.delivery.httpStatus == 503)

            // Nothing is sent again: the simulator, unlike Apple, never retries; only the sweep can bring it in.
            try await eventually("the refused purchase to be mirrored through the outage sweep", timeout: .seconds(60)) {
                (try? await pipeline.invoices(bought.originalTransactionId).count) == 1
            }
            try await pipeline.settle()
            #expect(try await pipeline.receiptOutcome(refused.notificationUUID) == "mirrored")
            #expect(try await pipeline.count("SELECT count(*) FROM dead_letters") == 0)
        }
    }
}
