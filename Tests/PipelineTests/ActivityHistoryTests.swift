@testable import Console
import Foundation
import Postgres
import Queue
import TestSupport
import Testing

/// The queue page's hourly history counts the current hour (and the one before) on every read and keeps the older
/// hours it counted once: a day of receipts is not read again on every visit.
@Suite struct ActivityHistoryTests {
    @Test func onlyTheLastTwoHoursAreCountedAgain() async throws {
        try await TestDatabase.with { database in
            // A test that straddles an hour's turn sees its rows move between hours: it runs once more, and two turns
            // within seconds do not happen.
            for attempt in 1...2 {
                try await database.pool.query("DELETE FROM notification_receipts")
                let hourBefore = try await Self.currentHour(database)
                let history = ActivityHistory()
                try await Self.receipts(3, hoursAgo: 3, database)
                try await Self.receipts(2, hoursAgo: 0, database)
                let first = try await history.read(pool: database.pool)
                try await Self.receipts(5, hoursAgo: 3, database)
                try await Self.receipts(7, hoursAgo: 0, database)
                let second = try await history.read(pool: database.pool)
                guard try await Self.currentHour(database) == hourBefore else {
                    #expect(attempt == 1, "the hour turned twice while the test ran")
                    continue
                }
                #expect(first.count == ActivityHistory.hours)
                #expect(first.suffix(4).map(\.notifications) == [3, 0, 0, 2])
                #expect(second.suffix(4).map(\.notifications) == [3, 0, 0, 9], "the current hour recounted, three hours ago kept")
                #expect(second.map(\.hour) == first.map(\.hour))
                return
            }
        }
    }

    static func currentHour(_ database: TestDatabase) async throws -> Date {
        try await database.pool.query("SELECT date_trunc('hour', now())")[0].decode(0)
    }

    static func receipts(_ count: Int, hoursAgo: Int, _ database: TestDatabase) async throws {
        try await database.pool.query("""
            INSERT INTO notification_receipts (store, scope, message_id, received_at)
            SELECT 'apple', '', gen_random_uuid()::text, date_trunc('hour', now()) - $1 * interval '1 hour' + interval '1 second'
            FROM generate_series(1, $2)
            """, [hoursAgo, count])
    }
}
