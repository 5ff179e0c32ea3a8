import Foundation
import Postgres
import Queue
import TestSupport
import Testing

/// Seven-day notification dedup: a message id is processed once within its store and scope, and old receipts
/// are purged in batches.
@Suite struct ReceiptsTests {
    /// One delivery's receipt key.
    struct Key: Sendable, Hashable {
        let store: String
        let scope: String
        let messageID: String
    }

    /// Deliveries recorded in order, and which of them record a receipt (the others are duplicates).
    struct Deliveries: Sendable, CustomTestStringConvertible {
        let name: String
        let keys: [Key]
        let recorded: [Bool]
        var testDescription: String { name }
    }

    static let tenantA = "17 projects/tenant-a/subscriptions/play-rtdn"
    static let tenantB = "42 projects/tenant-b/subscriptions/play-rtdn"
    static let uuid = "2b7e1f0a-9c8d-4e6f-8a1b-3c5d7e9f0a1b"

    @Test(arguments: [
        Deliveries(name: "one Pub/Sub messageId under two tenants' subscriptions is two notifications",
                   keys: [Key(store: "google", scope: tenantA, messageID: "1000000000000001"),
                          Key(store: "google", scope: tenantB, messageID: "1000000000000001")],
                   recorded: [true, true]),
        Deliveries(name: "a redelivery under the same subscription is a duplicate",
                   keys: [Key(store: "google", scope: tenantA, messageID: "1000000000000001"),
                          Key(store: "google", scope: tenantB, messageID: "1000000000000001"),
                          Key(store: "google", scope: tenantA, messageID: "1000000000000001")],
                   recorded: [true, true, false]),
        Deliveries(name: "an Apple notification delivered twice is a duplicate, unscoped",
                   keys: [Key(store: "apple", scope: "", messageID: uuid), Key(store: "apple", scope: "", messageID: uuid)],
                   recorded: [true, false]),
        Deliveries(name: "an Apple and a Google notification sharing an id are two notifications",
                   keys: [Key(store: "apple", scope: "", messageID: uuid), Key(store: "google", scope: tenantA, messageID: uuid)],
                   recorded: [true, true]),
    ])
    func aMessageIsRecordedOncePerStoreAndScope(_ deliveries: Deliveries) async throws {
        try await TestDatabase.with { database in
            var recorded: [Bool] = []
            for (index, key) in deliveries.keys.enumerated() {
                recorded.append(try await database.recordReceipt(store: key.store, scope: key.scope, messageID: key.messageID,
                                                                 jobID: Int64(index), outcome: "delivery \(index)"))
            }
            #expect(recorded == deliveries.recorded)
            // Each key's receipt is its first delivery's; a scope nothing was recorded under has none.
            for (index, key) in deliveries.keys.enumerated() where deliveries.keys.firstIndex(of: key) == index {
                let receipt = try await database.pool.transaction { connection in
                    try NotificationReceipts.lookup(store: key.store, scope: key.scope, messageID: key.messageID, on: connection)
                }
                #expect(receipt?.outcome == "delivery \(index)", "\(key)")
                let elsewhere = try await database.pool.transaction { connection in
                    try NotificationReceipts.lookup(store: key.store, scope: key.scope + " elsewhere", messageID: key.messageID,
                                        on: connection)
                }
                #expect(elsewhere == nil, "\(key)")
            }
        }
    }

    @Test func secondRecordOfAMessageIsRefused() async throws {
        try await TestDatabase.with { database in
            let received = Date().addingTimeInterval(-5)
            let first = try await database.recordReceipt(store: "apple", scope: "", messageID: "uuid-1", receivedAt: received,
                                                         jobID: 7, outcome: "applied")
            let second = try await database.recordReceipt(store: "apple", scope: "", messageID: "uuid-1", jobID: 8, outcome: "applied")
            let otherStore = try await database.recordReceipt(store: "google", scope: "", messageID: "uuid-1", jobID: 9,
                                                              outcome: "applied")
            #expect(first && !second && otherStore)
            let receipt = try await database.pool.transaction { connection in
                try NotificationReceipts.lookup(store: "apple", scope: "", messageID: "uuid-1", on: connection)
            }
            #expect(receipt?.outcome == "applied")
            #expect(abs((receipt?.receivedAt.timeIntervalSince(received) ?? 99)) < 0.001)
        }
    }

    @Test func purgeDeletesOnlyReceiptsOlderThanSevenDaysInBatches() async throws {
        try await TestDatabase.with { database in
            try await database.pool.query("""
                INSERT INTO notification_receipts (store, message_id, received_at)
                SELECT 'apple', 'old-' || i, now() - interval '8 days' FROM generate_series(1, 11) i
                """)
            try await database.pool.query("""
                INSERT INTO notification_receipts (store, message_id, received_at)
                SELECT 'google', 'recent-' || i, now() - interval '6 days' FROM generate_series(1, 3) i
                """)
            #expect(try await NotificationReceipts.purge(pool: database.pool, batchSize: 4) == 11)
            let left = try await database.pool.query("SELECT count(*) FROM notification_receipts")[0].decode(0, as: Int.self)
            #expect(left == 3)
            let expired = try await database.pool.transaction { connection in
                try NotificationReceipts.lookup(store: "apple", scope: "", messageID: "old-1", on: connection)
            }
            #expect(expired == nil)
        }
    }
}
