import Accounts
import AppStore
import Mirror
import Postgres
import Queue

/// What the Apple handler reads before it fetches, in one round trip: the app's store connections, the dedup
/// receipt of the claimed `notificationUUID`, and the claimed lineage's history revision on each connection.
/// The last two are keyed by unverified claims, so they answer only for the very values the verified payload
/// then names; any other value is read on its own, as if nothing had been read ahead.
struct AppleNotificationReads: Sendable {
    let connections: [StoreConnection]
    private let claims: NotificationRouting
    private let seen: Bool
    /// Connection id → the claimed lineage's stored revision, for the connections that have the lineage.
    private let revisions: [Int64: String?]

    /// - Parameter reads: sends the three reads with other jobs' (see `JobContext.reads`).
    static func read(accountID: Int64, claims: NotificationRouting, reads: PostgresReadBatcher) async throws -> Self {
        let (connections, receipt, revisions) = try await reads.query(
            StoreConnections.finding(accountID: accountID, store: .apple, appIdentifier: claims.bundleID),
            NotificationReceipts.looking(store: "apple", scope: ReceiptScope.apple, messageID: claims.notificationUUID ?? ""),
            Purchases.storedCursors(accountID: accountID, store: .apple, appIdentifier: claims.bundleID,
                                    lineage: claims.lineage ?? ""))
        return Self(connections: connections, claims: claims, seen: receipt != nil, revisions: revisions)
    }

    /// Whether `uuid` was processed within the dedup window.
    func alreadyProcessed(_ uuid: String, pool: PostgresPool) async throws -> Bool {
        if uuid == claims.notificationUUID { return seen }
        return try await pool.query(NotificationReceipts.looking(store: "apple", scope: ReceiptScope.apple, messageID: uuid)) != nil
    }

    /// The history revision stored for `lineage` on `connectionID`, if any.
    func revision(connectionID: Int64, lineage: String, pool: PostgresPool) async throws -> String? {
        if lineage == claims.lineage { return revisions[connectionID] ?? nil }
        return try await pool.query(Purchases.storedCursor(connectionID: connectionID, lineage: lineage))
    }
}
