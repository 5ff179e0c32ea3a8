import Foundation
import Postgres

/// Seven-day dedup of store notifications (Apple `notificationUUID`, Pub/Sub `messageId`).
///
/// A receipt is written in the same transaction as the notification's effects and its job's completion,
/// so "processed" and "has a receipt" can never disagree. The unique key (store, scope, message id) makes a
/// concurrent second delivery wait for the first and then see it as a duplicate.
///
/// The scope is whatever the store's guarantee of uniqueness is relative to: a Pub/Sub `messageId` is unique
/// only within its topic, so two tenants' pushes may share one and must not be taken for each other; an
/// Apple `notificationUUID` is unique everywhere and needs none (''). Callers pass it every time, so no
/// reader can forget it and match another tenant's receipt.
public enum NotificationReceipts {
    /// How long a message id is remembered. Apple retries for about 3 days, Pub/Sub up to its 7-day retention.
    public static let window: Duration = .seconds(7 * 24 * 3600)

    /// The receipt for a message seen within the window, if any: a cheap check before doing any work.
    public static func lookup(store: String, scope: String, messageID: String,
                              on connection: isolated PostgresConnection) throws -> NotificationReceipt? {
        try connection.query(looking(store: store, scope: scope, messageID: messageID))
    }

    /// `lookup` as a query, to send with others in one round trip.
    public static func looking(store: String, scope: String, messageID: String) -> PostgresQuery<NotificationReceipt?> {
        PostgresQuery("""
            SELECT received_at, processed_at, outcome FROM notification_receipts
            WHERE store = $1 AND scope = $2 AND message_id = $3 AND received_at > now() - $4 * interval '1 millisecond'
            """, [store, scope, messageID, window.milliseconds]) { rows in
            try rows.first.map {
                NotificationReceipt(receivedAt: try $0.decode(0), processedAt: try $0.decodeOptional(1), outcome: try $0.decodeOptional(2))
            }
        }
    }

    /// Records that the message was processed with `outcome`. The insert travels with the transaction's next
    /// statement (or its end) rather than costing a round trip of its own: on the worker's hot path it goes out with
    /// the lineage lock. A message recorded already fails it with a unique violation (`isDuplicate`), which aborts
    /// what was sent with it, so the caller's effects are never written twice; rolled back to its savepoint, the job
    /// is the duplicate it turned out to be.
    public static func record(store: String, scope: String, messageID: String, receivedAt: Date, jobID: Int64?,
                              outcome: String, on connection: isolated PostgresConnection) throws {
        try connection.queryLater("""
            INSERT INTO notification_receipts (store, scope, message_id, received_at, processed_at, outcome, job_id)
            VALUES ($1, $2, $3, $4, now(), $5, $6)
            """, [store, scope, messageID, receivedAt, outcome, jobID])
    }

    /// Whether `error` is `record` finding the message recorded already (by a concurrent delivery that committed
    /// first, or within the same transaction).
    public static func isDuplicate(_ error: any Error) -> Bool {
        guard let error = error as? PostgresError else { return false }
        return error.code == .uniqueViolation && error.constraint == "notification_receipts_pkey"
    }

    /// Deletes receipts older than the window, `batchSize` rows per statement so a large backlog never
    /// holds long locks; returns how many were deleted.
    public static func purge(pool: PostgresPool, batchSize: Int = 5000) async throws -> Int {
        var total = 0
        while true {
            let deleted = try await pool.query("""
                DELETE FROM notification_receipts WHERE ctid = ANY(ARRAY(
                    SELECT ctid FROM notification_receipts
                    WHERE received_at < now() - $1 * interval '1 millisecond'
                    LIMIT $2))
                """, [window.milliseconds, batchSize]).affectedRows
            total += deleted
            if deleted < batchSize { return total }
        }
    }
}

/// A notification's dedup record: when it arrived and, once handled, when and how.
public struct NotificationReceipt: Sendable, Equatable {
    public let receivedAt: Date
    public let processedAt: Date?
    public let outcome: String?
}
