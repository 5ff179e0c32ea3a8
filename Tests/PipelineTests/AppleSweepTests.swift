import Accounts
import AppStore
import Crypto
import Foundation
import HTTP
import Postgres
import Queue
import Simulator
import StoreModel
import Testing

/// The notification-history sweep: what Apple failed to deliver is fetched and processed like a delivery,
/// once, and a sweep resumes from where it stopped.
@Suite struct AppleSweepTests {
    private func sweep(_ pipeline: Pipeline) async throws {
        _ = try await JobQueue(pool: pipeline.database.pool).enqueue(NewJob(
            kind: "apple.sweep", payload: #"{"connection_id":\#(pipeline.connection.id)}"#))
        try await pipeline.settle()
    }

    @Test func aNotificationAppleFailedToDeliverIsMirroredByTheSweepOnce() async throws {
        try await Pipeline.with { pipeline in
            let customer = try await pipeline.customer()
            try pipeline.simulator.dropNextNotifications(1)
            let buy = try await pipeline.simulator.subscribe(productId: "pro.monthly", price: 9_990, currency: "USD",
                                                             appAccountToken: customer.token)
            #expect(buy.notification?.delivery.outcome == .dropped)
            try await pipeline.settle()
            #expect(try await pipeline.purchase(buy.originalTransactionId) == nil)

            try await sweep(pipeline)
            #expect(try await pipeline.subscription(buy.originalTransactionId)?.state == "active")
            #expect(try await pipeline.receiptOutcome(buy.notification!.notificationUUID) == "mirrored")
            try await sweep(pipeline)
            #expect(try await pipeline.invoices(buy.originalTransactionId).count == 1)
            #expect(try await pipeline.count("SELECT count(*) FROM notification_receipts") == 1)
            #expect(try await pipeline.count("""
                SELECT count(*) FROM sweep_watermarks WHERE sweep = 'apple.notification-history' AND cursor IS NULL
                """) == 1)
        }
    }

    @Test func aSweepResumesFromItsSavedPage() async throws {
        try await Pipeline.with { pipeline in
            try pipeline.simulator.dropNextNotifications(25)
            for _ in 0..<25 {
                try await pipeline.simulator.subscribe(productId: "pro.monthly", price: 9_990, currency: "USD")
            }
            // Read the first page as a sweep would have before crashing, and save its cursor.
            let credentials = try await pipeline.database.pool.query(StoreCredentials.apple(of: pipeline.connection))
            let key = try PrivateKey(pem: try #require(credentials?.privateKeyPEM))
            let verifier = try SignedDataVerifier(roots: [pipeline.simulator.rootCertificate], bundleID: Pipeline.bundleID,
                                                  appAppleID: Pipeline.appAppleID, environment: .production)
            let http = try HTTPClient()
            let client = try AppStoreAPIClient(
                configuration: AppStoreAPIConfiguration(environment: .production, bundleID: Pipeline.bundleID,
                                                        keyID: "KEY123", issuerID: "issuer-1", privateKey: key,
                                                        baseURL: pipeline.simulator.baseURL),
                verifier: verifier, httpClient: http)
            let end = Date()
            let start = end.addingTimeInterval(-7 * 86_400)
            let first = try await client.notificationHistory(start: start, end: end, onlyFailures: true)
            await http.shutdown()
            #expect(first.signedPayloads.count == 20 && first.hasMore)
            let cursor = "\(Int64(end.timeIntervalSince1970 * 1000)):\(try #require(first.paginationToken))"
            try await pipeline.database.pool.query("""
                INSERT INTO sweep_watermarks (connection_id, sweep, watermark, cursor)
                VALUES ($1, 'apple.notification-history', $2, $3)
                """, [pipeline.connection.id, start, cursor])

            try await sweep(pipeline)
            #expect(try await pipeline.count("SELECT count(*) FROM notification_receipts") == 5)
            #expect(try await pipeline.count("SELECT count(*) FROM store_purchases") == 5)
        }
    }

    /// A saved page Apple no longer takes (4000014 here; an expired token or a start now too far back alike)
    /// would fail every later sweep: the window is read again from its start instead.
    @Test func aSavedPageAppleRefusesIsReadAgainFromTheWindowStart() async throws {
        try await Pipeline.with { pipeline in
            try pipeline.simulator.dropNextNotifications(3)
            for _ in 0..<3 {
                try await pipeline.simulator.subscribe(productId: "pro.monthly", price: 9_990, currency: "USD")
            }
            let end = Date()
            try await pipeline.database.pool.query("""
                INSERT INTO sweep_watermarks (connection_id, sweep, watermark, cursor)
                VALUES ($1, 'apple.notification-history', $2, $3)
                """, [pipeline.connection.id, end.addingTimeInterval(-86_400), "\(Int64(end.timeIntervalSince1970 * 1000)):bogus"])

            try await sweep(pipeline)
            #expect(try await pipeline.deadLetterReasons().isEmpty)
            #expect(try await pipeline.count("SELECT count(*) FROM store_purchases") == 3)
            #expect(try await pipeline.count("""
                SELECT count(*) FROM sweep_watermarks WHERE sweep = 'apple.notification-history' AND cursor IS NULL
                """) == 1)
        }
    }
}
