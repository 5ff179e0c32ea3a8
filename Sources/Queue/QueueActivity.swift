import Foundation
import Postgres

/// What went through the queue hour by hour, from what the database keeps anyway: notifications recorded
/// (`notification_receipts`, seven days of them, read through their arrival index) and jobs that gave up
/// (`dead_letters`). On-call sees a wave of dead letters, or notifications stopping, without a metrics store.
public struct QueueActivity: Sendable {
    public struct Hour: Sendable, Equatable {
        /// The hour's start.
        public let hour: Date
        public let notifications: Int
        public let deadLetters: Int
    }

    /// Oldest first, every hour present (zero when nothing happened), the current one last.
    public let hours: [Hour]

    public static func read(hours count: Int, on db: isolated PostgresConnection) throws -> QueueActivity {
        let rows = try db.query("""
            WITH h AS (
                SELECT generate_series(date_trunc('hour', now()) - ($1::int - 1) * interval '1 hour', date_trunc('hour', now()),
                                       interval '1 hour') AS hour
            ),
            n AS (
                SELECT date_trunc('hour', received_at) AS hour, count(*) AS c FROM notification_receipts
                WHERE received_at >= date_trunc('hour', now()) - ($1::int - 1) * interval '1 hour' GROUP BY 1
            ),
            d AS (
                SELECT date_trunc('hour', dead_at) AS hour, count(*) AS c FROM dead_letters
                WHERE dead_at >= date_trunc('hour', now()) - ($1::int - 1) * interval '1 hour' GROUP BY 1
            )
            SELECT h.hour, coalesce(n.c, 0), coalesce(d.c, 0) FROM h LEFT JOIN n USING (hour) LEFT JOIN d USING (hour)
            ORDER BY h.hour
            """, [count])
        return QueueActivity(hours: try rows.map { row in
            Hour(hour: try row.decode(0), notifications: try row.decode(1), deadLetters: try row.decode(2))
        })
    }
}
