import Accounts
import Foundation
import Mirror
import Postgres
import Queue
import StoreModel

/// Resync settings shared by the daily fan-out and `storesync sync`.
public struct ResyncSettings: Sendable {
    /// Expired or revoked lineages are still re-checked this long after their expiry, so billing-retry
    /// recoveries and refunds of recently ended purchases are caught.
    public var horizon: Duration = .seconds(60 * 86_400)
    /// The share of the store's published per-endpoint rate limit resync jobs are spread to use; the rest
    /// stays free for notifications (which also lease first: resyncs have a lower priority).
    public var rateShare: Double = 0.5

    public init() {}
}

/// Enqueues resync jobs for a connection's lineages, one per lineage, each due at its own moment so the
/// whole batch runs at the connection's resync rate — a million subscriptions spread over the day instead
/// of a burst that starves notifications and trips 429s.
public enum ResyncPlanner {
    public static let priority: Int16 = -10

    public static func jobKind(for store: Store) -> String { "\(store.rawValue).resync" }

    /// Resync jobs per second for the connection: its store's published per-endpoint limit (Apple 50/s in
    /// Production and 5/s in Sandbox; Google 3,000 queries/min per bucket) times `share`.
    public static func rate(for connection: StoreConnection, share: Double) -> Double {
        rate(store: connection.store, environment: connection.environment, share: share)
    }

    public static func rate(store: Store, environment: StoreEnvironment, share: Double) -> Double {
        let limit: Double = switch store {
        case .apple: environment == .production ? 50 : 5
        case .google: 50
        }
        return max(0.001, limit * share)
    }

    /// Enqueues one resync per live lineage (or just `lineage`) that has none of `batch` pending, the first due at
    /// `start` and the rest spaced at the connection's rate; `batch` names the run in the unique keys (`daily` for
    /// the daily run) so running it again adds nothing. Returns how many jobs were added.
    ///
    /// `start` nil means the database's `now()`, the clock the lease query compares `run_at` with: a start
    /// read off a host clock running behind would make the batch's first minutes all due at once, the burst
    /// the spacing is there to prevent.
    public static func enqueue(connection: StoreConnection, lineage: String? = nil, batch: String, reason: String,
                               start: Date? = nil, settings: ResyncSettings, priority: Int16 = priority,
                               on db: isolated PostgresConnection) throws -> Int {
        let spacingMicroseconds = Int64((1_000_000 / rate(for: connection, share: settings.rateShare)).rounded())
        let added = try db.query("""
            INSERT INTO jobs (kind, payload, priority, run_at, unique_key)
            SELECT $2::text, jsonb_build_object('connection_id', p.connection_id, 'lineage', p.lineage, 'reason', $3::text),
                   $4::smallint,
                   coalesce($5::timestamptz, now())
                       + (row_number() OVER (ORDER BY p.id) - 1) * ($6::bigint * interval '1 microsecond'),
                   'resync:' || $7::text || ':' || p.connection_id || ':' || md5(p.lineage)
            FROM store_purchases p
            WHERE p.connection_id = $1
              AND ($8::text IS NULL OR p.lineage = $8)
              AND NOT EXISTS (SELECT 1 FROM jobs j
                              WHERE j.unique_key = 'resync:' || $7::text || ':' || p.connection_id || ':' || md5(p.lineage))
              AND ($8::text IS NOT NULL OR p.store_state NOT IN ('expired', 'revoked') OR p.expires_at IS NULL
                   OR p.expires_at > now() - $9::bigint * interval '1 second')
            ON CONFLICT (unique_key) WHERE unique_key IS NOT NULL DO NOTHING
            """, [connection.id, jobKind(for: connection.store), reason, Int(priority), start, spacingMicroseconds, batch, lineage,
                  Int64(settings.horizon.components.seconds)]).affectedRows
        if added > 0 { _ = try db.query("SELECT pg_notify('storesync_jobs', 'resync')") }
        return added
    }
}

/// A resync job's payload.
struct ResyncTask: Codable, Sendable {
    /// A charge Google voided, which the resync must fetch and refund (Google's voided-purchases sweep): the
    /// listed `VoidedOrder` whole, so the refund keeps its time and Google's reason.
    struct Voided: Codable, Sendable {
        let order_id: String
        let voided_at_ms: Int64
        let refund_type: Int?
        let voided_quantity: Int?
        let reason: String?
    }

    let connection_id: Int64
    let lineage: String
    let reason: String?
    let voided: [Voided]?
}
