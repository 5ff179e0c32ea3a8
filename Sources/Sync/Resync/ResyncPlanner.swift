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
    /// Lineages the planner reads and queues per statement: a connection's million lineages then hold a worker's
    /// memory to one page, at a hundred round trips inside the fan-out's transaction.
    public var fanOutPage = 10_000

    public init() {}
}

/// Enqueues resync jobs for a connection's lineages, one per lineage, each due at its own moment so the
/// whole batch runs at the connection's resync rate — a million subscriptions spread over the day instead
/// of a burst that starves notifications and trips 429s.
public enum ResyncPlanner {
    public static let priority: Int16 = -10

    public static func jobKind(for store: Store) -> JobKind { store.jobs.resync }

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
        let spacing = Duration.microseconds(Int64((1_000_000 / rate(for: connection, share: settings.rateShare)).rounded()))
        return try enqueue(connection.store.jobs, connectionID: connection.id, lineage: lineage, batch: batch, reason: reason,
                           start: start, spacing: spacing, settings: settings, priority: priority, on: db)
    }

    /// The lineages to resync, a page at a time in the order they are spread, each with its unique key; each
    /// page's fan-out starts where the jobs already added end, so the pages make one spread. The transaction's
    /// `now()` is one instant, the start of every page alike.
    private static func enqueue<Kinds: StoreJobs>(_ kinds: Kinds.Type, connectionID: Int64, lineage: String?, batch: String,
                                                  reason: String, start: Date?, spacing: Duration, settings: ResyncSettings,
                                                  priority: Int16, on db: isolated PostgresConnection) throws -> Int {
        let first = try start ?? JobQueue.now(on: db)
        let step = Double(spacing.components.seconds) + Double(spacing.components.attoseconds) / 1e18
        var added = 0
        var after: Int64 = 0
        while true {
            let page = try Purchases.resyncCandidates(connectionID: connectionID, lineage: lineage, horizon: settings.horizon,
                                                      after: after, limit: settings.fanOutPage, on: db)
            added += try JobQueue.fanOut(page.map { candidate in
                (args: ResyncArgs<Kinds>(connectionID: connectionID, lineage: candidate.lineage, reason: reason),
                 uniqueKey: Optional("resync:\(batch):\(connectionID):\(candidate.digest)"))
            }, priority: priority, start: first.addingTimeInterval(Double(added) * step), spacing: spacing, on: db)
            guard page.count == settings.fanOutPage, let last = page.last else { return added }
            after = last.purchaseID
        }
    }
}
