import Foundation
import Postgres
import Queue
import TestSupport
import Testing

/// The queue's last hours, from the receipts and dead letters the database keeps: every hour present, the current
/// one last, older rows left out. Rows and reads share one transaction, whose `now()` stays put, so an hour turning
/// over during the test changes nothing.
@Suite struct QueueActivityTests {
    @Test func eachHourCountsItsNotificationsAndDeadLetters() async throws {
        try await TestDatabase.with { database in
            let (activity, current) = try await database.pool.transaction { db -> (QueueActivity, Date) in
                try db.query("""
                    INSERT INTO notification_receipts (store, scope, message_id, received_at)
                    SELECT 'apple', '', 'm' || g, date_trunc('hour', now()) - (g % 3) * interval '1 hour' + interval '1 second'
                    FROM generate_series(1, 9) g
                    UNION ALL SELECT 'apple', '', 'old', now() - interval '30 hours'
                    """)
                try db.query("""
                    INSERT INTO dead_letters (id, kind, payload, priority, max_attempts, attempts, errors, reason, job_created_at,
                                              dead_at)
                    VALUES (1, 'apple.notification', '{}', 0, 25, 25, '[]', 'r', now(), date_trunc('hour', now()) + interval '1 second'),
                           (2, 'apple.notification', '{}', 0, 25, 25, '[]', 'r', now(), date_trunc('hour', now()) - interval '59 minutes')
                    """)
                return (try QueueActivity.read(hours: 4, on: db), try db.query("SELECT date_trunc('hour', now())")[0].decode(0))
            }
            #expect(activity.hours.count == 4)
            #expect(activity.hours.map(\.notifications) == [0, 3, 3, 3])
            #expect(activity.hours.map(\.deadLetters) == [0, 0, 1, 1])
            #expect(activity.hours.last?.hour == current)
        }
    }
}
