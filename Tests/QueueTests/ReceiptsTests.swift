import Foundation
import Postgres
import Queue
import TestSupport
import Testing

/// Seven-day notification dedup: a message id is processed once, and old receipts are purged in batches.
@Suite struct ReceiptsTests {
    @Test func secondRecordOfAMessageIsRefused() async throws {
        try await TestDatabase.with { database in
            let received = Date().addingTimeInterval(-5)
            let first = try await database.pool.transaction { connection in
                try Receipts.record(store: "apple", messageID: "uuid-1", receivedAt: received, jobID: 7, outcome: "applied",
                                    on: connection)
            }
            let second = try await database.pool.transaction { connection in
                try Receipts.record(store: "apple", messageID: "uuid-1", receivedAt: Date(), jobID: 8, outcome: "applied",
                                    on: connection)
            }
            let otherStore = try await database.pool.transaction { connection in
                try Receipts.record(store: "google", messageID: "uuid-1", receivedAt: Date(), jobID: 9, outcome: "applied",
                                    on: connection)
            }
            #expect(first && !second && otherStore)
            let receipt = try await database.pool.transaction { connection in
                try Receipts.lookup(store: "apple", messageID: "uuid-1", on: connection)
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
            #expect(try await Receipts.purge(pool: database.pool, batchSize: 4) == 11)
            let left = try await database.pool.query("SELECT count(*) FROM notification_receipts")[0].decode(0, as: Int.self)
            #expect(left == 3)
            let expired = try await database.pool.transaction { connection in
                try Receipts.lookup(store: "apple", messageID: "old-1", on: connection)
            }
            #expect(expired == nil)
        }
    }
}
